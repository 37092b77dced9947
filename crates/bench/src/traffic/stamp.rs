//! The stamp every generated frame carries, and the latency figures made from it.
//!
//! A stamp is 16 bytes at offset [`STAMP_OFFSET`] (42: right after Ethernet 14, IPv4 20
//! without options and UDP 8, so the start of the UDP payload), all big-endian:
//!
//! ```text
//! 42..46  magic "PgTs"
//! 46..48  stream index (u16)
//! 48..50  run tag (u16): a value of the run that sent it, so frames a device still
//!         held from an earlier run are told apart (counted as foreign)
//! 50..58  send time (u64 ns since the generator thread's origin)
//! ```
//!
//! A 64-byte frame has 60 bytes of buffer, so the stamp fits every frame size. The UDP
//! checksum stays 0 (no checksum, valid for IPv4), so stamping does not invalidate it.
//! [`read_stamp`] never panics: a short frame or a wrong magic is simply not a stamp.

/// Where the stamp starts in a frame.
pub const STAMP_OFFSET: usize = 42;
/// The stamp's length.
pub const STAMP_LEN: usize = 16;
/// The first four bytes of a stamp.
pub const MAGIC: [u8; 4] = *b"PgTs";
/// The shortest frame that can carry a stamp.
pub const MIN_FRAME: usize = STAMP_OFFSET + STAMP_LEN;

/// What a stamp says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    /// The index of the stream that sent the frame.
    pub stream: u16,
    /// The run that sent it.
    pub run: u16,
    /// When it was handed to the port, in ns since the generator's origin.
    pub sent_ns: u64,
}

/// Writes a stamp into `frame`; false (and nothing written) when the frame is shorter
/// than [`MIN_FRAME`].
pub fn write_stamp(frame: &mut [u8], stamp: Stamp) -> bool {
    let Some(s) = frame.get_mut(STAMP_OFFSET..MIN_FRAME) else {
        return false;
    };
    s[0..4].copy_from_slice(&MAGIC);
    s[4..6].copy_from_slice(&stamp.stream.to_be_bytes());
    s[6..8].copy_from_slice(&stamp.run.to_be_bytes());
    s[8..16].copy_from_slice(&stamp.sent_ns.to_be_bytes());
    true
}

/// The stamp of `frame`, if it has one (long enough, magic in place).
pub fn read_stamp(frame: &[u8]) -> Option<Stamp> {
    let s = frame.get(STAMP_OFFSET..MIN_FRAME)?;
    if s[0..4] != MAGIC {
        return None;
    }
    let mut t = [0u8; 8];
    t.copy_from_slice(&s[8..16]);
    Some(Stamp {
        stream: u16::from_be_bytes([s[4], s[5]]),
        run: u16::from_be_bytes([s[6], s[7]]),
        sent_ns: u64::from_be_bytes(t),
    })
}

/// One-way latency of the received frames of a run (send stamp to the sink's receive,
/// one clock). Invariant: `min_ns <= median_ns <= p99_ns <= max_ns`; `samples` counts
/// every measured frame, while the percentiles may come from a uniform sample of them
/// (see [`Reservoir`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Latency {
    pub samples: u64,
    pub min_ns: u64,
    /// Nearest-rank median: the `ceil(n/2)`-th smallest sample.
    pub median_ns: u64,
    /// Nearest-rank 99th percentile: the `ceil(0.99 n)`-th smallest sample.
    pub p99_ns: u64,
    pub max_ns: u64,
}

impl Latency {
    /// The figures of `samples` (sorted in place), `None` when there are none.
    pub fn of(samples: &mut [u64]) -> Option<Latency> {
        if samples.is_empty() {
            return None;
        }
        samples.sort_unstable();
        let n = samples.len();
        // Nearest rank: the smallest sample with at least p·n samples at or below it.
        let rank = |per_cent: usize| (n * per_cent).div_ceil(100).clamp(1, n) - 1;
        Some(Latency {
            samples: n as u64,
            min_ns: samples[0],
            median_ns: samples[rank(50)],
            p99_ns: samples[rank(99)],
            max_ns: samples[n - 1],
        })
    }
}

/// A bounded uniform sample of a stream of values (Vitter's algorithm R), with the
/// exact minimum and maximum and the count of everything offered. Invariant:
/// `kept.len() == min(seen, cap)`.
#[derive(Clone, Debug)]
pub struct Reservoir {
    kept: Vec<u64>,
    cap: usize,
    seen: u64,
    min: u64,
    max: u64,
    rng: crate::workload::Rng,
}

