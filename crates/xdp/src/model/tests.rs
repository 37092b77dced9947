//! The model against the userspace parser and rewrites.

mod mpls;

use datapath::action::Action;
use datapath::key::{Field, FlowKey};
use datapath::pipeline::{Datapath, DatapathConfig, PortInfo};

use super::*;

/// Internet checksum of `b` (for building valid frames).
fn inet(b: &[u8]) -> u16 {
    let mut acc = 0u64;
    for c in b.chunks(2) {
        acc += u64::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    !fold(acc)
}

struct Spec {
    tag: Option<(u16, u16)>,
    proto: u8,
    ihl_words: u8,
    frag: u16,
    l4: Vec<u8>,
    udp_csum_zero: bool,
    tos: u8,
    ttl: u8,
}

impl Default for Spec {
    fn default() -> Self {
        Spec {
            tag: None,
            proto: TCP,
            ihl_words: 5,
            frag: 0,
            l4: Vec::new(),
            udp_csum_zero: false,
            tos: 0x2e,
            ttl: 64,
        }
    }
}

/// [`ipv4`] of the default spec but for the VLAN tag (TPID, TCI) and the protocol.
fn ipv4_of(tag: Option<(u16, u16)>, proto: u8) -> Vec<u8> {
    ipv4(&Spec { tag, proto, ..Spec::default() })
}

/// An Ethernet/IPv4 frame with valid IP and L4 checksums.
fn ipv4(s: &Spec) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1];
    if let Some((tpid, tci)) = s.tag {
        f.extend_from_slice(&tpid.to_be_bytes());
        f.extend_from_slice(&tci.to_be_bytes());
    }
    f.extend_from_slice(&ETH_P_IPV4.to_be_bytes());
    let ihl = usize::from(s.ihl_words) * 4;
    let mut l4 = s.l4.clone();
    if l4.is_empty() {
        l4 = match s.proto {
            TCP => {
                let mut t = vec![0u8; 24];
                t[..4].copy_from_slice(&[0x12, 0x34, 0, 80]);
                t[12] = 0x50;
                t[13] = 0x12;
                t
            }
            UDP => vec![0x30, 0x39, 0, 53, 0, 12, 0, 0, 1, 2, 3, 4],
            ICMP => vec![8, 0, 0, 0, 0, 1, 0, 2, 9, 9],
            _ => vec![1, 2, 3, 4, 5, 6, 7, 8],
        };
    }
    let total = ihl + l4.len();
    let mut ip = vec![0u8; ihl];
    ip[0] = 0x40 | s.ihl_words;
    ip[1] = s.tos;
    ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    ip[6..8].copy_from_slice(&s.frag.to_be_bytes());
    ip[8] = s.ttl;
    ip[9] = s.proto;
    ip[12..16].copy_from_slice(&[10, 0, 0, 1]);
    ip[16..20].copy_from_slice(&[10, 0, 0, 2]);
    let c = inet(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    // Transport checksum over the pseudo-header.
    let mut pseudo = Vec::new();
    pseudo.extend_from_slice(&ip[12..20]);
    pseudo.extend_from_slice(&[0, s.proto]);
    pseudo.extend_from_slice(&(l4.len() as u16).to_be_bytes());
    match s.proto {
        TCP if l4.len() >= 18 => {
            let c = inet(&[pseudo.clone(), l4.clone()].concat());
            l4[16..18].copy_from_slice(&c.to_be_bytes());
        }
        UDP if l4.len() >= 8 && !s.udp_csum_zero => {
            let c = inet(&[pseudo.clone(), l4.clone()].concat());
            let c = if c == 0 { 0xffff } else { c };
            l4[6..8].copy_from_slice(&c.to_be_bytes());
        }
        ICMP if l4.len() >= 4 => {
            let c = inet(&l4);
            l4[2..4].copy_from_slice(&c.to_be_bytes());
        }
        _ => {}
    }
    f.extend_from_slice(&ip);
    f.extend_from_slice(&l4);
    if f.len() < 60 {
        f.resize(60, 0);
    }
    f
}

