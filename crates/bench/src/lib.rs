//! The benchmark harness: namespace topologies, the traffic generator and sink, drivers
//! for the devices under test, experiments, JSON results and plots.
//!
//! Built so far: [`workload`], the synthetic rule sets and traffic of the datapath
//! benchmark (issue 4). The switch never needs this crate at run time.

pub mod blast;
pub mod datapath_bench;
pub mod method;
pub mod topo;
pub mod workload;
