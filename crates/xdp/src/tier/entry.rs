//! Reading an entry's rewrites off a decision's frames before and after (what the
//! program must do to turn the one into the other), for the tier to check with the
//! program's model; for an MPLS frame, also off the frames that show what the decision
//! does with the TTL of its outermost label stack entry, which its key does not hold
//! ([`mpls_ttl`]).

use datapath::mirror::TtlVariant;
use headers::ethertype::{self, is_mpls, is_vlan};
use headers::{ethernet, ip_proto, mpls, udp, vlan, Ipv4Header, MplsEntry};

use crate::layout::*;

/// Where a tag, or the ethertype, starts: after the MACs.
const TAG_AT: usize = ethernet::ADDRS_LEN;
/// Where the ethertype ends and, in an untagged frame, the L3 header (or the label
/// stack) starts.
const L3: usize = ethernet::HEADER_LEN;

/// The VLAN tag of an Ethernet frame: (TPID, TCI), if it has one.
fn tag(f: &[u8]) -> Option<(u16, u16)> {
    let tpid = ethernet::ethertype_at(f, TAG_AT)?;
    is_vlan(tpid).then(|| {
        let at = TAG_AT + vlan::field::TCI.start;
        let tci = u16::from_be_bytes([*f.get(at).unwrap_or(&0), *f.get(at + 1).unwrap_or(&0)]);
        (tpid, tci)
    })
}

/// The frame without its VLAN tag.
fn untagged(f: &[u8]) -> Vec<u8> {
    match tag(f) {
        Some(_) if f.len() >= TAG_AT + vlan::TAG_LEN => {
            [&f[..TAG_AT], &f[TAG_AT + vlan::TAG_LEN..]].concat()
        }
        _ => f.to_vec(),
    }
}

/// The rewrites that turn frame `before` into `after` (`None`: dropped, no rewrite), as
/// an entry (version, counter and output left to the caller), if the program can do
/// them: at most one tag before and after, the same TPID when both have one, one MPLS
/// label stack entry pushed onto a frame without one, or an MPLS frame's outermost
/// entry popped or its label, TC and BoS rewritten, and otherwise changes only to
/// MACs, VLAN VID/PCP, IPv4 TOS/TTL/addresses and TCP/UDP ports; else why not. An MPLS
/// frame's TTL is left to `mpls_ttl`. The caller checks the result with the model.
pub fn entry_for(before: &[u8], after: Option<&[u8]>) -> Result<FpEntry, &'static str> {
    let mut e = FpEntry::default();
    let Some(after) = after else {
        return Ok(e);
    };
    let inner = |f: &[u8]| {
        let u = untagged(f);
        tag(&u).is_none().then_some(u)
    };
    match (tag(before), tag(after)) {
        (None, None) => {}
        (Some(_), None) => e.flags |= FP_VLAN_POP,
        (None, Some((tpid, tci))) => {
            e.flags |= FP_VLAN_PUSH;
            e.vlan_tpid = tpid;
            e.vlan_tci = tci;
        }
        (Some((ti, ci)), Some((to, co))) => {
            if ti != to {
                return Err("its VLAN tag's TPID changes");
            }
            if (ci & 0x1000) != (co & 0x1000) {
                return Err("its VLAN tag's CFI/DEI bit changes");
            }
            if ci != co {
                e.flags |= FP_VLAN_SET;
                e.vlan_tci = co & !0x1000;
            }
        }
    }
    let two = "a frame has two VLAN tags";
    let (b, a) = (inner(before).ok_or(two)?, inner(after).ok_or(two)?);
    if b.len() < ethernet::HEADER_LEN || a.len() < ethernet::HEADER_LEN {
        return Err("a frame is shorter than an Ethernet header");
    }
    let a = mpls_change(&mut e, &b, a)?;
    if b.len() != a.len() {
        return Err("its length changes by more than a VLAN tag and an MPLS entry");
    }
    if a[ethernet::field::DST] != b[ethernet::field::DST] {
        e.flags |= FP_SET_ETH_DST;
        e.eth_dst.copy_from_slice(&a[ethernet::field::DST]);
    }
    if a[ethernet::field::SRC] != b[ethernet::field::SRC] {
        e.flags |= FP_SET_ETH_SRC;
        e.eth_src.copy_from_slice(&a[ethernet::field::SRC]);
    }
    let ipv4 = ethernet::ethertype_at(&b, TAG_AT) == Some(ethertype::IPV4);
    // Both frames are as long as each other (checked above).
    if let (true, Some(ib), Some(ia)) =
        (ipv4, Ipv4Header::new_checked_at(&b, L3), Ipv4Header::new_checked_at(&a, L3))
    {
        let f = &mut e.flags;
        changed(f, FP_SET_TOS, &mut e.ip_tos, ib.tos(), ia.tos());
        changed(f, FP_SET_TTL, &mut e.ip_ttl, ib.ttl(), ia.ttl());
        changed(f, FP_SET_IPV4_SRC, &mut e.ipv4_src, ib.src_addr(), ia.src_addr());
        changed(f, FP_SET_IPV4_DST, &mut e.ipv4_dst, ib.dst_addr(), ia.dst_addr());
        let l4 = L3 + ib.header_len();
        let tcp_udp = matches!(ib.protocol(), ip_proto::TCP | ip_proto::UDP);
        // TCP and UDP have their ports in the same place.
        let port = |f: &[u8], r: std::ops::Range<usize>| {
            f.get(l4 + r.start..l4 + r.end).map_or(0, |p| u16::from_be_bytes([p[0], p[1]]))
        };
        if tcp_udp && b.len() >= l4 + udp::field::DST_PORT.end {
            // Both frames hold both ports (they are as long as each other).
            let (src, dst) = (udp::field::SRC_PORT, udp::field::DST_PORT);
            let f = &mut e.flags;
            changed(f, FP_SET_TP_SRC, &mut e.tp_src, port(&b, src.clone()), port(&a, src));
            changed(f, FP_SET_TP_DST, &mut e.tp_dst, port(&b, dst.clone()), port(&a, dst));
        }
    }
    if e.flags & FP_MPLS_FLAGS != 0 && e.flags & (FP_SET_TP_SRC | FP_SET_TP_DST) != 0 {
        return Err(
            "it rewrites a TCP/UDP port and pushes an MPLS label stack entry (an entry holds \
             one of the two)",
        );
    }
    Ok(e)
}

