//! Matches between OpenFlow 1.0 (`ofp_match`, wildcard bits) and 1.3 (OXM): both ways are
//! `openflow`'s, the one conversion the agent and `ctl` share.
//!
//! 1.0 → 1.3 is [`Match10::to_oxm`] (see its comment): `dl_vlan` `OFP_VLAN_NONE` is
//! `VLAN_VID` = `OFPVID_NONE`, another VID is `OFPVID_PRESENT | vid`; a PCP with the VID
//! wildcarded adds `VLAN_VID` = present/present; `nw_tos` is the DSCP (`nw_tos >> 2`, the
//! ECN bits are not matched, as in Open vSwitch); `nw_src`/`nw_dst` are prefixes of the
//! length the wildcard counts leave; `tp_src`/`tp_dst` are TCP, UDP or SCTP ports, or the
//! ICMP type and code (low byte). Fields whose prerequisites the match does not pin are
//! ignored, as Open vSwitch ignores them: network fields need `dl_type` IPv4 or ARP,
//! transport fields `nw_proto` TCP/UDP/SCTP/ICMP with IPv4.
//!
//! 1.3 → 1.0 is [`match_from_v13`]: the inverse on everything 1.0 can express, in the
//! canonical 1.0 form, and an `OFPET_BAD_MATCH` error for the rest.

use openflow::match13::Match as Match13;
use openflow::v10::match10::Match as Match10;

pub use openflow::v10::match10::match_from_v13;

/// A 1.0 match as the 1.3 match that means the same ([`Match10::to_oxm`]).
pub fn match_to_v13(m: &Match10) -> Match13 {
    m.to_oxm()
}
