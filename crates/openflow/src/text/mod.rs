//! The ovs-ofctl text form: flows, matches, actions and instructions, groups and meters,
//! parsed from and printed to the syntax `ovs-ofctl` reads and writes.

pub mod message;
