//! The OpenFlow agent: a sans-IO connection state machine, the authoritative flow, group,
//! meter and port state, and the translation of that state into datapath updates.
//!
//! Built so far: [`translate`], OpenFlow 1.3 matches, actions, instructions and flow-mods
//! to the datapath's compiled rules. The agent itself is the subject of issue 6. This
//! crate never forwards packets itself.

pub mod flows;
pub mod translate;
