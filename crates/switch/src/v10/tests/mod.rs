//! Tests of the OpenFlow 1.0 ↔ 1.3 translation: matches over every wildcard combination,
//! each action both ways, flow-mod semantics, packet in/out, ports, statistics and the
//! error numbering. Randomised checks use a fixed-seed generator (the crate has no
//! proptest), so every run checks the same cases.

mod actions;
mod errors;
mod flow_match;
mod flow_mod;
mod packet;
mod ports;
mod stats;

/// A small deterministic generator (xorshift64*) for randomised table tests.
pub(super) struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn u8(&mut self) -> u8 {
        self.next() as u8
    }

    pub fn u16(&mut self) -> u16 {
        self.next() as u16
    }

    pub fn u32(&mut self) -> u32 {
        self.next() as u32
    }

    /// A value in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// One of `items` (not empty).
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}
