//! Compiled actions: what the pipeline executes, free of wire-format types.
//!
//! The agent translates OpenFlow actions into these. Port numbers use OpenFlow 1.3's
//! numbering, including its reserved ports (see [`port`]).

use crate::key::Field;

headers::spec_table! {
    /// OpenFlow 1.3 port numbers the datapath knows.
    pub mod port: u32 as numbers {
        MAX = 0xffff_ff00, IN_PORT = 0xffff_fff8, TABLE, NORMAL, FLOOD, ALL, CONTROLLER,
        LOCAL, ANY,
    }
}

/// One action on a packet.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Output to a port number (physical, or a reserved port: IN_PORT, FLOOD, ALL,
    /// LOCAL, NORMAL, TABLE). CONTROLLER uses [`Action::Controller`].
    Output(u32),
    /// Send to the controller, at most `max_len` bytes (0xffff: whole packet).
    Controller {
        max_len: u16,
    },
    /// Set a header field to a value (right-aligned, of the field's width). Checksums
    /// that cover the field are updated.
    SetField(Field, u128),
    PushVlan(u16),
    PopVlan,
    PushMpls(u16),
    PopMpls(u16),
    SetMplsTtl(u8),
    DecMplsTtl,
    SetNwTtl(u8),
    DecNwTtl,
    CopyTtlOut,
    CopyTtlIn,
    PushPbb(u16),
    PopPbb,
    SetQueue(u32),
    Group(u32),
    /// Set the VID (12 bits) of the outermost VLAN tag; an untagged frame first gets an
    /// 802.1Q tag with VID 0 and PCP 0. OpenFlow 1.0's `set_vlan_vid` where the rule does
    /// not say whether the frame is tagged (as Open vSwitch does it).
    ModVlanVid(u16),
    /// Set the PCP (3 bits) of the outermost VLAN tag; an untagged frame first gets an
    /// 802.1Q tag with VID 0 and PCP 0. OpenFlow 1.0's `set_vlan_pcp`, likewise.
    ModVlanPcp(u8),
    /// A set-field done only on packets that have the field's own header; others pass
    /// unchanged: IPv4 for ipv4_src/ipv4_dst (not ARP, whose addresses share the place),
    /// IPv4 or IPv6 for ip_dscp/ip_ecn, TCP, UDP or SCTP (not a fragment after the first)
    /// for tp_src/tp_dst; any other field as [`Action::SetField`]. OpenFlow 1.0's
    /// `set_nw_*` and `set_tp_*` where the rule leaves the protocol open (as Open vSwitch
    /// does them).
    SetFieldIfPresent(Field, u128),
}
