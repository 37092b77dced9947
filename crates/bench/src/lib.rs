//! The benchmark harness: namespace topologies, the traffic generator and sink, drivers
//! for the devices under test, experiments, JSON results and plots.
//!
//! - [`workload`], [`datapath_bench`]: the synthetic rule sets and traffic of the
//!   in-memory datapath benchmark;
//! - [`topo`]: namespace hosts on veth pairs; [`blast`]: the AF_XDP/AF_PACKET traffic
//!   source; [`traffic`]: the study's generator and sink (stamped, paced, flow-spread
//!   streams out of one or more ports, counted and timed at one sink port);
//! - [`dut`]: the devices under test other than peregrine (Linux bridge, Linux router,
//!   Open vSwitch userspace);
//! - [`method`]: summaries, loss and fairness, the RFC 2544 zero-loss search, the
//!   generator's pacing, CPU accounting from /proc and disturbance detection, pinning;
//! - [`report`]: the results document, the markdown report and the SVG plots;
//! - [`study`]: the experiments that put these together (`peregrine bench study`).
//!
//! The switch never needs this crate at run time.

#![forbid(unsafe_code)]

pub mod blast;
pub mod datapath_bench;
pub mod dut;
pub mod method;
pub mod report;
pub mod study;
pub mod topo;
pub mod traffic;
pub mod workload;