fn l2(tags: &[(u16, u16)], ty: u16, payload: usize) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1];
    for (tpid, tci) in tags {
        f.extend_from_slice(&tpid.to_be_bytes());
        f.extend_from_slice(&tci.to_be_bytes());
    }
    f.extend_from_slice(&ty.to_be_bytes());
    f.extend(std::iter::repeat_n(0x5a, payload));
    f
}

fn userspace_key(frame: &[u8], in_port: u32) -> (FlowKey, bool) {
    let mut k = FlowKey::ZERO;
    let out = datapath::parse::parse(frame, in_port, &mut k);
    (k, out.error.is_none() && !out.ip_truncated)
}

fn frames() -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for tag in [None, Some((0x8100, 0x6005)), Some((0x88a8, 0xf123))] {
        for proto in [TCP, UDP, ICMP, 47, SCTP] {
            v.push(ipv4_of(tag, proto));
            v.push(ipv4(&Spec { tag, proto, ihl_words: 7, ..Spec::default() }));
            v.push(ipv4(&Spec { tag, proto, frag: 0x2000, ..Spec::default() }));
            v.push(ipv4(&Spec { tag, proto, frag: 0x0010, ..Spec::default() }));
        }
        // TCP with options, with a bad data offset, with options past the end.
        for (doff, len) in [(0x80, 32), (0x40, 20), (0xf0, 24)] {
            let mut t = vec![0u8; len];
            t[12] = doff;
            v.push(ipv4(&Spec { tag, proto: TCP, l4: t, ..Spec::default() }));
        }
        // L4 headers cut short inside the IP length.
        for (proto, len) in [(TCP, 12), (UDP, 6), (ICMP, 3)] {
            v.push(ipv4(&Spec { tag, proto, l4: vec![0x11; len], ..Spec::default() }));
        }
    }
    // Truncated IP, bad version, bad IHL, total length < IHL.
    let good = ipv4(&Spec::default());
    v.push(good[..40].to_vec());
    v.push(good[..30].to_vec());
    let mut b = good.clone();
    b[14] = 0x65;
    v.push(b);
    let mut b = good.clone();
    b[14] = 0x44;
    v.push(b);
    let mut b = good.clone();
    b[16..18].copy_from_slice(&10u16.to_be_bytes());
    v.push(b);
    // Non-IP and L2 edge cases.
    for ty in [0x88cc, 0x0806, 0x86dd, 0x8847, 0x8848, 0x88e7, 0x0600, 0x05dc, 0x9000] {
        v.push(l2(&[], ty, 46));
        v.push(l2(&[(0x8100, 7)], ty, 46));
    }
    v.push(l2(&[(0x8100, 7), (0x8100, 8)], 0x0800, 46));
    v.push(l2(&[(0x88a8, 7), (0x8100, 8)], 0x88cc, 46));
    v.push(l2(&[(0x8100, 7), (0x88a8, 8)], 0x88cc, 46));
    v.push(vec![0u8; 13]);
    v.push(l2(&[], 0x8100, 0));
    v.push(l2(&[], 0x8100, 1));
    v
}

#[test]
fn parse_agrees_with_the_userspace_parser() {
    let mut parsed = 0;
    for (i, f) in frames().iter().enumerate() {
        let (k, clean) = userspace_key(f, 7);
        let m = parse(f, 7);
        if let Some(m) = m {
            parsed += 1;
            assert!(clean, "frame {i}: model parses what userspace does not");
            assert_eq!(Some(m), FpKey::from_flow_key(&k), "frame {i}");
        }
        if !clean {
            assert_eq!(m, None, "frame {i}");
        }
        if FpKey::from_flow_key(&k).is_none() {
            assert_eq!(m, None, "frame {i}");
        }
    }
    assert!(parsed >= 20, "only {parsed} frames parsed");
}

