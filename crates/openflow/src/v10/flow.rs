//! `OFPT_FLOW_MOD` and `OFPT_FLOW_REMOVED` of OpenFlow 1.0.
//!
//! Flow mod body: `ofp_match (40), cookie:u64, command:u16, idle_timeout:u16,
//! hard_timeout:u16, priority:u16, buffer_id:u32, out_port:u16, flags:u16`, then actions
//! to the end of the message (64 bytes before the actions).
//!
//! Flow removed body: `ofp_match (40), cookie:u64, priority:u16, reason:u8, pad[1],
//! duration_sec:u32, duration_nsec:u32, idle_timeout:u16, pad[2], packet_count:u64,
//! byte_count:u64` (80 bytes).

use super::action10::Action;
use super::match10::Match;
use crate::error::{ErrorKind, OfpError};

/// `OFP_NO_BUFFER` / the 1.0 "no buffer" id.
pub use crate::v13::flow_mod::OFP_NO_BUFFER as NO_BUFFER;

/// The flow-mod commands are the same in every version.
pub use crate::v13::flow_mod::FlowModCommand;

spec_table! {
    /// `ofp_flow_mod_flags` bits (1.0).
    pub mod flow_mod_flags: u16 as bits {
        SEND_FLOW_REM,
        CHECK_OVERLAP,
        /// Install into the emergency flow cache; such flows must have zero timeouts.
        EMERG,
    }
}

/// An `OFPT_FLOW_MOD` body over 1.0's match and actions: the flow-mod type of every
/// version ([`crate::model::FlowMod`]); `instructions` holds the actions.
pub type FlowMod = crate::model::FlowMod<Match, Action>;

impl FlowMod {
    /// Stateless checks: a known command (`OFPFMFC_BAD_COMMAND`), zero timeouts on an
    /// emergency flow (`OFPFMFC_BAD_EMERG_TIMEOUT`, expressed as
    /// `FLOW_MOD_FAILED_BAD_TIMEOUT`), and valid actions ([`Action::validate`]).
    pub fn validate(&self) -> Result<(), OfpError> {
        self.check_command()?;
        if self.flags & flow_mod_flags::EMERG != 0
            && (self.idle_timeout != 0 || self.hard_timeout != 0)
        {
            return Err(OfpError::new(
                ErrorKind::FLOW_MOD_FAILED_BAD_TIMEOUT,
                format!(
                    "emergency flow with idle timeout {} and hard timeout {}",
                    self.idle_timeout, self.hard_timeout
                ),
            ));
        }
        Action::validate_list(&self.instructions)
    }
}

pub use crate::model::FlowRemovedReason;

/// An `OFPT_FLOW_REMOVED` body over 1.0's match: the flow-removed type of every version
/// ([`crate::model::FlowRemoved`]; 80 bytes in 1.0).
pub type FlowRemoved = crate::model::FlowRemoved<Match>;

/// proptest strategies for flow mods and flow-removed bodies.
#[cfg(test)]
pub(crate) mod strategy {
    use super::super::action10::strategy::arb_actions;
    use super::super::match10::strategy::arb_match;
    use super::*;
    use proptest::prelude::*;

    pub fn arb_flow_mod() -> impl Strategy<Value = FlowMod> {
        crate::model::flow_mod::strategy::arb_flow_mod(
            crate::OFP10_VERSION,
            arb_match(),
            arb_actions(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::flow_removed::strategy::arb_flow_removed;
    use crate::v10::match10::strategy::arb_match;
    use crate::wire::assert_roundtrip;
    use proptest::prelude::*;

    roundtrip_tests! {
        flow_mod_roundtrip: strategy::arb_flow_mod() => FlowMod;
    }

    proptest! {

        #[test]
        fn flow_removed_roundtrip(f in arb_flow_removed(arb_match())) {
            let bytes = assert_roundtrip(&f, FlowRemoved::encode, FlowRemoved::decode);
            prop_assert_eq!(bytes.len(), 80);
        }
    }

    #[test]
    fn command_numbers() {
        for v in 0..10u16 {
            assert_eq!(FlowModCommand::from_u16(v).to_u16(), v);
        }
        assert_eq!(FlowModCommand::from_u16(3), FlowModCommand::Delete);
        assert_eq!(FlowModCommand::from_u16(5), FlowModCommand::Unknown(5));
        for v in 0..5u8 {
            assert_eq!(FlowRemovedReason::from_u8(v).to_u8(), v);
        }
    }

    #[test]
    fn validate_command_and_timeouts() {
        let ok = FlowMod::default();
        assert!(ok.validate().is_ok());
        let bad = FlowMod { command: FlowModCommand::Unknown(5), ..FlowMod::default() };
        let e = bad.validate().unwrap_err();
        assert_eq!(e.kind, ErrorKind::FLOW_MOD_FAILED_BAD_COMMAND);
        assert_eq!(e.kind.to_v10(), (3, 4));
        let emerg =
            FlowMod { flags: flow_mod_flags::EMERG, hard_timeout: 10, ..FlowMod::default() };
        let e = emerg.validate().unwrap_err();
        assert_eq!(e.kind.to_v10(), (3, 3));
        let emerg_ok = FlowMod { flags: flow_mod_flags::EMERG, ..FlowMod::default() };
        assert!(emerg_ok.validate().is_ok());
        let bad_action =
            FlowMod { instructions: vec![Action::SetVlanPcp(9)], ..FlowMod::default() };
        assert_eq!(bad_action.validate().unwrap_err().kind, ErrorKind::BAD_ACTION_BAD_ARGUMENT);
    }
}
