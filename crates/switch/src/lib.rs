//! The OpenFlow agent: a sans-IO connection state machine, the authoritative flow, group,
//! meter and port state, and the translation of that state into datapath updates.
//!
//! Built so far:
//! - [`translate`]: OpenFlow 1.3 matches, actions, instructions and flow-mods to the
//!   datapath's compiled rules;
//! - [`flows`]: the authoritative flow tables with OpenFlow 1.3.5 flow-mod semantics
//!   (add/modify/delete, strict and not, overlap check, cookie and out-port filters,
//!   timeouts with an injected clock, flow-stats selection), sans-IO;
//! - [`conn`]: one controller connection's protocol state machine, sans-IO (version
//!   negotiation for 1.0 and 1.3, framing, error replies, echo and liveness, features
//!   and switch config; everything else handed to the agent as events, in order).
//!
//! - [`agent`]: the first piece of the agent, [`agent::FlowAgent`], which keeps the flow
//!   tables and the datapath in step (flow-mods, barrier publishing, timeouts with
//!   flow-removed, flow stats from the datapath's counters).
//!
//! The rest of the agent (groups, meters, ports, packet-in/out, roles, multipart) and its
//! tokio shell are the subject of issue 6.
//! This crate never forwards packets itself.

pub mod agent;
pub mod conn;
pub mod flows;
pub mod translate;
