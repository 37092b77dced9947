//! Reading an entry's rewrites off a decision's frames before and after (what the
//! program must do to turn the one into the other), for the tier to check with the
//! program's model.

use crate::layout::*;

/// The VLAN tag of an Ethernet frame: (TPID, TCI), if it has one.
fn tag(f: &[u8]) -> Option<(u16, u16)> {
    let tpid = u16::from_be_bytes([*f.get(12)?, *f.get(13)?]);
    (tpid == 0x8100 || tpid == 0x88a8).then(|| {
        let tci = u16::from_be_bytes([*f.get(14).unwrap_or(&0), *f.get(15).unwrap_or(&0)]);
        (tpid, tci)
    })
}

/// The frame without its VLAN tag.
fn untagged(f: &[u8]) -> Vec<u8> {
    match tag(f) {
        Some(_) if f.len() >= 16 => [&f[..12], &f[16..]].concat(),
        _ => f.to_vec(),
    }
}

/// The rewrites that turn frame `before` into `after` (`None`: dropped, no rewrite), as
/// an entry (version, counter and output left to the caller), if the program can do
/// them: at most one tag before and after, the same TPID when both have one, and
/// otherwise changes only to MACs, VLAN VID/PCP, IPv4 TOS/TTL/addresses and TCP/UDP
/// ports. The caller checks the result with the model.
pub fn entry_for(before: &[u8], after: Option<&[u8]>) -> Option<FpEntry> {
    let mut e = FpEntry::default();
    let Some(after) = after else {
        return Some(e);
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
            if ti != to || (ci & 0x1000) != (co & 0x1000) {
                return None;
            }
            if ci != co {
                e.flags |= FP_VLAN_SET;
                e.vlan_tci = co & !0x1000;
            }
        }
    }
    let (b, a) = (inner(before)?, inner(after)?);
    if b.len() != a.len() || b.len() < 14 {
        return None;
    }
    if a[..6] != b[..6] {
        e.flags |= FP_SET_ETH_DST;
        e.eth_dst.copy_from_slice(&a[..6]);
    }
    if a[6..12] != b[6..12] {
        e.flags |= FP_SET_ETH_SRC;
        e.eth_src.copy_from_slice(&a[6..12]);
    }
    if b[12..14] == [0x08, 0x00] && b.len() >= 34 {
        let l3 = 14;
        if a[l3 + 1] != b[l3 + 1] {
            e.flags |= FP_SET_TOS;
            e.ip_tos = a[l3 + 1];
        }
        if a[l3 + 8] != b[l3 + 8] {
            e.flags |= FP_SET_TTL;
            e.ip_ttl = a[l3 + 8];
        }
        let be32 = |f: &[u8], i: usize| u32::from_be_bytes([f[i], f[i + 1], f[i + 2], f[i + 3]]);
        if a[l3 + 12..l3 + 16] != b[l3 + 12..l3 + 16] {
            e.flags |= FP_SET_IPV4_SRC;
            e.ipv4_src = be32(&a, l3 + 12);
        }
        if a[l3 + 16..l3 + 20] != b[l3 + 16..l3 + 20] {
            e.flags |= FP_SET_IPV4_DST;
            e.ipv4_dst = be32(&a, l3 + 16);
        }
        let l4 = l3 + usize::from(b[l3] & 0x0f) * 4;
        if matches!(b[l3 + 9], 6 | 17) && b.len() >= l4 + 4 {
            let be16 = |f: &[u8], i: usize| u16::from_be_bytes([f[i], f[i + 1]]);
            if a[l4..l4 + 2] != b[l4..l4 + 2] {
                e.flags |= FP_SET_TP_SRC;
                e.tp_src = be16(&a, l4);
            }
            if a[l4 + 2..l4 + 4] != b[l4 + 2..l4 + 4] {
                e.flags |= FP_SET_TP_DST;
                e.tp_dst = be16(&a, l4 + 2);
            }
        }
    }
    Some(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn udp_frame() -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
        f.extend_from_slice(&[
            0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ]);
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
        assert_eq!(
            e.flags,
            FP_SET_ETH_DST | FP_SET_TTL | FP_SET_IPV4_DST | FP_SET_TP_SRC
        );
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
        assert!(entry_for(&tagged, Some(&qinq)).is_none(), "a TPID change");
        let double = [&tagged[..12], &[0x81, 0x00, 0, 1], &tagged[12..]].concat();
        assert!(entry_for(&b, Some(&double)).is_none(), "two tags");
    }

    #[test]
    fn a_drop_has_no_rewrites() {
        assert_eq!(entry_for(&udp_frame(), None), Some(FpEntry::default()));
    }
}
