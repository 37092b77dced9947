//! The in-kernel fast tier: an XDP program with an exact-match cache map, its loader, and
//! the map sync that mirrors eligible datapath decisions into the kernel.
//!
//! See the modules for the parts.

pub mod key;
pub mod layout;
pub mod model;
pub mod program;

pub use program::{Attached, FastPath, FastPathError};
