//! One type per message concept for every OpenFlow version, the way Open vSwitch's
//! `ofputil_*` structures are, so that the agent, one printer and one JSON renderer
//! serve both versions.
//!
//! Each is the type both codecs decode into and encode from, with each version's layout
//! in its `decode`/`encode` (by a version argument, or for the types generic over a
//! version's match and list, by the match type's [`WireMatch::VERSION`]): the port
//! description and port-status (`port.rs`), the features reply (`features.rs`), port,
//! queue, table and aggregate counters (`counters.rs`), the queue configuration
//! (`queue.rs`), the packet-in (`packet_in.rs`), the packet-out (`packet_out.rs`), the
//! flow-mod (`flow_mod.rs`), the flow-stats entry (`flow_stats.rs`) and the flow-removed
//! (`flow_removed.rs`). [`FlowEntry`] is a view: a flow-stats entry of either version
//! with its match as OXM, for printing.
//!
//! Conventions, as in Open vSwitch: port numbers use the 32-bit (1.3) numbering (1.0's
//! reserved ports `0xfff8..` become `0xfffffff8..`); port config and state bits use the
//! 1.0 positions (the 1.3 set is a subset, except `BLOCKED`/`LIVE`, which keep their 1.3
//! bits 1 and 2 and do not collide with 1.0's STP state at bits 8-9); port features
//! use the 1.3 layout (1.0's media bits move up by four); speeds are in kbit/s (1.0
//! ports get them from their current/supported features).

pub(crate) mod counters;
pub(crate) mod features;
pub(crate) mod flow_mod;
pub(crate) mod flow_removed;
pub(crate) mod flow_stats;
pub(crate) mod packet_in;
pub(crate) mod packet_out;
pub(crate) mod port;
pub mod queue;
mod stats;

pub use counters::{
    port_stats_len, port_stats_prop, queue_stats_len, table_stats_len, OpticalPortStats, PortStats,
    PortStatsProp, QueueStats, TableStats, PORT_STATS_FIXED_LEN_14, QUEUE_STATS_FIXED_LEN_14,
};
pub use features::{cap, FeaturesReply, FEATURES_FIXED_LEN};
pub use flow_mod::FlowMod;
pub use flow_removed::{FlowRemoved, FlowRemovedReason, WireMatch};
pub use flow_stats::{FlowStats, WireActions, FLOW_STATS_FIXED_LEN, FLOW_STATS_FIXED_LEN_10};
pub use packet_in::{PacketIn, PacketInReason};
pub use packet_out::{PacketOut, WireAction};
pub use port::{
    features_from_v10, features_to_v10, port_len, port_prop_type, speed_kbps, Port, PortOptical,
    PortProp, PortReason, PortStatus, UndefinedBits,
};
pub use stats::{Stats, StatsBody};

use crate::instruction::Instruction;
use crate::match13::Match;
use crate::v10::port::port_to_v13;
use crate::v10::Action as A10;
use crate::wire::{Reader, Writer};
use crate::{OfpError, OFP10_VERSION};

/// What a flow does: 1.3 instructions or 1.0 actions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Actions {
    V13(Vec<Instruction>),
    V10(Vec<A10>),
}

impl Actions {
    /// The text after `actions=` in ovs-ofctl's output.
    pub fn format(&self) -> String {
        match self {
            Actions::V13(i) => crate::text::format_instructions(i),
            Actions::V10(a) => format_actions10(a),
        }
    }
}

/// One flow entry of a flow-stats reply of either version, for printing: its match as
/// OXM (a 1.0 match through [`crate::v10::match10::Match::to_oxm`]) and what it does as
/// [`Actions`].
pub type FlowEntry = FlowStats<Match, Actions>;

impl FlowEntry {
    pub fn from_v13(f: &crate::v13::multipart::FlowStats) -> FlowEntry {
        f.with(f.match_.clone(), Actions::V13(f.instructions.clone()))
    }