impl Reservoir {
    /// A reservoir of at most `cap` (at least 1) values.
    pub fn new(cap: usize) -> Reservoir {
        Reservoir {
            kept: Vec::new(),
            cap: cap.max(1),
            seen: 0,
            min: u64::MAX,
            max: 0,
            rng: crate::workload::Rng::new(0x5eed),
        }
    }

    /// Offers one value.
    #[inline]
    pub fn add(&mut self, v: u64) {
        self.seen += 1;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        if self.kept.len() < self.cap {
            self.kept.push(v);
        } else {
            let j = self.rng.below(self.seen);
            if let Some(slot) = self.kept.get_mut(j as usize) {
                *slot = v;
            }
        }
    }

    /// The latency figures: percentiles of the sample, exact count, minimum and maximum.
    pub fn summary(mut self) -> Option<Latency> {
        let mut l = Latency::of(&mut self.kept)?;
        l.samples = self.seen;
        l.min_ns = self.min;
        l.max_ns = self.max;
        Some(l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_round_trip_in_network_order() {
        let mut f = vec![0xeeu8; 60];
        let s = Stamp { stream: 0x0102, run: 0x0304, sent_ns: 0x0a0b_0c0d_0e0f_1011 };
        assert!(write_stamp(&mut f, s));
        assert_eq!(read_stamp(&f), Some(s));
        assert_eq!(&f[42..46], b"PgTs");
        assert_eq!(f[46..50], [1, 2, 3, 4]);
        assert_eq!(f[50..58], [0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11]);
        // Nothing outside the stamp changes.
        assert!(f[..42].iter().chain(&f[58..]).all(|&b| b == 0xee));
        let mut exact = vec![0u8; MIN_FRAME];
        assert!(write_stamp(&mut exact, s));
        assert_eq!(read_stamp(&exact), Some(s));
    }

    #[test]
    fn short_and_foreign_frames_have_no_stamp() {
        let mut short = vec![0u8; MIN_FRAME - 1];
        assert!(!write_stamp(&mut short, Stamp { stream: 0, run: 7, sent_ns: 1 }));
        assert!(short.iter().all(|&b| b == 0));
        let mut f = vec![0u8; 60];
        write_stamp(&mut f, Stamp { stream: 0, run: 7, sent_ns: 1 });
        assert_eq!(read_stamp(&f[..MIN_FRAME - 1]), None);
        assert_eq!(read_stamp(&[]), None);
        f[43] ^= 1;
        assert_eq!(read_stamp(&f), None);
        assert_eq!(read_stamp(&[0xffu8; 1514]), None);
    }

    #[test]
    fn latency_percentiles_are_nearest_rank() {
        assert_eq!(Latency::of(&mut []), None);
        let mut one = [7];
        assert_eq!(
            Latency::of(&mut one),
            Some(Latency { samples: 1, min_ns: 7, median_ns: 7, p99_ns: 7, max_ns: 7 })
        );
        // 1..=1000 shuffled: median 500, p99 990.
        let mut v: Vec<u64> = (1..=1000).map(|i| (i * 7919) % 1000 + 1).collect();
        let l = Latency::of(&mut v).unwrap();
        assert_eq!((l.samples, l.min_ns, l.max_ns), (1000, 1, 1000));
        assert_eq!((l.median_ns, l.p99_ns), (500, 990));
        // Four samples: median is the 2nd, p99 the 4th.
        let l = Latency::of(&mut [40, 10, 30, 20]).unwrap();
        assert_eq!((l.median_ns, l.p99_ns), (20, 40));
        // A 1 % tail of large values reaches p99 only when it is more than 1 %.
        let mut v = vec![100u64; 990];
        v.extend([1_000_000; 10]);
        assert_eq!(Latency::of(&mut v).unwrap().p99_ns, 100);
        let mut v = vec![100u64; 989];
        v.extend([1_000_000; 11]);
        assert_eq!(Latency::of(&mut v).unwrap().p99_ns, 1_000_000);
    }

    #[test]
    fn the_reservoir_is_bounded_and_keeps_exact_extremes() {
        let mut r = Reservoir::new(1000);
        for i in 0..100_000u64 {
            r.add(i);
        }
        assert_eq!(r.kept.len(), 1000);
        let l = r.summary().unwrap();
        assert_eq!((l.samples, l.min_ns, l.max_ns), (100_000, 0, 99_999));
        // A uniform sample of 0..100000: its median is near 50000.
        assert!((40_000..60_000).contains(&l.median_ns), "{l:?}");
        assert!(l.p99_ns > 95_000, "{l:?}");
        assert_eq!(Reservoir::new(10).summary(), None);
    }
}
