//! `OFPT_FLOW_MOD` (OpenFlow 1.3): add, modify or delete flow entries.
//!
//! Wire form: header, `cookie:u64, cookie_mask:u64, table_id:u8, command:u8,
//! idle_timeout:u16, hard_timeout:u16, priority:u16, buffer_id:u32, out_port:u32,
//! out_group:u32, flags:u16, pad[2]`, then an `ofp_match` and instructions to the end.
//!
//! Decoding checks lengths only (the match and instruction codecs report their own
//! error kinds); [`FlowMod::validate`] makes the stateless semantic checks a switch
//! applies before touching its tables.

use crate::error::{ErrorKind, OfpError};
use crate::instruction::Instruction;
use crate::match13::Match;

/// `OFP_NO_BUFFER`.
pub const OFP_NO_BUFFER: u32 = 0xffff_ffff;
/// `OFPTT_MAX` (defined with the goto-table instruction that checks it) and `OFPTT_ALL`.
pub use crate::instruction::OFPTT_MAX;
pub const OFPTT_ALL: u8 = 0xff;

wire_enum! {
    /// `ofp_flow_mod_command`, the same in every version: a u16 in 1.0, a u8 from 1.1
    /// on (where a number above 255 is written as 255, which no version defines).
    pub enum FlowModCommand: u16 as from_u16 / to_u16 {
        Add = 0,
        Modify = 1,
        ModifyStrict = 2,
        Delete = 3,
        DeleteStrict = 4,
    }
}

spec_table! {
    /// `ofp_flow_mod_flags` bits.
    pub mod flow_mod_flags: u16 as bits {
        SEND_FLOW_REM, CHECK_OVERLAP, RESET_COUNTS, NO_PKT_COUNTS, NO_BYT_COUNTS;
        pub const ALL: u16 = 0x1f;
    }
}

/// An `OFPT_FLOW_MOD` body over 1.3's match and instructions: the flow-mod type of
/// every version ([`crate::model::FlowMod`]).
pub type FlowMod = crate::model::FlowMod<Match, Instruction>;

/// Length of the fixed part after the header, before the match.
pub const FLOW_MOD_FIXED_LEN: usize = 40;

impl FlowMod {
    /// Stateless checks, in this order: the command (`OFPFMFC_BAD_COMMAND`), the flag
    /// bits (`OFPFMFC_BAD_FLAGS`), `OFPTT_ALL` used by anything but a delete
    /// (`OFPFMFC_BAD_TABLE_ID`), the match ([`Match::validate`]), and for adds and
    /// modifies the instructions ([`Instruction::validate_list`]); a delete's
    /// instructions are ignored by the switch, so they are not checked.
    pub fn validate(&self) -> Result<(), OfpError> {
        self.check_command()?;
        if self.flags & !flow_mod_flags::ALL != 0 {
            return Err(OfpError::new(
                ErrorKind::FLOW_MOD_FAILED_BAD_FLAGS,
                format!("flow-mod flags 0x{:04x} set undefined bits", self.flags),
            ));
        }
        if self.table_id == OFPTT_ALL && self.installs() {
            return Err(OfpError::new(
                ErrorKind::FLOW_MOD_FAILED_BAD_TABLE_ID,
                "OFPTT_ALL is only valid for delete commands",
            ));
        }
        self.match_.validate()?;
        if self.installs() {
            Instruction::validate_list(&self.instructions, self.table_id)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::Action;
    use crate::instruction::strategy::arb_instruction;
    use crate::match13::strategy::arb_match;
    use crate::model::flow_mod::strategy::arb_flow_mod;
    use crate::oxm::Oxm;
    use crate::wire::{encoded, Reader};
    use proptest::collection::vec;

    /// A flow mod built by hand from the 1.3.5 spec layout: add to table 0, priority
    /// 100, idle 30, send-flow-removed, match `in_port=1`, apply `output:2`.
    fn spec_bytes() -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&0x0102_0304_0506_0708u64.to_be_bytes()); // cookie
        b.extend_from_slice(&[0; 8]); // cookie_mask
        b.extend_from_slice(&[0, 0]); // table 0, OFPFC_ADD
        b.extend_from_slice(&[0, 30, 0, 0, 0, 100]); // idle 30, hard 0, priority 100
        b.extend_from_slice(&[0xff; 4]); // buffer_id OFP_NO_BUFFER
        b.extend_from_slice(&[0xff; 4]); // out_port OFPP_ANY
        b.extend_from_slice(&[0xff; 4]); // out_group OFPG_ANY
        b.extend_from_slice(&[0, 1, 0, 0]); // flags SEND_FLOW_REM, pad
                                            // ofp_match: OXM type, length 12, OXM_OF_IN_PORT = 1, 4 pad bytes.
        b.extend_from_slice(&[0, 1, 0, 12, 0x80, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 0]);
        // OFPIT_APPLY_ACTIONS, len 24, pad 4, OFPAT_OUTPUT len 16 port 2 max_len 0.
        b.extend_from_slice(&[0, 4, 0, 24, 0, 0, 0, 0]);
        b.extend_from_slice(&[0, 0, 0, 16, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0]);
        b
    }

