//! The OpenFlow agent: a sans-IO connection state machine, the authoritative flow, group,
//! meter and port state, the translation of that state into datapath updates, and a thin
//! I/O shell around it.
//!
//! - [`translate`]: OpenFlow 1.3 matches, actions, instructions and flow-mods to the
//!   datapath's compiled rules;
//! - [`flows`]: the authoritative flow tables with OpenFlow 1.3.5 flow-mod semantics;
//! - [`groups`], [`meters`]: the group and meter tables with 1.3.5 group-mod and
//!   meter-mod semantics and errors;
//! - [`ports`]: the switch's ports as OpenFlow sees them (descriptions, port-mod, link
//!   state, statistics);
//! - [`port_spec`]: a port as the user writes it (interface, backend, number);
//! - [`conn`]: one connection's protocol state machine (negotiation, framing, errors,
//!   echo and liveness, features, switch config);
//! - [`v10`]: OpenFlow 1.0 requests onto the 1.3 state and 1.3 replies back to 1.0;
//! - [`agent`]: the agent itself, sans-IO: every connection, roles, asynchronous
//!   configuration, packet-in buffers and packet-out, multipart replies, barriers, fail
//!   mode, timeouts ([`agent::FlowAgent`] keeps the flow tables and the datapath in step);
//! - [`shell`]: the threads and sockets around the agent (controller channels,
//!   listeners, the management socket).
//!
//! This crate never forwards packets itself.

#![forbid(unsafe_code)]

pub mod agent;
pub mod conn;
pub mod fastpath;
pub mod flows;
pub mod groups;
pub mod meters;
pub mod metrics;
pub mod port_spec;
pub mod ports;
pub mod shell;
#[cfg(test)]
mod testing;
pub mod tls;
pub mod translate;
pub mod v10;