#[test]
fn parse_reads_the_fields() {
    let f = ipv4(&Spec { tag: Some((0x8100, 0xa00a)), proto: ICMP, ..Spec::default() });
    let k = parse(&f, 3).unwrap();
    assert_eq!(k.in_port, 3);
    assert_eq!((k.vlan_vid, k.vlan_pcp), (0x100a, 5));
    assert_eq!((k.ip_proto, k.tp_src, k.tp_dst), (ICMP, 8, 0));
    assert_eq!((k.ip_tos, k.ip_ttl), (0x2e, 64));
    assert_eq!((k.ipv4_src, k.ipv4_dst), (0x0a00_0001, 0x0a00_0002));
    let t = parse(&ipv4(&Spec::default()), 1).unwrap();
    assert_eq!((t.tp_src, t.tp_dst, t.tcp_flags), (0x1234, 80, 0x012));
    assert_eq!(parse(&l2(&[], 0x88cc, 46), 1).unwrap().ip_proto, 0);
}

/// The userspace actions equivalent to `e`, in the program's order, then output.
fn actions(e: &FpEntry) -> Vec<Action> {
    let f = e.flags;
    let mut a = Vec::new();
    let mac = |m: &[u8; 6]| {
        let mut b = [0u8; 16];
        b[10..].copy_from_slice(m);
        u128::from_be_bytes(b)
    };
    if f & FP_SET_IPV4_SRC != 0 {
        a.push(Action::SetField(Field::Ipv4Src, e.ipv4_src.into()));
    }
    if f & FP_SET_IPV4_DST != 0 {
        a.push(Action::SetField(Field::Ipv4Dst, e.ipv4_dst.into()));
    }
    if f & FP_SET_TOS != 0 {
        a.push(Action::SetField(Field::IpDscp, (e.ip_tos >> 2).into()));
        a.push(Action::SetField(Field::IpEcn, (e.ip_tos & 3).into()));
    }
    if f & FP_SET_TTL != 0 {
        a.push(Action::SetNwTtl(e.ip_ttl));
    }
    if f & FP_SET_TP_SRC != 0 {
        a.push(Action::SetField(Field::TpSrc, e.tp_src.into()));
    }
    if f & FP_SET_TP_DST != 0 {
        a.push(Action::SetField(Field::TpDst, e.tp_dst.into()));
    }
    if f & FP_SET_ETH_DST != 0 {
        a.push(Action::SetField(Field::EthDst, mac(&e.eth_dst)));
    }
    if f & FP_SET_ETH_SRC != 0 {
        a.push(Action::SetField(Field::EthSrc, mac(&e.eth_src)));
    }
    a.extend(mpls::actions(e));
    if f & FP_VLAN_POP != 0 {
        a.push(Action::PopVlan);
    }
    if f & FP_VLAN_PUSH != 0 {
        a.push(Action::PushVlan(e.vlan_tpid));
    }
    if f & (FP_VLAN_PUSH | FP_VLAN_SET) != 0 {
        a.push(Action::SetField(Field::VlanVid, (0x1000 | (e.vlan_tci & 0x0fff)).into()));
        a.push(Action::SetField(Field::VlanPcp, (e.vlan_tci >> 13).into()));
    }
    a.push(Action::Output(2));
    a
}

fn userspace_apply(dp: &Datapath, frame: &[u8], e: &FpEntry) -> Option<Vec<u8>> {
    let t = dp.trace_packet_out(frame, 1, &actions(e), 0);
    t.outputs.tx.first().map(|tx| tx.packet.data().to_vec())
}

