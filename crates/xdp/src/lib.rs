//! The in-kernel fast tier: an XDP program with an exact-match cache map, its loader, and
//! the map sync that mirrors eligible datapath decisions into the kernel.
//!
//! Not built yet: this crate is the subject of issue 8. It only mirrors what `datapath`
//! decided; it never makes forwarding decisions of its own.
