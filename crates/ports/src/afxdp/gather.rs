//! Gathering a received frame that the kernel split over several AF_XDP descriptors
//! (sockets bound with XDP_USE_SG: every descriptor but the last has XDP_PKT_CONTD).

use datapath::packet::Packet;

/// Longest frame gathered from several descriptors: a 64 KiB IP packet (the most GSO
/// makes without BIG TCP) with its link-layer headers. Longer chains are dropped.
pub(super) const MAX_GATHERED: usize = 65536 + 256;

/// Gathers one received frame from its descriptors' bytes: one descriptor, or a chain
/// whose descriptors but the last have XDP_PKT_CONTD. Holds the frame so far between
/// descriptors (and `recv` calls). Invariant: a frame handed out is at most
/// [`MAX_GATHERED`] bytes; a chain that would be longer, or that has a descriptor
/// outside the UMEM, is dropped whole when its last descriptor comes, and its packet
/// goes back to the pool.
#[derive(Debug, Default)]
pub(super) struct Gather {
    /// The frame so far (`None` before a frame's first descriptor, or once it is bad).
    frame: Option<Packet>,
    /// The frame being gathered is dropped at its last descriptor.
    bad: bool,
}

/// What one descriptor completed.
#[derive(Debug)]
pub(super) enum Gathered {
    /// The frame continues in the next descriptor.
    More,
    /// A whole frame.
    Frame(Packet),
    /// A frame dropped (too long, or a descriptor outside the UMEM).
    Dropped,
}

impl Gather {
    /// Takes one descriptor's bytes (`None`: it was not inside the UMEM), `last` if it
    /// ends its frame; buffers come from `pool`.
    pub(super) fn push(
        &mut self,
        bytes: Option<&[u8]>,
        last: bool,
        pool: &mut Vec<Packet>,
    ) -> Gathered {
        match (bytes, &mut self.frame) {
            _ if self.bad => {}
            (Some(b), None) => {
                let mut p = pool.pop().unwrap_or_default();
                p.refill(b);
                self.frame = Some(p);
            }
            (Some(b), Some(p)) if p.len() + b.len() <= MAX_GATHERED => p.extend_from_slice(b),
            _ => {
                self.bad = true;
                pool.extend(self.frame.take());
            }
        }
        if !last {
            return Gathered::More;
        }
        if std::mem::take(&mut self.bad) {
            return Gathered::Dropped;
        }
        match self.frame.take() {
            Some(p) => Gathered::Frame(p),
            None => Gathered::Dropped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame_of(g: Gathered) -> Vec<u8> {
        match g {
            Gathered::Frame(p) => p.data().to_vec(),
            other => panic!("expected a frame, got {other:?}"),
        }
    }

    #[test]
    fn chains_are_gathered_across_calls_and_bounded() {
        let mut g = Gather::default();
        let mut pool = vec![Packet::from_slice(&[9; 100])];
        // A single descriptor is a frame of its own, in a pooled buffer.
        assert_eq!(frame_of(g.push(Some(&[1, 2, 3]), true, &mut pool)), [1, 2, 3]);
        assert!(pool.is_empty());
        // A chain of three, as if split over two `recv` calls.
        assert!(matches!(g.push(Some(&[1; 3000]), false, &mut pool), Gathered::More));
        assert!(matches!(g.push(Some(&[2; 3000]), false, &mut pool), Gathered::More));
        let f = frame_of(g.push(Some(&[3; 10]), true, &mut pool));
        assert_eq!(f.len(), 6010);
        assert_eq!((f[0], f[3000], f[6009]), (1, 2, 3));

        // Longer than MAX_GATHERED: dropped at its end, the buffer back in the pool,
        // and the next frame is whole again.
        let piece = vec![7u8; 3840];
        for _ in 0..MAX_GATHERED / piece.len() + 2 {
            assert!(matches!(g.push(Some(&piece), false, &mut pool), Gathered::More));
        }
        assert!(matches!(g.push(Some(&[1]), true, &mut pool), Gathered::Dropped));
        assert_eq!(pool.len(), 1, "the dropped frame's buffer is reused");
        assert_eq!(frame_of(g.push(Some(&[5]), true, &mut pool)), [5]);

        // Exactly MAX_GATHERED bytes pass.
        let mut left = MAX_GATHERED;
        while left > piece.len() {
            assert!(matches!(g.push(Some(&piece), false, &mut pool), Gathered::More));
            left -= piece.len();
        }
        assert_eq!(frame_of(g.push(Some(&piece[..left]), true, &mut pool)).len(), MAX_GATHERED);

        // A descriptor outside the UMEM spoils its whole chain, wherever it is.
        assert!(matches!(g.push(Some(&[1]), false, &mut pool), Gathered::More));
        assert!(matches!(g.push(None, false, &mut pool), Gathered::More));
        assert!(matches!(g.push(Some(&[1]), true, &mut pool), Gathered::Dropped));
        assert!(matches!(g.push(None, true, &mut pool), Gathered::Dropped));
        assert_eq!(frame_of(g.push(Some(&[8, 8]), true, &mut pool)), [8, 8]);
        // An empty descriptor is an empty frame, not a panic.
        assert_eq!(frame_of(g.push(Some(&[]), true, &mut pool)), Vec::<u8>::new());
    }
}