/// Where a field is `after` in the sent frame and `before` in the received one, and
/// they differ: sets rewrite `flag` in `flags` and the entry's `field` to `after`.
fn changed<T: PartialEq>(flags: &mut u32, flag: u32, field: &mut T, before: T, after: T) {
    if after != before {
        *flags |= flag;
        *field = after;
    }
}

/// The MPLS change from untagged frame `b` to untagged frame `a`, put in `e`, and `a`
/// with the change undone (what the rest of the rewrites are read off).
fn mpls_change(e: &mut FpEntry, b: &[u8], a: Vec<u8>) -> Result<Vec<u8>, &'static str> {
    // Both frames hold an Ethernet header (checked by the caller).
    let ty = |f: &[u8]| ethernet::ethertype_at(f, TAG_AT).unwrap_or(0);
    let lse = |f: &[u8]| {
        MplsEntry::new_checked_at(f, L3)
            .map(|x| x.word())
            .ok_or("an MPLS frame is shorter than its label stack entry")
    };
    // The outermost entry, right after the ethertype of an untagged frame.
    const ENTRY: std::ops::Range<usize> = L3..L3 + mpls::ENTRY_LEN;
    const BELOW: usize = ENTRY.end;
    let (bt, at) = (ty(b), ty(&a));
    match (is_mpls(bt), is_mpls(at)) {
        (false, false) => Ok(a),
        (false, true) if a.len() == b.len() + mpls::ENTRY_LEN => {
            e.flags |= FP_MPLS_PUSH;
            if at == ethertype::MPLS_MCAST {
                e.flags |= FP_MPLS_MCAST;
            }
            e.set_mpls_word(lse(&a)?);
            Ok([&a[..TAG_AT], &b[TAG_AT..L3], &a[BELOW..]].concat())
        }
        (false, true) => Err("it makes a label stack of other than one entry"),
        (true, _) if a.len() + mpls::ENTRY_LEN == b.len() => {
            if a[L3..] != b[BELOW..] {
                return Err("it pops an MPLS label stack entry and changes what was below it");
            }
            e.flags |= FP_MPLS_POP;
            e.tp_src = at;
            Ok([&a[..TAG_AT], &b[TAG_AT..BELOW], &a[L3..]].concat())
        }
        (true, true) if a.len() == b.len() && at == bt => {
            let (lb, la) = (lse(b)?, lse(&a)?);
            if (lb ^ la) & FP_MPLS_LSE != 0 {
                e.flags |= FP_MPLS_SET;
                e.set_mpls_word(la & FP_MPLS_LSE);
            }
            let mut a = a;
            a[ENTRY].copy_from_slice(&b[ENTRY]);
            Ok(a)
        }
        (true, true) if a.len() == b.len() + mpls::ENTRY_LEN => {
            Err("it pushes an MPLS label stack entry onto a label stack (the kernel pushes onto \
             frames without one)")
        }
        _ => Err("its MPLS rewrite is not one the kernel program does"),
    }
}

