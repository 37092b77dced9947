//! The OpenFlow agent: a sans-IO connection state machine, the authoritative flow, group,
//! meter and port state, and the translation of that state into datapath updates.
//!
//! Not built yet: this crate is the subject of issue 6. It never forwards packets itself.
