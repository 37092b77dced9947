//! The `peregrine` command line.

fn main() {}
