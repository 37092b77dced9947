//! The in-kernel fast tier: an XDP program with an exact-match flow map on every switch
//! port, its loader, and the map sync that mirrors the datapath's decisions into it.
//!
//! It only copies what `datapath` decided; it never makes forwarding decisions of its
//! own. The parts:
//!
//! - `bpf/fastpath.c`, [`layout`]: the program and the records it shares with user
//!   space; [`model`]: the program in Rust, to check a decision before it is installed;
//! - [`program`]: loading it, attaching it to interfaces, its maps and counters, and
//!   what it can redo of a decision ([`program::CAPABILITIES`], which the tier declares
//!   to the datapath);
//! - [`bands`]: the meter bands the program and the datapath's meters share;
//! - [`delivery`]: whether the kernel delivers what the program forwards, per port, and
//!   its count of what it dropped anyway;
//! - [`key`]: the program's key of a datapath flow key, and text forms for dumps;
//! - [`steering`]: the program as an AF_XDP port's XDP program (`ports`);
//! - [`tier`]: the datapath's `Mirror`: offers, publishes, harvests of hit counters.

#![deny(clippy::undocumented_unsafe_blocks)]

pub mod bands;
pub mod delivery;
pub mod handover;
pub mod key;
pub mod layout;
pub mod model;
pub mod program;
pub mod steering;
pub mod tier;

pub use program::{Attached, FastPath, FastPathError};
