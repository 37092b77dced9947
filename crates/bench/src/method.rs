//! The measurement method of the study: the pure logic every experiment shares, kept
//! apart from traffic and namespaces so that it can be unit-tested with recorded input.
//!
//! - [`stats`]: summaries of repeated runs (median/min/max), loss ratios, Jain's
//!   fairness index.
//! - [`search`]: the RFC 2544 zero-loss throughput search, driven by a trial closure.
//! - [`rate`]: the generator's send schedule (batches at a target packet rate, with a
//!   bounded catch-up after a stall); the clock is passed in.
//! - [`cpu`]: CPU accounting from `/proc` (per-CPU jiffies, per-process times, softirq
//!   counts), CPU time per forwarded packet and the detection of runs disturbed by
//!   foreign CPU load.
//! - [`pinning`]: which CPU runs what, stated in every result.
//! - [`awake`]: keeping idle CPUs polling instead of halting while latency is measured.

pub mod awake;
pub mod cpu;
pub mod pinning;
pub mod rate;
pub mod search;
pub mod stats;
