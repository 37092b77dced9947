//! Packets with an offload note: rewrites on a partial checksum, and what the output
//! side makes of noted packets for a port without offloads (`resolve_offload`).

use super::frames;
use super::*;
use crate::packet::{Gso, GsoKind, Offload};
use crate::rewrite::{
    finish_partial_checksum, locate_l4, note_super_frame, resolve_offload, segment_tcp,
    OffloadError, SegmentError,
};

const PARTIAL: Offload = Offload { partial_csum: true, gso: None };

/// The pseudo-header sum of `f` (addresses, protocol, L4 length), folded, computed with
/// the tests' own one's-complement sum.
fn pseudo(f: &[u8]) -> u16 {
    let s = locate_l4(f).expect("a TCP/UDP frame");
    let mut words =
        if s.v6 { f[s.l3 + 8..s.l3 + 40].to_vec() } else { f[s.l3 + 12..s.l3 + 20].to_vec() };
    words.extend_from_slice(&((s.end - s.l4) as u32).to_be_bytes());
    words.extend_from_slice(&[0, 0, 0, if s.tcp { 6 } else { 17 }]);
    let mut x = ones(&words);
    while x > 0xffff {
        x = (x & 0xffff) + (x >> 16);
    }
    x as u16
}

/// `f` as checksum offload leaves it: the pseudo-header's sum in the TCP/UDP field.
fn partial(mut f: Vec<u8>) -> Vec<u8> {
    let at = locate_l4(&f).unwrap().csum_at;
    let p = pseudo(&f);
    f[at..at + 2].copy_from_slice(&p.to_be_bytes());
    f
}

fn udp_csum_frames() -> Vec<Vec<u8>> {
    vec![
        frames::ipv4_tcp(),
        frames::vlan_ipv4_udp(),
        frames::ipv6_tcp(),
        frames::ipv6_udp(),
        frames::qinq_ipv4_udp(),
    ]
}

#[test]
fn rewrites_on_a_partial_checksum_finish_to_the_full_rewrite() {
    let actions = [
        vec![Action::SetField(Field::Ipv4Src, 0xc0a8_0101)],
        vec![Action::SetField(Field::Ipv4Dst, 0x0a63_0002)],
        vec![Action::SetField(Field::TpSrc, 4321)],
        vec![Action::SetField(Field::TpDst, 8080)],
        vec![
            Action::SetField(Field::Ipv6Src, 0x2001_0db8_0000_0000_0000_0000_0000_0099),
            Action::SetField(Field::Ipv6Dst, 0xfe80_0000_0000_0000_0000_0000_0000_0001),
        ],
        vec![Action::DecNwTtl, Action::SetField(Field::IpDscp, 10)],
        vec![Action::PushVlan(0x8100), Action::SetField(Field::VlanVid, 0x1005)],
        vec![Action::PopVlan, Action::SetField(Field::TpDst, 53)],
        vec![
            Action::SetField(Field::Ipv4Src, 0x0102_0304),
            Action::SetField(Field::TpSrc, 1),
            Action::PushVlan(0x88a8),
        ],
    ];
    let mut checked = 0;
    for f in udp_csum_frames() {
        for list in &actions {
            let mut full = Case::new(&f);
            if list.iter().any(|a| full.apply(a).is_err()) {
                continue;
            }
            verify_checksums(full.pkt.data());
            let mut part = Case::new(&partial(f.clone()));
            part.pkt.set_offload(Some(PARTIAL));
            for a in list {
                part.apply(a).unwrap_or_else(|e| panic!("{a:?} {e:?} {f:02x?}"));
            }
            part.assert_consistent();
            assert_eq!(part.pkt.offload(), Some(PARTIAL), "the note is kept");
            let mut got = part.pkt.data().to_vec();
            // Still partial: the field is the pseudo-header sum of the new headers.
            let Some(l4) = locate_l4(&got) else {
                // Headers are looked for behind at most two tags (a third is pushed
                // here onto a QinQ frame); such a frame is not finished.
                let tag = |at: usize| matches!(be16(&got, at), 0x8100 | 0x88a8);
                assert!(tag(12) && tag(16) && tag(20), "{list:?} on {f:02x?}");
                continue;
            };
            let at = l4.csum_at;
            assert_eq!(u16::from_be_bytes([got[at], got[at + 1]]), pseudo(&got), "{list:?}");
            assert!(finish_partial_checksum(&mut got));
            assert_eq!(got, full.pkt.data(), "{list:?} on {f:02x?}");
            checked += 1;
        }
    }
    assert!(checked >= 25, "only {checked} cases applied");
}

/// An IPv4/TCP frame (optionally VLAN-tagged) with `len` payload bytes, checksums right.
fn big_tcp(len: usize, v6: bool) -> Vec<u8> {
    let payload: Vec<u8> = (0..len).map(|i| (i * 13 + 5) as u8).collect();
    let mut v = Vec::new();
    let b = PacketBuilder::ethernet2(SRC_MAC, DST_MAC);
    if v6 {
        b.ipv6(V6_SRC, V6_DST, 64)
            .tcp(1234, 80, 0x1000_0000, 1000)
            .psh()
            .ack(77)
            .write(&mut v, &payload)
            .unwrap();
    } else {
        b.ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
            .tcp(1234, 80, 0x1000_0000, 1000)
            .psh()
            .ack(77)
            .write(&mut v, &payload)
            .unwrap();
    }
    v
}

