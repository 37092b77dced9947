//! OpenFlow 1.0 controllers on the agent's OpenFlow 1.3 state: pure, sans-IO translation
//! of 1.0 requests into the 1.3 messages the agent acts on, and of the agent's 1.3
//! replies and asynchronous messages back into 1.0.
//!
//! Requests, 1.0 → 1.3:
//! - [`flow_mod_to_v13`]: a flow-mod with one apply-actions instruction, an ADD for
//!   table 0 and the other commands for every table (as Open vSwitch does), plus for
//!   MODIFY / MODIFY_STRICT the ADD the agent applies when the modify selected no entry
//!   (1.0 §4.6: such a modify acts like an add) — [`FlowModV13`];
//! - [`packet_out_to_v13`], [`port_mod_to_v13`], [`stats_request_to_v13`] (the agent
//!   answers aggregate and table stats itself, counting only the flows the 1.0 flow dump
//!   lists: [`flow_stats_to_v10`], [`add_to_v10_aggregate`], [`count_v10_flows`]).
//!
//! Replies and asynchronous messages, 1.3 → 1.0: [`packet_in_to_v10`],
//! [`flow_removed_to_v10`], [`port_status_to_v10`] / [`port_to_v10`] (ports and port
//! counters have one type for both versions, `openflow::model`: these only leave out
//! the ports 1.0 has no number for), [`stats_reply_to_v10`] (then [`split_stats_reply`]
//! to fit messages), and
//! [`error_to_v10`] (which reuses `openflow`'s [`ErrorKind::to_v10`] numbering, the one
//! the connection's error replies use).
//!
//! Matches ([`match_to_v13`], [`match_from_v13`], `flow_match.rs`) follow Open vSwitch:
//! a 1.0 field whose prerequisites the match does not pin (nw_src without
//! `dl_type=0x0800`, tp_src without `nw_proto` TCP/UDP/SCTP/ICMP) is ignored, not an error.
//! Actions (`actions.rs`) keep the exact 1.0 meaning, given what the rule's match (or a
//! packet-out's frame) says about the packet ([`PacketFacts`]); a VLAN, IP or transport
//! set whose effect the match leaves open becomes peregrine's experimenter action for it
//! (`conditional.rs`), which the datapath runs as Open vSwitch runs the 1.0 action;
//! nothing is approximated.
//!
//! Every function is total: anything one version can say and the other cannot is an
//! [`OfpError`] (for requests, the kind whose 1.0 number the switch answers with; for
//! replies and asynchronous messages, a reason not to send the message to a 1.0
//! controller), never a panic.
//!
//! Semantic decisions, each documented where it is made:
//! - an exact-match 1.0 flow (no wildcard bit set) gets priority 0xffff (1.0 §3.4: exact
//!   matches are always the highest priority; Open vSwitch does the same);
//! - a 1.0 ADD sets `OFPFF_RESET_COUNTS`: a replaced identical entry is "removed,
//!   including its counters" (1.0 §4.6); modifies keep counters;
//! - `OFPFF_EMERG` is refused as Open vSwitch does (no emergency flow cache):
//!   `OFPFMFC_BAD_EMERG_TIMEOUT` with timeouts, else `OFPFMFC_ALL_TABLES_FULL`;
//! - `OFPP_NONE` ↔ `OFPP_ANY`; 1.0 reserved ports `0xff00..` ↔ 1.3 `0xffffff00..`.

mod actions;
mod conditional;
mod errors;
mod flow_match;
mod flow_mod;
mod packet;
mod ports;
mod stats;

#[cfg(test)]
mod tests;

pub use actions::{actions_from_v13, actions_to_v13, instructions_from_v13, PacketFacts, Tag};
pub use conditional::{
    conditional_from_v13, conditional_to_datapath, conditional_to_v13, show_flow_stats_to_v13,
    PEREGRINE_EXPERIMENTER,
};
pub use errors::{error_msg_to_v10, error_to_v10};
pub use flow_match::{match_from_v13, match_to_v13};
pub use flow_mod::{flow_mod_to_v13, flow_removed_to_v10, FlowModV13};
pub use packet::{packet_in_to_v10, packet_out_to_v13};
pub use ports::{
    port_mod_to_v13, port_no_from_v13, port_no_to_v13, port_status_to_v10, port_to_v10,
};
pub use stats::{
    add_to_v10_aggregate, count_v10_flows, flow_request_to_v13, flow_stats_to_v10,
    split_stats_reply, stats_reply_to_v10, stats_request_to_v13, table_stats_to_v10,
    MAX_STATS_REPLY_BODY,
};

#[cfg(doc)]
use openflow::{ErrorKind, OfpError};
