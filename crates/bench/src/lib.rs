//! The benchmark harness: namespace topologies, the traffic generator and sink, drivers
//! for the devices under test, experiments, JSON results and plots.
//!
//! Not built yet: this crate is the subject of issues 4 (`bench datapath`) and 7. The
//! switch never needs it at run time.