fn tso(v6: bool, size: u16) -> Offload {
    Offload {
        partial_csum: true,
        gso: Some(Gso { kind: if v6 { GsoKind::TcpV6 } else { GsoKind::TcpV4 }, size, ecn: false }),
    }
}

#[test]
fn super_frames_become_segments_of_the_noted_size_with_full_checksums() {
    for v6 in [false, true] {
        for (len, mss) in [(60_000usize, 1448u16), (3000, 1448), (1448, 1448), (5000, 536)] {
            let orig = big_tcp(len, v6);
            let mut p = Packet::from_slice(&partial(orig.clone()));
            p.set_offload(Some(tso(v6, mss)));
            // A VLAN tag pushed after the note was set: offsets are found at output.
            let (mut key, mut layers) = parsed(p.data(), 1);
            apply(&mut p, &mut key, &mut layers, &Action::PushVlan(0x8100)).unwrap();
            let (mut pool, mut out) = (Vec::new(), Vec::new());
            let n = resolve_offload(p, 1500, 1518, &mut pool, &mut out).unwrap();
            // The noted size, unless the MTU allows less.
            let room = 1500 - if v6 { 60 } else { 40 };
            let eff = usize::from(mss).min(room);
            assert_eq!(n, len.div_ceil(eff), "len {len} mss {mss} v6 {v6}");
            assert_eq!(out.len(), n);
            let mut data = Vec::new();
            for s in &out {
                assert_eq!(s.offload(), None);
                assert!(s.len() <= 1518);
                verify_checksums(s.data());
                let l = locate_l4(s.data()).unwrap();
                assert_eq!(&s.data()[12..14], &[0x81, 0x00]);
                assert!(l.end - l.hdr_end <= eff);
                data.extend_from_slice(&s.data()[l.hdr_end..l.end]);
            }
            let l = locate_l4(&orig).unwrap();
            assert_eq!(data, &orig[l.hdr_end..l.end]);
        }
    }
}

#[test]
fn an_unnoted_super_frame_is_noted_as_its_sender_would_have() {
    for v6 in [false, true] {
        let orig = big_tcp(20_000, v6);
        let mut p = Packet::from_slice(&orig);
        assert!(note_super_frame(&mut p, 1500, 1514));
        let note = p.offload().unwrap();
        assert!(note.partial_csum);
        let gso = note.gso.unwrap();
        assert_eq!(gso.size, if v6 { 1440 } else { 1460 });
        assert_eq!(p.data(), &partial(orig.clone())[..], "the field holds the pseudo sum");
        // Resolved, it gives what cutting the finished frame directly gives.
        let (mut pool, mut via_note, mut direct) = (Vec::new(), Vec::new(), Vec::new());
        resolve_offload(p, 1500, 1514, &mut pool, &mut via_note).unwrap();
        segment_tcp(&orig, 1500, 1514, &mut pool, &mut direct).unwrap();
        assert_eq!(via_note, direct);
    }
    // Short, noted already, or not TCP: left alone.
    let mut short = Packet::from_slice(&big_tcp(100, false));
    assert!(!note_super_frame(&mut short, 1500, 1514));
    let mut udp = Packet::from_slice(&frames::vlan_ipv4_udp());
    assert!(!note_super_frame(&mut udp, 20, 40));
    assert_eq!(udp.offload(), None);
}

/// An IPv4 or IPv6 UDP frame (VLAN-tagged) with `len` payload bytes, checksums right.
fn big_udp(len: usize, v6: bool) -> Vec<u8> {
    let payload: Vec<u8> = (0..len).map(|i| (i * 7 + 1) as u8).collect();
    let mut v = Vec::new();
    let b = PacketBuilder::ethernet2(SRC_MAC, DST_MAC)
        .single_vlan(etherparse::VlanId::try_new(7).unwrap());
    if v6 {
        b.ipv6(V6_SRC, V6_DST, 64).udp(4000, 4001).write(&mut v, &payload).unwrap();
    } else {
        b.ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64).udp(4000, 4001).write(&mut v, &payload).unwrap();
    }
    v
}