/// Completes `e`, the entry that turns an MPLS frame `input` into `after` (`None`: a
/// drop), with what the decision does with the TTL of the outermost label stack entry,
/// read off `variants` (`input` with other TTLs, see [`TtlVariant`]): frames of TTL 1
/// or below go to user space ([`FP_MPLS_TTL_CHECK`]) when the decision takes another
/// path for those, and where the entry keeps the label stack entry, its TTL is kept,
/// set ([`FP_MPLS_TTL_SET`]) or decremented ([`FP_MPLS_TTL_DEC`]) as the frames sent
/// show. Else why not (the path depends on the TTL in another way, or does something
/// else with it). Nothing for other frames (no variants).
pub fn mpls_ttl(
    e: &mut FpEntry,
    input: &[u8],
    after: Option<&[u8]>,
    variants: &[TtlVariant],
) -> Result<(), &'static str> {
    if variants.iter().any(|v| !v.same_path && v.ttl > 1) {
        return Err("its path depends on the MPLS TTL beyond a decrement at 1");
    }
    if variants.iter().any(|v| !v.same_path) {
        e.flags |= FP_MPLS_TTL_CHECK;
    }
    let Some(after) = after.filter(|_| !variants.is_empty() && e.flags & FP_MPLS_POP == 0) else {
        return Ok(());
    };
    let missing = "a frame sent has no MPLS label stack entry";
    let ttl = |f: &[u8]| untagged(f).get(L3 + mpls::field::TTL).copied().ok_or(missing);
    let mut seen = vec![(ttl(input)?, ttl(after)?)];
    for v in variants.iter().filter(|v| v.same_path) {
        seen.push((v.ttl, ttl(v.output.as_deref().ok_or(missing)?)?));
    }
    let c = seen[0].1;
    if seen.iter().all(|&(i, o)| o == i) {
        Ok(())
    } else if seen.iter().all(|&(i, o)| Some(o) == i.checked_sub(1)) {
        e.flags |= FP_MPLS_TTL_DEC;
        Ok(())
    } else if seen.iter().all(|&(_, o)| o == c) {
        e.flags |= FP_MPLS_TTL_SET;
        e.set_mpls_word((e.mpls_word() & !mpls::TTL_MASK) | u32::from(c));
        Ok(())
    } else {
        Err("what it does with the MPLS TTL is not kept, set or decremented once")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn udp_frame() -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
        f.extend_from_slice(&[0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        f.extend_from_slice(&[0x03, 0xe8, 0x07, 0xd0, 0, 8, 0, 0]);
        f
    }

    #[test]
    fn entry_for_reads_every_rewrite_off_the_frames() {
        let b = udp_frame();
        let mut a = b.clone();
        a[0..6].copy_from_slice(&[2, 0, 0, 0, 0, 9]);
        a[14 + 8] = 63;
        a[14 + 16..14 + 20].copy_from_slice(&[10, 0, 0, 9]);
        a[34..36].copy_from_slice(&[0x13, 0x88]);
        let e = entry_for(&b, Some(&a)).unwrap();
        assert_eq!(e.flags, FP_SET_ETH_DST | FP_SET_TTL | FP_SET_IPV4_DST | FP_SET_TP_SRC);
        assert_eq!(e.eth_dst, [2, 0, 0, 0, 0, 9]);
        assert_eq!((e.ip_ttl, e.ipv4_dst, e.tp_src), (63, 0x0a00_0009, 5000));
    }

    #[test]
    fn entry_for_pushes_pops_and_sets_tags() {
        let b = udp_frame();
        let tagged = [&b[..12], &[0x81, 0x00, 0x20, 0x05], &b[12..]].concat();
        let e = entry_for(&b, Some(&tagged)).unwrap();
        assert_eq!(e.flags, FP_VLAN_PUSH);
        assert_eq!((e.vlan_tpid, e.vlan_tci), (0x8100, 0x2005));
        let e = entry_for(&tagged, Some(&b)).unwrap();
        assert_eq!(e.flags, FP_VLAN_POP);
        let mut other = tagged.clone();
        other[15] = 7;
        let e = entry_for(&tagged, Some(&other)).unwrap();
        assert_eq!((e.flags, e.vlan_tci), (FP_VLAN_SET, 0x2007));
        let mut qinq = tagged.clone();
        qinq[12..14].copy_from_slice(&[0x88, 0xa8]);
        assert!(entry_for(&tagged, Some(&qinq)).is_err(), "a TPID change");
        let double = [&tagged[..12], &[0x81, 0x00, 0, 1], &tagged[12..]].concat();
        assert!(entry_for(&b, Some(&double)).is_err(), "two tags");
    }

    #[test]
    fn a_drop_has_no_rewrites() {
        assert_eq!(entry_for(&udp_frame(), None), Ok(FpEntry::default()));
    }

    /// A label stack entry.
    fn lse(label: u32, tc: u32, bos: u32, ttl: u32) -> u32 {
        (label << 12) | (tc << 9) | (bos << 8) | ttl
    }

    /// `f` with `entry` (its ethertype set to `ty`) after its MACs and tag.
    fn pushed(f: &[u8], ty: u16, entry: u32) -> Vec<u8> {
        let et = if tag(f).is_some() { 16 } else { 12 };
        [&f[..et], &ty.to_be_bytes(), &entry.to_be_bytes(), &f[et + 2..]].concat()
    }

    #[test]
    fn entry_for_reads_pushes_pops_and_label_rewrites() {
        let b = udp_frame();
        // A push, after a TTL decrement and a MAC rewrite.
        let mut a = b.clone();
        a[14 + 8] = 63;
        a[0] = 9;
        let a = pushed(&a, 0x8848, lse(1000, 5, 1, 63));
        let e = entry_for(&b, Some(&a)).unwrap();
        assert_eq!(e.flags, FP_MPLS_PUSH | FP_MPLS_MCAST | FP_SET_TTL | FP_SET_ETH_DST);
        assert_eq!(e.mpls_word(), lse(1000, 5, 1, 63));
        // On a tagged frame, with the tag popped.
        let tagged = [&b[..12], &[0x81, 0x00, 0x20, 0x05], &b[12..]].concat();
        let e = entry_for(&tagged, Some(&pushed(&b, 0x8847, lse(1, 0, 1, 64)))).unwrap();
        assert_eq!(e.flags, FP_MPLS_PUSH | FP_VLAN_POP);
        // Two entries, and a push with a port rewrite, are not done.
        let twice = pushed(&pushed(&b, 0x8847, lse(1, 0, 1, 64)), 0x8847, lse(2, 0, 0, 64));
        assert!(entry_for(&b, Some(&twice)).is_err());
        let mut port = b.clone();
        port[34] = 7;
        assert!(entry_for(&b, Some(&pushed(&port, 0x8847, lse(1, 0, 1, 64)))).is_err());

        // A pop, to IPv4, of a tagged MPLS frame whose tag's VID changes.
        let mpls = pushed(&tagged, 0x8847, lse(100, 3, 1, 64));
        let mut popped = tagged.clone();
        popped[15] = 7;
        let e = entry_for(&mpls, Some(&popped)).unwrap();
        assert_eq!(e.flags, FP_MPLS_POP | FP_VLAN_SET);
        assert_eq!(e.tp_src, 0x0800);
        let mut changed = popped.clone();
        changed[40] ^= 1;
        assert!(entry_for(&mpls, Some(&changed)).is_err(), "below the pop");

        // A label and TC rewrite; the TTL is left to the variants.
        let swapped = pushed(&tagged, 0x8847, lse(200, 1, 1, 63));
        let e = entry_for(&mpls, Some(&swapped)).unwrap();
        assert_eq!(e.flags, FP_MPLS_SET);
        assert_eq!(e.mpls_word(), lse(200, 1, 1, 0));
        let ttl_only = pushed(&tagged, 0x8847, lse(100, 3, 1, 9));
        assert_eq!(entry_for(&mpls, Some(&ttl_only)).unwrap().flags, 0);
        // A push onto the stack is not done.
        let deeper = pushed(&mpls, 0x8847, lse(5, 0, 0, 64));
        let why = entry_for(&mpls, Some(&deeper)).unwrap_err();
        assert!(why.contains("onto a label stack"), "{why}");
    }

    /// Variants of `input` (TTL 64 at 17) for TTLs 1, 2 and 255 under `f`, the TTL sent
    /// for a TTL received (`None`: another path).
    fn variants(input: &[u8], f: impl Fn(u8) -> Option<u8>) -> Vec<TtlVariant> {
        [1u8, 2, 255]
            .iter()
            .map(|&ttl| {
                let mut i = input.to_vec();
                i[17] = ttl;
                let out = f(ttl).map(|o| {
                    let mut o2 = i.clone();
                    o2[17] = o;
                    o2
                });
                TtlVariant { ttl, input: i, same_path: out.is_some(), output: out }
            })
            .collect()
    }

    #[test]
    fn mpls_ttl_reads_what_the_decision_does_with_the_ttl() {
        let input = pushed(&udp_frame(), 0x8847, lse(100, 3, 1, 64));
        let with = |o: u8| {
            let mut a = input.clone();
            a[17] = o;
            a
        };
        let ttl = |after: &[u8], f: &dyn Fn(u8) -> Option<u8>| {
            let mut e = entry_for(&input, Some(after)).unwrap();
            mpls_ttl(&mut e, &input, Some(after), &variants(&input, f)).map(|_| e)
        };
        let flags = FP_MPLS_TTL_SET | FP_MPLS_TTL_DEC | FP_MPLS_TTL_CHECK;
        let kept = ttl(&input, &|t| Some(t)).unwrap();
        assert_eq!(kept.flags & flags, 0);
        let dec = ttl(&with(63), &|t| (t > 1).then(|| t - 1)).unwrap();
        assert_eq!(dec.flags & flags, FP_MPLS_TTL_DEC | FP_MPLS_TTL_CHECK);
        let set = ttl(&with(7), &|_| Some(7)).unwrap();
        assert_eq!(set.flags & flags, FP_MPLS_TTL_SET);
        assert_eq!(set.mpls_word() & 0xff, 7);
        // A decrement, then a set.
        let both = ttl(&with(7), &|t| (t > 1).then_some(7)).unwrap();
        assert_eq!(both.flags & flags, FP_MPLS_TTL_SET | FP_MPLS_TTL_CHECK);
        // Two decrements; a set that only looks like a decrement at 64.
        assert!(ttl(&with(62), &|t| (t > 2).then(|| t - 2)).is_err());
        assert!(ttl(&with(63), &|_| Some(63)).is_ok());
        assert!(ttl(&with(63), &|t| Some(t.wrapping_mul(3))).is_err());
        // A drop that decrements first: the check alone.
        let mut e = FpEntry::default();
        mpls_ttl(&mut e, &input, None, &variants(&input, |t| (t > 1).then_some(0))).unwrap();
        assert_eq!(e.flags, FP_MPLS_TTL_CHECK);
    }
}
