//! OpenFlow 1.0 forms of what the ovs-ofctl text parser (`openflow::text`, which speaks
//! OpenFlow 1.3) produces: matches, actions, flow-mods, flow-stats requests.
//!
//! The conversions follow what Open vSwitch sends for the same text over 1.0, and are
//! `openflow`'s (the match: `match_from_v13`; the actions: `v10::translate`), which the
//! agent uses too: `mod_vlan_vid` (a 1.3 push_vlan + set_field pair) becomes
//! `SET_VLAN_VID`, `strip_vlan` `STRIP_VLAN`, `enqueue` (set_queue + output) `ENQUEUE`,
//! `mod_nw_tos` `SET_NW_TOS`, set-fields of Ethernet/IPv4/TCP/UDP fields the matching
//! `SET_*` actions. Anything 1.0 cannot say — IPv6 or MPLS fields, masks other than IPv4 prefixes, a table other
//! than 0, cookie masks, groups, meters, instructions other than apply-actions, the 1.3
//! flow flags — is an error that names the item and says to use `-O OpenFlow13`
//! (Open vSwitch would switch to its Nicira extensions instead; a plain OpenFlow 1.0
//! client cannot).

use openflow::action::{port, Action, OFPG_ANY};
use openflow::instruction::Instruction;
use openflow::match13::Match;
use openflow::v10::match10::{self};
use openflow::v10::translate;
use openflow::v10::Action as A10;
use openflow::v13::flow_mod::{flow_mod_flags as ff, FlowModCommand, OFPTT_ALL};

const USE_13: &str = "(use -O OpenFlow13)";

/// A 1.3 port number in 1.0's 16 bits.
pub fn port10(p: u32) -> Result<u16, String> {
    translate::port10(p).map_err(|e| e.detail)
}

/// The 1.0 match equal to a 1.3 match: `openflow`'s conversion, which the agent uses
/// to show its flows to 1.0 controllers.
pub fn match10(m: &Match) -> Result<match10::Match, String> {
    match10::match_from_v13(m).map_err(|e| format!("{} {USE_13}", e.detail))
}

/// `openflow`'s reading of a 1.3 error for a 1.0 request, with the way out.
fn use_13(e: openflow::OfpError) -> String {
    format!("{} {USE_13}", e.detail)
}

/// The 1.0 actions equal to a 1.3 action list: `openflow`'s one reading of 1.3 actions
/// as 1.0 ones, which the agent uses to show its flows to 1.0 controllers.
pub fn actions10(acts: &[Action]) -> Result<Vec<A10>, String> {
    translate::actions_from_v13(acts).map_err(use_13)
}

/// The 1.0 actions equal to a 1.3 instruction list (one apply-actions, or none).
pub fn instructions10(insts: &[Instruction]) -> Result<Vec<A10>, String> {
    actions10(translate::apply_actions(insts).map_err(use_13)?)
}