    pub fn from_v10(f: &crate::v10::stats::entries::FlowStats) -> FlowEntry {
        f.with(f.match_.to_oxm(), Actions::V10(f.instructions.clone()))
    }
}

/// Reads a port number in `version`'s width (1.0: 16 bits, renumbered into the 1.3
/// space by [`port_to_v13`](crate::v10::port::port_to_v13); later versions: 32 bits),
/// then skips to the end of its `field_len` bytes (the number and its padding).
pub(crate) fn read_port(version: u8, r: &mut Reader, field_len: usize) -> Result<u32, OfpError> {
    let (port, width) =
        if version == OFP10_VERSION { (port_to_v13(r.u16()?), 2) } else { (r.u32()?, 4) };
    r.skip(field_len - width)?;
    Ok(port)
}

/// Writes a port number in `version`'s width, then zeros to the end of its `field_len`
/// bytes. For 1.0, a number with no 1.0 form is written as `OFPP_NONE`.
pub(crate) fn write_port(version: u8, port: u32, w: &mut Writer, field_len: usize) {
    let width = if version == OFP10_VERSION {
        let p = crate::v10::port::port_from_v13(port).unwrap_or(crate::v10::port::ofpp::NONE);
        w.u16(p);
        2
    } else {
        w.u32(port);
        4
    };
    w.zeros(field_len - width);
}

/// Bytes of a port number on `version`'s wire.
pub(crate) fn port_width(version: u8) -> usize {
    if version == OFP10_VERSION {
        2
    } else {
        4
    }
}

/// A port number as ovs-ofctl prints it: reserved ports by name, others in decimal.
pub fn port_name(p: u32) -> String {
    match p {
        0xffff_fff7 => "UNSET".into(),
        0xffff_fff8 => "IN_PORT".into(),
        0xffff_fff9 => "TABLE".into(),
        0xffff_fffa => "NORMAL".into(),
        0xffff_fffb => "FLOOD".into(),
        0xffff_fffc => "ALL".into(),
        0xffff_fffd => "CONTROLLER".into(),
        0xffff_fffe => "LOCAL".into(),
        0xffff_ffff => "ANY".into(),
        n => n.to_string(),
    }
}

/// One 1.0 action as Open vSwitch prints it: `openflow`'s text form, but reserved ports
/// by [`port_name`] (`UNSET`, and the 32-bit number of an unnamed one) and vendor data
/// in full.
pub fn format_action10(a: &A10) -> String {
    use crate::v10::port::ofpp;
    match a {
        A10::Output { port, .. } if *port >= ofpp::MAX && *port != ofpp::CONTROLLER => {
            port_name(port_to_v13(*port))
        }
        A10::Enqueue { port, queue_id } => {
            format!("enqueue:{}:{queue_id}", port_name(port_to_v13(*port)))
        }
        A10::Vendor { vendor, data } => {
            let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
            format!("vendor({vendor:#x},data=0x{hex})")
        }
        other => crate::text::message::format_action10(other),
    }
}

/// A 1.0 action list (`drop` when empty).
pub fn format_actions10(actions: &[A10]) -> String {
    if actions.is_empty() {
        "drop".into()
    } else {
        actions.iter().map(format_action10).collect::<Vec<_>>().join(",")
    }
}

/// Splits an action or instruction list as printed (`a,b(c,d),e`) into its items, at
/// the commas outside parentheses.
pub fn split_top_level(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut cur = String::new();
    for ch in s.chars() {
        match ch {
            '(' => {
                depth += 1;
                cur.push(ch);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                cur.push(ch);
            }
            ',' if depth == 0 => out.push(std::mem::take(&mut cur)),
            _ => cur.push(ch),
        }
    }
    if !cur.is_empty() || !out.is_empty() {
        out.push(cur);
    }
    out
}