fn entries() -> Vec<FpEntry> {
    let base = FpEntry {
        out: 1,
        eth_dst: [0x0a, 1, 2, 3, 4, 5],
        eth_src: [0x0a, 6, 7, 8, 9, 0xa],
        ipv4_src: 0xc0a8_0101,
        ipv4_dst: 0xac10_fffe,
        tp_src: 0xfffe,
        tp_dst: 8080,
        ip_tos: 0xb9,
        ip_ttl: 17,
        vlan_tci: 0x4123,
        vlan_tpid: 0x8100,
        ..FpEntry::default()
    };
    let mut v = Vec::new();
    for flags in [
        0,
        FP_SET_ETH_DST,
        FP_SET_ETH_SRC | FP_SET_ETH_DST,
        FP_SET_IPV4_SRC,
        FP_SET_IPV4_DST,
        FP_SET_IPV4_SRC | FP_SET_IPV4_DST | FP_SET_TP_SRC | FP_SET_TP_DST,
        FP_SET_TP_SRC,
        FP_SET_TP_DST,
        FP_SET_TOS,
        FP_SET_TTL,
        FP_SET_TOS | FP_SET_TTL | FP_SET_ETH_SRC,
        FP_VLAN_POP,
        FP_VLAN_PUSH,
        FP_VLAN_SET,
        FP_VLAN_POP | FP_SET_IPV4_DST,
        FP_VLAN_PUSH | FP_SET_TP_DST | FP_SET_ETH_DST,
    ] {
        v.push(FpEntry { flags, ..base });
    }
    v.push(FpEntry { flags: FP_VLAN_PUSH, vlan_tpid: 0x88a8, vlan_tci: 0xe001, ..base });
    // Values whose checksum arithmetic meets the 0 / 0xffff corner.
    v.push(FpEntry { flags: FP_SET_IPV4_SRC | FP_SET_TP_SRC, ipv4_src: 0, tp_src: 0, ..base });
    v.push(FpEntry { flags: FP_SET_IPV4_DST, ipv4_dst: 0xffff_ffff, ..base });
    v
}

#[test]
fn rewrites_equal_the_userspace_rewrites() {
    let (dp, _wr, _rx) = Datapath::new(
        DatapathConfig {
            ports: vec![PortInfo::new(1, 0), PortInfo::new(2, 1)],
            ..DatapathConfig::default()
        },
        8,
    );
    let mut frames = Vec::new();
    for tag in [None, Some((0x8100, 0x3005)), Some((0x88a8, 0x0fff))] {
        for proto in [TCP, UDP, ICMP, 47] {
            frames.push(ipv4_of(tag, proto));
        }
        frames.push(ipv4(&Spec { tag, proto: UDP, udp_csum_zero: true, ..Spec::default() }));
        frames.push(ipv4(&Spec {
            tag,
            proto: TCP,
            ihl_words: 6,
            tos: 0,
            ttl: 1,
            ..Spec::default()
        }));
        frames.push(l2(tag.as_slice(), 0x88cc, 46));
    }
    // A tagged frame whose pop would leave less than 60 bytes.
    frames.push(l2(&[(0x8100, 5)], 0x88cc, 42));
    let mut compared = 0;
    let mut refused = 0;
    for (i, f) in frames.iter().enumerate() {
        assert!(parse(f, 1).is_some(), "frame {i} should parse");
        for (j, e) in entries().iter().enumerate() {
            match apply(f, e) {
                Some(out) => {
                    let user = userspace_apply(&dp, f, e);
                    assert_eq!(Some(out), user, "frame {i} entry {j} ({})", e.describe());
                    compared += 1;
                }
                None => refused += 1,
            }
        }
    }
    assert!(compared > 150 && refused > 20, "{compared} compared, {refused} refused");
}

#[test]
fn rewrites_missing_headers_are_refused() {
    let icmp = ipv4(&Spec { proto: ICMP, ..Spec::default() });
    let arpish = l2(&[], 0x88cc, 46);
    let tagged = l2(&[(0x8100, 1)], 0x88cc, 46);
    for (frame, flags) in [
        (&icmp, FP_SET_TP_SRC),
        (&arpish, FP_SET_IPV4_SRC),
        (&arpish, FP_VLAN_POP),
        (&tagged, FP_VLAN_PUSH),
        (&arpish, FP_VLAN_SET),
    ] {
        let e = FpEntry { flags, ..FpEntry::default() };
        assert_eq!(apply(frame, &e), None, "flags {flags:#x}");
    }
    // Pop then push replaces the tag.
    let both = FpEntry {
        flags: FP_VLAN_POP | FP_VLAN_PUSH,
        vlan_tpid: 0x88a8,
        vlan_tci: 0x0042,
        ..FpEntry::default()
    };
    let out = apply(&tagged, &both).unwrap();
    assert_eq!(&out[12..16], &[0x88, 0xa8, 0x00, 0x42]);
    assert_eq!(out.len(), tagged.len());
}

