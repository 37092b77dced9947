//! One running peregrine switch, built from its configuration: what `peregrine run`
//! starts, and what the demo, the study benchmark and the system tests start the same
//! way.
//!
//! - [`config`]: the TOML file and `run`'s flags, merged and checked into a
//!   [`config::RunConfig`];
//! - [`run`]: the [`run::Switch`] itself (ports, datapath, workers, agent, kernel tier,
//!   link monitor) and `peregrine run`'s main loop;
//! - [`live_ports`]: its ports while it runs (numbers, counter slots, ports added,
//!   removed and kept while interfaces come and go);
//! - [`fastpath`]: the in-kernel tier as the agent and the operator see it;
//! - [`state`]: the tables and ports saved at stop and restored at start.

#![forbid(unsafe_code)]

pub mod config;
pub mod fastpath;
pub mod live_ports;
pub mod run;
pub mod state;