#[test]
fn udp_super_frames_become_datagrams_of_the_noted_size() {
    for v6 in [false, true] {
        for (len, size) in [(10_000usize, 1400u16), (1400, 1400), (3, 1000), (2801, 1400)] {
            let orig = big_udp(len, v6);
            let mut p = Packet::from_slice(&partial(orig.clone()));
            p.set_offload(Some(Offload {
                partial_csum: true,
                gso: Some(Gso { kind: GsoKind::Udp, size, ecn: false }),
            }));
            let (mut pool, mut out) = (Vec::new(), Vec::new());
            let n = resolve_offload(p, 1500, 1518, &mut pool, &mut out).unwrap();
            assert_eq!(n, len.div_ceil(usize::from(size)).max(1), "len {len} v6 {v6}");
            let mut data = Vec::new();
            for (i, s) in out.iter().enumerate() {
                assert_eq!(s.offload(), None);
                verify_checksums(s.data());
                let l = locate_l4(s.data()).unwrap();
                assert_eq!(be16(s.data(), l.l4 + 4) as usize, l.end - l.l4, "UDP length");
                assert!(l.end - l.hdr_end <= usize::from(size));
                if !v6 {
                    assert_eq!(
                        be16(s.data(), l.l3 + 4),
                        be16(&orig, l.l3 + 4).wrapping_add(i as u16)
                    );
                }
                data.extend_from_slice(&s.data()[l.hdr_end..l.end]);
            }
            let l = locate_l4(&orig).unwrap();
            assert_eq!(data, &orig[l.hdr_end..l.end]);
        }
    }
}

#[test]
fn a_partial_checksum_alone_is_finished_and_unnoted_packets_pass_unchanged() {
    for f in udp_csum_frames() {
        let mut p = Packet::from_slice(&partial(f.clone()));
        p.set_offload(Some(PARTIAL));
        let (mut pool, mut out) = (Vec::new(), Vec::new());
        assert_eq!(resolve_offload(p, 1500, 1518, &mut pool, &mut out), Ok(1));
        assert_eq!(out[0].data(), &f[..]);
        assert_eq!(out[0].offload(), None);

        // Without the note the same bytes go out as they are.
        let p = Packet::from_slice(&partial(f.clone()));
        out.clear();
        assert_eq!(resolve_offload(p, 1500, 1518, &mut pool, &mut out), Ok(1));
        assert_eq!(out[0].data(), &partial(f)[..]);
    }
}

#[test]
fn notes_that_cannot_be_honoured_are_errors_not_output() {
    let (mut pool, mut out) = (Vec::new(), Vec::new());
    // UDP datagrams that would not fit the port.
    let mut p = Packet::from_slice(&partial(frames::vlan_ipv4_udp()));
    p.set_offload(Some(Offload {
        partial_csum: true,
        gso: Some(Gso { kind: GsoKind::Udp, size: 1480, ecn: false }),
    }));
    assert_eq!(resolve_offload(p, 1500, 1518, &mut pool, &mut out), Err(OffloadError::UdpTooBig));
    // A partial checksum behind an MPLS label: no TCP/UDP header to be found.
    let mut p = Packet::from_slice(&frames::mpls_ipv4());
    p.set_offload(Some(PARTIAL));
    assert_eq!(resolve_offload(p, 1500, 1518, &mut pool, &mut out), Err(OffloadError::NoL4));
    // A TCP note on a UDP frame, and on ARP.
    for f in [frames::vlan_ipv4_udp(), frames::arp()] {
        let mut p = Packet::from_slice(&f);
        p.set_offload(Some(tso(false, 100)));
        assert_eq!(resolve_offload(p, 1500, 1518, &mut pool, &mut out), Err(OffloadError::NoL4));
    }
    // A super-frame whose headers leave no room at this MTU.
    let mut p = Packet::from_slice(&big_tcp(3000, false));
    p.set_offload(Some(tso(false, 1000)));
    assert_eq!(
        resolve_offload(p, 40, 1518, &mut pool, &mut out),
        Err(OffloadError::Segment(SegmentError::TooSmall))
    );
    assert!(out.is_empty());
    assert_eq!(pool.len(), 5, "every buffer went back to the pool");
}

proptest::proptest! {
    /// Any bytes with any note are resolved or refused without a panic, and whatever
    /// comes out has no note.
    #[test]
    fn random_frames_and_notes_never_panic(
        bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2000),
        csum in proptest::prelude::any::<bool>(),
        kind in 0u8..4,
        size in proptest::prelude::any::<u16>(),
        tcp_ipv4 in proptest::prelude::any::<bool>(),
    ) {
        let mut bytes = bytes;
        if tcp_ipv4 && bytes.len() > 40 {
            bytes[12..15].copy_from_slice(&[0x08, 0x00, 0x45]);
            bytes[14 + 9] = 6;
            bytes[14 + 6] = 0;
            bytes[14 + 7] = 0;
        }
        let gso = match kind {
            0 => None,
            1 => Some(GsoKind::TcpV4),
            2 => Some(GsoKind::TcpV6),
            _ => Some(GsoKind::Udp),
        }
        .map(|kind| Gso { kind, size, ecn: false });
        let mut p = Packet::from_slice(&bytes);
        p.set_offload(Some(Offload { partial_csum: csum, gso }));
        let (mut pool, mut out) = (Vec::new(), Vec::new());
        let _ = resolve_offload(p, 1500, 1518, &mut pool, &mut out);
        proptest::prop_assert!(out.iter().all(|p| p.offload().is_none()));
    }
}