/// A 1.0 flow-mod equal to a 1.3 one.
pub fn flow_mod10(fm: &openflow::v13::FlowMod) -> Result<openflow::v10::FlowMod, String> {
    let is_del = matches!(fm.command, FlowModCommand::Delete | FlowModCommand::DeleteStrict);
    if fm.table_id != 0 && !(is_del && fm.table_id == OFPTT_ALL) {
        return Err(format!("table={}: OpenFlow 1.0 has only table 0 {USE_13}", fm.table_id));
    }
    if fm.cookie_mask != 0 {
        return Err(format!(
            "cookie={:#x}/{:#x}: OpenFlow 1.0 cannot select flows by cookie {USE_13}",
            fm.cookie, fm.cookie_mask
        ));
    }
    if fm.out_group != OFPG_ANY {
        return Err(format!("out_group={}: OpenFlow 1.0 has no groups {USE_13}", fm.out_group));
    }
    if fm.flags & !(ff::SEND_FLOW_REM | ff::CHECK_OVERLAP) != 0 {
        return Err(format!(
            "reset_counts, no_packet_counts and no_byte_counts need OpenFlow 1.3 {USE_13}"
        ));
    }
    if fm.out_port != port::ANY {
        port10(fm.out_port)?;
    }
    // 1.0 has one table: the delete-from-all-tables above is its only kind of delete.
    Ok(openflow::v10::FlowMod {
        table_id: 0,
        ..fm.with(match10(&fm.match_)?, instructions10(&fm.instructions)?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use openflow::text::parse_flow_mod;
    use openflow::v10::match10::wildcards as w;
    use std::net::Ipv4Addr;

    fn fm(s: &str, c: FlowModCommand) -> openflow::v13::FlowMod {
        parse_flow_mod(s, c).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn flows_convert_like_ovs_sends_them() {
        let f = flow_mod10(&fm(
            "priority=100,in_port=1,tcp,nw_src=10.0.0.0/8,tp_dst=80,actions=mod_vlan_vid:5,mod_nw_tos:8,strip_vlan,set_queue:3,output:2,output:LOCAL",
            FlowModCommand::Add,
        ))
        .unwrap();
        assert_eq!(f.priority, 100);
        assert_eq!(f.match_.in_port, 1);
        assert_eq!(f.match_.dl_type, 0x0800);
        assert_eq!(f.match_.nw_proto, 6);
        assert_eq!(f.match_.nw_src, Ipv4Addr::new(10, 0, 0, 0));
        assert_eq!(f.match_.nw_src_prefix_len(), 8);
        assert_eq!(f.match_.tp_dst, 80);
        assert!(f.match_.is_wildcarded(w::TP_SRC));
        assert_eq!(
            f.instructions,
            vec![
                A10::SetVlanVid(5),
                A10::SetNwTos(8),
                A10::StripVlan,
                A10::Enqueue { port: 2, queue_id: 3 },
                A10::Output { port: 0xfffe, max_len: 0 },
            ]
        );
        // It prints back as the same flow.
        let back = f.match_.to_oxm();
        assert_eq!(
            openflow::text::format_match(&back),
            "tcp,in_port=1,nw_src=10.0.0.0/8,tp_dst=80"
        );
    }

    #[test]
    fn what_10_cannot_say_is_an_error() {
        for (s, c, want) in [
            ("table=1,actions=drop", FlowModCommand::Add, "only table 0"),
            ("ipv6,ipv6_src=::1,actions=drop", FlowModCommand::Add, "cannot match"),
            ("ip,nw_src=10.0.0.1/255.0.255.0,actions=drop", FlowModCommand::Add, "prefixes"),
            ("actions=goto_table:1", FlowModCommand::Add, "instructions need"),
            ("actions=group:1", FlowModCommand::Add, "no such action"),
            ("cookie=1/1", FlowModCommand::Delete, "by cookie"),
            ("reset_counts,actions=drop", FlowModCommand::Add, "reset_counts"),
            ("actions=output:70000", FlowModCommand::Add, "16 bits"),
        ] {
            let e = flow_mod10(&fm(s, c)).unwrap_err();
            assert!(e.contains(want), "{s}: {e}");
            assert!(e.contains("OpenFlow13") || e.contains("16 bits"), "{s}: {e}");
        }
        // An ethertype alone is fine; so is a delete over all tables.
        assert_eq!(
            flow_mod10(&fm("ipv6,actions=drop", FlowModCommand::Add)).unwrap().match_.dl_type,
            0x86dd
        );
        let d = flow_mod10(&fm("ip", FlowModCommand::Delete)).unwrap();
        let mut w = openflow::Writer::new();
        d.encode(&mut w);
        assert_eq!(w.buf[60..62], [0xff, 0xff], "out_port is OFPP_NONE on the 1.0 wire");
    }

    #[test]
    fn vlan_matches() {
        let m = match10(&openflow::text::parse_match("dl_vlan=7").unwrap()).unwrap();
        assert_eq!(m.dl_vlan, 7);
        let none = match10(&openflow::text::parse_match("vlan_tci=0").unwrap()).unwrap();
        assert_eq!(none.dl_vlan, 0xffff);
    }

    /// An error naming a 1.0 flow-mod made from the text prints that flow-mod as
    /// ovs-ofctl does.
    #[test]
    fn errors_print_the_10_request_they_name() {
        use openflow::text::print::frame;
        use openflow::v10::Message as M10;
        use openflow::Frame;
        let fm10 = flow_mod10(
            &openflow::text::parse_flow("check_overlap,priority=100,ip,actions=output:2").unwrap(),
        )
        .unwrap();
        let req10 = Frame::v10(6, M10::FlowMod(fm10)).encode().unwrap();
        let err10 = Frame::v10(
            6,
            M10::Error(openflow::v10::ErrorMsg { err_type: 3, code: 1, data: req10 }),
        );
        assert_eq!(
            frame(&err10, 2),
            "OFPT_ERROR (xid=0x6): OFPFMFC_OVERLAP\n\
             OFPT_FLOW_MOD (xid=0x6): ADD priority=100,ip check_overlap actions=output:2\n"
        );
    }
}