    fn spec_flow_mod() -> FlowMod {
        FlowMod {
            cookie: 0x0102_0304_0506_0708,
            idle_timeout: 30,
            priority: 100,
            flags: flow_mod_flags::SEND_FLOW_REM,
            match_: Match { fields: vec![Oxm::InPort(1)] },
            instructions: vec![Instruction::ApplyActions(vec![Action::Output {
                port: 2,
                max_len: 0,
            }])],
            ..FlowMod::default()
        }
    }

    #[test]
    fn decodes_hand_built_spec_bytes() {
        let bytes = spec_bytes();
        let fm = FlowMod::decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(fm, spec_flow_mod());
        assert_eq!(encoded(|w| fm.encode(w)), bytes);
        assert!(fm.validate().is_ok());
    }

    /// 1.4's importance takes 1.3's two pad bytes after the flags: 1.4 reads and writes
    /// it; 1.3 ignores those bytes (importance 0) and writes zeros there.
    #[test]
    fn importance_is_1_4s() {
        use crate::header::{OFP13_VERSION, OFP14_VERSION};
        let mut bytes = spec_bytes();
        bytes[38..40].copy_from_slice(&[0, 55]);
        let fm = FlowMod::decode_version(OFP14_VERSION, &mut Reader::new(&bytes)).unwrap();
        assert_eq!(fm, FlowMod { importance: 55, ..spec_flow_mod() });
        assert_eq!(encoded(|w| fm.encode_version(OFP14_VERSION, w)), bytes);
        let fm13 = FlowMod::decode_version(OFP13_VERSION, &mut Reader::new(&bytes)).unwrap();
        assert_eq!(fm13, spec_flow_mod());
        assert_eq!(encoded(|w| fm.encode_version(OFP13_VERSION, w)), spec_bytes());
    }

    #[test]
    fn truncated_fixed_part() {
        let bytes = spec_bytes();
        for n in 0..FLOW_MOD_FIXED_LEN {
            let e = FlowMod::decode(&mut Reader::new(&bytes[..n])).unwrap_err();
            assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN, "cut at {n}");
        }
    }

    #[test]
    fn validate_errors() {
        let kind = |fm: FlowMod| fm.validate().unwrap_err().kind;
        assert_eq!(
            kind(FlowMod { command: FlowModCommand::Unknown(5), ..spec_flow_mod() }),
            ErrorKind::FLOW_MOD_FAILED_BAD_COMMAND
        );
        assert_eq!(
            kind(FlowMod { flags: 0x20, ..spec_flow_mod() }),
            ErrorKind::FLOW_MOD_FAILED_BAD_FLAGS
        );
        for command in [FlowModCommand::Add, FlowModCommand::Modify, FlowModCommand::ModifyStrict] {
            assert_eq!(
                kind(FlowMod { command, table_id: OFPTT_ALL, ..spec_flow_mod() }),
                ErrorKind::FLOW_MOD_FAILED_BAD_TABLE_ID
            );
        }
        for command in [FlowModCommand::Delete, FlowModCommand::DeleteStrict] {
            let fm = FlowMod { command, table_id: OFPTT_ALL, ..spec_flow_mod() };
            assert!(fm.validate().is_ok(), "{command:?}");
        }
        // The match is checked: IP_PROTO without ETH_TYPE lacks its prerequisite.
        let fm = FlowMod { match_: Match { fields: vec![Oxm::IpProto(6)] }, ..spec_flow_mod() };
        assert_eq!(kind(fm), ErrorKind::BAD_MATCH_BAD_PREREQ);
        // The instructions are checked against the table: goto must go forward.
        let fm = FlowMod {
            table_id: 3,
            instructions: vec![Instruction::GotoTable(2)],
            ..spec_flow_mod()
        };
        assert_eq!(kind(fm), ErrorKind::BAD_INSTRUCTION_BAD_TABLE_ID);
    }

    roundtrip_tests! {
        roundtrip: arb_flow_mod(crate::OFP13_VERSION, arb_match(), vec(arb_instruction(), 0..4)) => FlowMod;
    }

    proptest::proptest! {
        #[test]
        fn roundtrip_14(fm in arb_flow_mod(crate::OFP14_VERSION, arb_match(), vec(arb_instruction(), 0..4))) {
            crate::wire::assert_roundtrip_in(
                crate::OFP14_VERSION,
                &fm,
                FlowMod::encode_version,
                FlowMod::decode_version,
            );
        }
    }
}
