//! Features replies and switch configuration (`show`, `get-config`).

use super::bit_names;
use crate::model::{cap, FeaturesReply};
use crate::OFP10_VERSION;

fn capability_name(bit: u32) -> Option<&'static str> {
    Some(match bit {
        cap::FLOW_STATS => "FLOW_STATS",
        cap::TABLE_STATS => "TABLE_STATS",
        cap::PORT_STATS => "PORT_STATS",
        cap::IP_REASM => "IP_REASM",
        cap::QUEUE_STATS => "QUEUE_STATS",
        cap::ARP_MATCH_IP => "ARP_MATCH_IP",
        cap::STP => "STP",
        cap::GROUP_STATS => "GROUP_STATS",
        cap::PORT_BLOCKED => "PORT_BLOCKED",
        _ => return None,
    })
}

/// Capability bits ([`cap`] numbering) as names.
pub fn capability_names(bits: u32) -> String {
    bit_names(bits, capability_name)
}

/// The names of a 1.0 action-type bitmap in Open vSwitch's order (its ofpact order).
pub fn actions10_names(bits: u32) -> String {
    const ORDER: [(u32, &str); 12] = [
        (0, "output"),
        (11, "enqueue"),
        (1, "set_vlan_vid"),
        (2, "set_vlan_pcp"),
        (3, "strip_vlan"),
        (4, "mod_dl_src"),
        (5, "mod_dl_dst"),
        (6, "mod_nw_src"),
        (7, "mod_nw_dst"),
        (8, "mod_nw_tos"),
        (9, "mod_tp_src"),
        (10, "mod_tp_dst"),
    ];
    super::ordered_bit_names(bits, &ORDER)
}

/// The body of a features reply of `version`, with the 1.0 action types and ports.
pub(super) fn features(f: &FeaturesReply, version: u8) -> String {
    let mut s =
        format!(" dpid:{:016x}\nn_tables:{}, n_buffers:{}", f.datapath_id, f.n_tables, f.n_buffers);
    if f.auxiliary_id != 0 {
        s.push_str(&format!(", auxiliary_id:{}", f.auxiliary_id));
    }
    s.push('\n');
    s.push_str(&format!("capabilities: {}\n", capability_names(f.capabilities)));
    if version == OFP10_VERSION {
        if f.actions != 0 {
            s.push_str(&format!("actions: {}\n", actions10_names(f.actions)));
        }
        s.push_str(&super::port::ports(&f.ports));
    }
    s
}

/// ` frags=normal miss_send_len=128`.
pub(super) fn config(flags: u16, miss_send_len: u16) -> String {
    let frags = match flags & 3 {
        0 => "normal",
        1 => "drop",
        2 => "reassemble",
        _ => "nx-match",
    };
    format!(" frags={frags} miss_send_len={miss_send_len}\n")
}