#[test]
fn udp_checksum_zero_stays_zero() {
    let f = ipv4(&Spec { proto: UDP, udp_csum_zero: true, ..Spec::default() });
    let e = FpEntry {
        flags: FP_SET_IPV4_SRC | FP_SET_TP_DST,
        ipv4_src: 0x0102_0304,
        tp_dst: 9,
        ..FpEntry::default()
    };
    let out = apply(&f, &e).unwrap();
    assert_eq!(&out[14 + 20 + 6..14 + 20 + 8], &[0, 0]);
    assert_ne!(&out[14 + 10..14 + 12], &f[14 + 10..14 + 12]);
}

/// `f` (built by [`ipv4`]) as its sender would leave it with checksum offload: the
/// TCP/UDP checksum field holding the pseudo-header's sum only.
fn offloaded(f: &[u8]) -> Vec<u8> {
    let mut f = f.to_vec();
    let l3 = if f[12..14] == [0x08, 0x00] { 14 } else { 18 };
    let ihl = usize::from(f[l3] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([f[l3 + 2], f[l3 + 3]]));
    let at = l3 + ihl + if f[l3 + 9] == TCP { 16 } else { 6 };
    let sum = pseudo_sum(&f[l3..], total - ihl);
    f[at..at + 2].copy_from_slice(&sum.to_be_bytes());
    f
}

#[test]
fn unfinished_checksums_are_finished_as_user_space_finishes_them() {
    let (dp, _wr, _rx) = Datapath::new(
        DatapathConfig {
            ports: vec![PortInfo::new(1, 0), PortInfo::new(2, 1)],
            ..DatapathConfig::default()
        },
        8,
    );
    let mut compared = 0;
    for tag in [None, Some((0x8100, 0x3005))] {
        for proto in [TCP, UDP] {
            for payload in [0usize, 1, 63, 700, 1460] {
                let mut l4 = match proto {
                    TCP => {
                        let mut t = vec![0u8; 20];
                        t[..4].copy_from_slice(&[0x12, 0x34, 0, 80]);
                        t[12] = 0x50;
                        t[13] = 0x18;
                        t
                    }
                    _ => {
                        let len = (8 + payload) as u16;
                        let mut u = vec![0x30, 0x39, 0, 53, 0, 0, 0, 0];
                        u[4..6].copy_from_slice(&len.to_be_bytes());
                        u
                    }
                };
                l4.extend((0..payload).map(|i| (i * 31 + 7) as u8));
                let full = ipv4(&Spec { tag, proto, l4, ..Spec::default() });
                let part = offloaded(&full);
                assert_ne!(part, full);
                let key = parse(&part, 1).expect("an offloaded frame parses");
                assert_eq!(Some(key), parse(&full, 1));
                for (j, e) in entries().iter().enumerate() {
                    let Some(out) = apply(&part, e) else {
                        assert_eq!(apply(&full, e), None, "entry {j}");
                        continue;
                    };
                    let mut finished = part.clone();
                    assert!(datapath::rewrite::finish_offloaded_checksum(&mut finished));
                    assert_eq!(finished, full, "finishing gives the sender's full checksum");
                    assert_eq!(Some(out), userspace_apply(&dp, &finished, e), "entry {j}");
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 100, "{compared} compared");
    // A segment longer than the program finishes goes to user space.
    let mut long = vec![0x30, 0x39, 0, 53, 0, 0, 0, 0];
    long[4..6].copy_from_slice(&((8 + CSUM_MAX) as u16).to_be_bytes());
    long.resize(8 + CSUM_MAX, 1);
    let part = offloaded(&ipv4(&Spec { proto: UDP, l4: long, ..Spec::default() }));
    assert!(parse(&part, 1).is_some());
    assert_eq!(apply(&part, &FpEntry::default()), None);
}
