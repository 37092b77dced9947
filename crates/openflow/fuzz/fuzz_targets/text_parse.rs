//! Text parsing: any string either fails with a positioned error inside the input or
//! parses to a value whose printed form parses back to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use openflow::text;
use openflow::v13::flow_mod::FlowModCommand;
use openflow::v13::group_mod::GroupModCommand;
use openflow::v13::meter_mod::MeterModCommand;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    match text::parse_flow_mod(s, FlowModCommand::Add) {
        Ok(fm) => {
            let printed = text::format_flow_mod(&fm);
            let again = text::parse_flow_mod(&printed, FlowModCommand::Add)
                .unwrap_or_else(|e| panic!("printed flow `{printed}` does not parse: {e}"));
            assert_eq!(again, fm, "`{s}` -> `{printed}`");
        }
        Err(e) => assert!(e.pos <= s.len()),
    }
    for c in [FlowModCommand::Modify, FlowModCommand::DeleteStrict] {
        if let Err(e) = text::parse_flow_mod(s, c) {
            assert!(e.pos <= s.len());
        }
    }
    if let Ok(g) = text::parse_group_mod(s, GroupModCommand::Add) {
        let printed = text::format_group_mod(&g);
        let again = text::parse_group_mod(&printed, GroupModCommand::Add)
            .unwrap_or_else(|e| panic!("printed group `{printed}` does not parse: {e}"));
        assert_eq!(again, g);
    }
    if let Ok(m) = text::parse_meter_mod(s, MeterModCommand::Add) {
        let printed = text::format_meter_mod(&m);
        let again = text::parse_meter_mod(&printed, MeterModCommand::Add)
            .unwrap_or_else(|e| panic!("printed meter `{printed}` does not parse: {e}"));
        assert_eq!(again, m);
    }
});