/// proptest helpers for the model types generic over a version's match and list.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;

    /// The wire bytes of a message part around a match and a list in `M`'s version:
    /// `fixed` with the match written `match10_at` bytes into it in 1.0 (whose match
    /// sits inside the fixed part) or after it in later versions, then the list. Strategies
    /// decode these from arbitrary `fixed` bytes, so that each field takes whatever the
    /// version's wire can carry.
    pub fn wire_with<M: WireMatch, A: WireActions>(
        fixed: &[u8],
        match10_at: usize,
        m: &M,
        list: &[A],
    ) -> Vec<u8> {
        let at = if M::VERSION == OFP10_VERSION { match10_at } else { fixed.len() };
        crate::wire::encoded(|w| {
            w.bytes(&fixed[..at]);
            m.encode(w);
            w.bytes(&fixed[at..]);
            A::encode_list(list, w);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v10_ports_get_speeds_and_moved_media_bits() {
        use crate::v10::port::port_features as f;
        use port::Wire;
        let p = Wire {
            port_no: 0xfffe,
            name: "br0".into(),
            features: [f::F_10GB_FD | f::COPPER, 0, f::F_1GB_FD | f::F_100MB_FD, 0],
            state: 1 | (2 << 8) | (1 << 4),
            config: 1,
            ..Wire::default()
        };
        let d = Port::from_wire(crate::OFP10_VERSION, p);
        assert_eq!(d.port_no, 0xffff_fffe);
        assert_eq!(d.curr, (1 << 6) | (1 << 11));
        assert_eq!(d.curr_speed, 10_000_000);
        assert_eq!(d.max_speed, 1_000_000);
        assert_eq!(d.state, 1 | (2 << 8), "unknown state bits dropped");
    }

    #[test]
    fn v10_actions_print_like_ovs() {
        use std::net::Ipv4Addr;
        let acts = vec![
            A10::Output { port: 2, max_len: 0 },
            A10::Output { port: 0xfffd, max_len: 128 },
            A10::Output { port: 0xfffe, max_len: 0 },
            A10::SetVlanVid(5),
            A10::StripVlan,
            A10::SetNwSrc(Ipv4Addr::new(10, 0, 0, 1)),
            A10::SetNwTos(8),
            A10::Enqueue { port: 1, queue_id: 2 },
        ];
        assert_eq!(
            format_actions10(&acts),
            "output:2,CONTROLLER:128,LOCAL,mod_vlan_vid:5,strip_vlan,mod_nw_src:10.0.0.1,mod_nw_tos:8,enqueue:1:2"
        );
        assert_eq!(format_actions10(&[]), "drop");
        // Where Open vSwitch's names differ from openflow's text form.
        let out = |port| A10::Output { port, max_len: 0 };
        assert_eq!(format_action10(&out(0xfff7)), "UNSET");
        assert_eq!(format_action10(&out(0xff00)), "4294967040");
        let enqueue = A10::Enqueue { port: 0xfff7, queue_id: 1 };
        assert_eq!(format_action10(&enqueue), "enqueue:UNSET:1");
        let vendor = A10::Vendor { vendor: 0x2320, data: vec![0xab; 100] };
        assert_eq!(format_action10(&vendor), format!("vendor(0x2320,data=0x{})", "ab".repeat(100)));
    }

    #[test]
    fn splits_at_top_level_commas() {
        assert_eq!(
            split_top_level("meter:1,write_actions(output:1,output:2),goto_table:3"),
            vec!["meter:1", "write_actions(output:1,output:2)", "goto_table:3"]
        );
        assert_eq!(split_top_level("drop"), vec!["drop"]);
        assert!(split_top_level("").is_empty());
    }

    #[test]
    fn reserved_port_names() {
        assert_eq!(port_name(0xffff_fffe), "LOCAL");
        assert_eq!(port_name(0xffff_ffff), "ANY");
        assert_eq!(port_name(7), "7");
    }
}
