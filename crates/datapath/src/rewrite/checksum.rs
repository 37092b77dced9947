//! Internet checksums (RFC 1071) updated incrementally (RFC 1624), and the SCTP CRC32c.
//!
//! A [`Delta`] is the one's-complement sum of `-old + new` over the 16-bit words that a
//! rewrite changed. Applying it to a stored checksum `HC` gives `~(~HC + ~m + m')`
//! (RFC 1624 equation 3), which equals a full recomputation bit for bit, including the
//! `0x0000`/`0xffff` choice. The same delta serves every checksum that covers the changed
//! words: an IPv4 address change adjusts the IPv4 header checksum and the TCP/UDP
//! pseudo-header checksum with one delta.

use headers::{sctp, SctpHeader};

/// Folds a wide one's-complement sum to 16 bits with end-around carry.
#[inline]
pub(crate) fn fold(mut acc: u64) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// One's-complement sum of big-endian 16-bit words; an odd last byte is padded with zero.
#[inline]
pub(crate) fn sum(bytes: &[u8]) -> u16 {
    let mut acc = 0u64;
    let mut words = bytes.chunks_exact(2);
    for w in &mut words {
        acc += u64::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [last] = words.remainder() {
        acc += u64::from(*last) << 8;
    }
    fold(acc)
}

/// A change to checksummed data, ready to apply to any checksum covering it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Delta(u64);

impl Delta {
    /// The change from word `old` to word `new`.
    #[cfg(test)]
    pub(crate) fn word(old: u16, new: u16) -> Delta {
        Delta(u64::from(!old) + u64::from(new))
    }

    /// The change from one run of words to another of the same length and alignment.
    #[cfg(test)]
    pub(crate) fn words(old: &[u8], new: &[u8]) -> Delta {
        Delta(u64::from(!sum(old)) + u64::from(sum(new)))
    }

    /// The new value of a stored checksum `hc`.
    #[inline]
    pub(crate) fn apply(self, hc: u16) -> u16 {
        !fold(u64::from(!hc) + self.0)
    }
}

/// Writes `new` at `off` of `data` and returns the checksum delta, counting 16-bit words
/// from `base` (the start of the checksummed region, or any offset of the same parity).
/// `None`, with nothing written, if `new` does not fit.
#[inline]
pub(crate) fn write(data: &mut [u8], base: usize, off: usize, new: &[u8]) -> Option<Delta> {
    let end = off.checked_add(new.len())?;
    if end > data.len() {
        return None;
    }
    let lo = off - ((off ^ base) & 1);
    let hi = (end + ((end ^ base) & 1)).min(data.len());
    let before = sum(data.get(lo..hi)?);
    data.get_mut(off..end)?.copy_from_slice(new);
    let after = sum(data.get(lo..hi)?);
    Some(Delta(u64::from(!before) + u64::from(after)))
}

/// Applies `d` to the checksum stored at `at`; does nothing if it is out of range.
#[inline]
pub(crate) fn update(data: &mut [u8], at: usize, d: Delta) {
    if let Some(b) = data.get_mut(at..at + 2) {
        let v = d.apply(u16::from_be_bytes([b[0], b[1]]));
        b.copy_from_slice(&v.to_be_bytes());
    }
}

/// Applies `d` to a partial checksum at `at`: a field that holds the (uncomplemented)
/// sum of the pseudo-header, as checksum offload leaves it, which moves with the change
/// itself: `m + (-old + new)`.
#[inline]
pub(crate) fn update_partial(data: &mut [u8], at: usize, d: Delta) {
    if let Some(b) = data.get_mut(at..at + 2) {
        let v = fold(u64::from(u16::from_be_bytes([b[0], b[1]])) + d.0);
        b.copy_from_slice(&v.to_be_bytes());
    }
}

/// Applies `d` to a UDP checksum at `at`: zero (no checksum) stays zero, and a computed
/// zero is sent as `0xffff` (RFC 768).
#[inline]
pub(crate) fn update_udp(data: &mut [u8], at: usize, d: Delta) {
    if let Some(b) = data.get_mut(at..at + 2) {
        let old = u16::from_be_bytes([b[0], b[1]]);
        if old != 0 {
            let v = match d.apply(old) {
                0 => 0xffff,
                v => v,
            };
            b.copy_from_slice(&v.to_be_bytes());
        }
    }
}

/// Recomputes the CRC32c of the SCTP packet `data[l4..end]` (RFC 4960 appendix B: the
/// checksum field is zero while computing, and is stored least significant byte first).
#[inline]
pub(crate) fn sctp(data: &mut [u8], l4: usize, end: usize) -> Option<()> {
    if end < l4 + sctp::HEADER_LEN || end > data.len() {
        return None;
    }
    SctpHeader::new_checked_at_mut(data, l4)?.set_crc32c(0);
    let crc = crc32c::crc32c(data.get(l4..end)?);
    SctpHeader::new_checked_at_mut(data, l4)?.set_crc32c(crc);
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Straightforward RFC 1071 checksum of `data`.
    fn full(data: &[u8]) -> u16 {
        !sum(data)
    }

    #[test]
    fn incremental_equals_full_recompute() {
        // An IPv4 header (checksum at 10).
        let mut h: [u8; 20] =
            [0x45, 0, 0, 0x54, 0x12, 0x34, 0x40, 0, 64, 1, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
        let c = full(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        for (off, new) in [(12usize, &[192u8, 168, 1, 1][..]), (8, &[1][..]), (9, &[17][..])] {
            let d = write(&mut h, 0, off, new).unwrap();
            update(&mut h, 10, d);
            let stored = u16::from_be_bytes([h[10], h[11]]);
            let mut z = h;
            z[10] = 0;
            z[11] = 0;
            assert_eq!(stored, full(&z), "after writing at {off}");
        }
    }

    #[test]
    fn word_delta_matches_rfc1624_example() {
        // RFC 1624 section 4: HC = 0xdd2f, m = 0x5555 -> m' = 0x3285, HC' = 0x0000.
        assert_eq!(Delta::word(0x5555, 0x3285).apply(0xdd2f), 0x0000);
        assert_eq!(Delta::words(&[0x55, 0x55], &[0x32, 0x85]).apply(0xdd2f), 0x0000);
    }

    #[test]
    fn odd_offsets_and_short_data() {
        let mut d = [0u8; 5];
        assert!(write(&mut d, 0, 4, &[1, 2]).is_none());
        assert_eq!(d, [0; 5]);
        let delta = write(&mut d, 0, 3, &[1, 2]).unwrap();
        assert_eq!(delta.apply(!0), !sum(&d));
        update(&mut d, 4, delta);
        update_udp(&mut d, 4, delta);
    }

    #[test]
    fn udp_zero_stays_zero() {
        let mut d = [0u8; 8];
        update_udp(&mut d, 6, Delta::word(1, 2));
        assert_eq!(d, [0; 8]);
        // ~0xfffe + ~0 + 0xfffe folds to 0xffff: the computed checksum is zero.
        let mut d = [0, 0, 0, 0, 0, 0, 0xff, 0xfe];
        assert_eq!(Delta::word(0, 0xfffe).apply(0xfffe), 0);
        update_udp(&mut d, 6, Delta::word(0, 0xfffe));
        assert_eq!(&d[6..], &[0xff, 0xff]);
    }
}
