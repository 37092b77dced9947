//! Hand-built frames: VLAN/QinQ, 802.3, PBB, MPLS, ARP, IPv4 options and fragments,
//! malformed IPv4, IPv6 extension chains, neighbour discovery options, TCP sanity, and
//! the counters.

use super::*;
use crate::packet::Layers;
use crate::parse::{ieh, ParseCounters, ParseError};

const V4_SRC: [u8; 4] = [10, 0, 0, 1];
const V4_DST: [u8; 4] = [192, 168, 7, 9];
const V6_SRC: u128 = 0xfe80_0000_0000_0000_0000_0000_0000_0001;
const V6_DST: u128 = 0x2001_0db8_0000_0000_0000_0000_0000_00ff;

/// An IPv4 header: `opts` (a multiple of 4 bytes), `frag` = flags|offset word, total
/// length covering `payload` bytes after the header.
fn ipv4(proto: u8, opts: &[u8], frag: u16, payload: usize) -> Vec<u8> {
    let ihl = 5 + opts.len() / 4;
    let total = (ihl * 4 + payload) as u16;
    let mut v = vec![0x40 | ihl as u8, 0xb9];
    v.extend_from_slice(&total.to_be_bytes());
    v.extend_from_slice(&[0x12, 0x34]);
    v.extend_from_slice(&frag.to_be_bytes());
    v.extend_from_slice(&[64, proto, 0, 0]);
    v.extend_from_slice(&V4_SRC);
    v.extend_from_slice(&V4_DST);
    v.extend_from_slice(opts);
    v
}

/// A 20-byte TCP header plus `opts` (data offset counts them).
fn tcp(sport: u16, dport: u16, flags: u16, opts: &[u8]) -> Vec<u8> {
    let doff = (5 + opts.len() / 4) as u16;
    let mut v = Vec::new();
    v.extend_from_slice(&sport.to_be_bytes());
    v.extend_from_slice(&dport.to_be_bytes());
    v.extend_from_slice(&[0; 8]);
    v.extend_from_slice(&((doff << 12) | flags).to_be_bytes());
    v.extend_from_slice(&[0xff, 0xff, 0, 0, 0, 0]);
    v.extend_from_slice(opts);
    v
}

/// An IPv6 header with traffic class 0xb9, flow label 0xabcde, hop limit 33.
fn ipv6(nh: u8, payload: usize) -> Vec<u8> {
    let w0: u32 = (6 << 28) | (0xb9 << 20) | 0xabcde;
    let mut v = w0.to_be_bytes().to_vec();
    v.extend_from_slice(&(payload as u16).to_be_bytes());
    v.extend_from_slice(&[nh, 33]);
    v.extend_from_slice(&V6_SRC.to_be_bytes());
    v.extend_from_slice(&V6_DST.to_be_bytes());
    v
}

/// The fields of an IP frame of ethertype `eth_type` built here (traffic class 0xb9)
/// that both IP versions have.
fn ip_fields(eth_type: u16, proto: u8, ttl: u128, frag: u128) -> Vec<(Field, u128)> {
    let mut f = eth_fields(eth_type);
    f.extend([
        (Field::IpDscp, 0xb9 >> 2),
        (Field::IpEcn, 1),
        (Field::IpProto, proto as u128),
        (Field::IpTtl, ttl),
        (Field::IpFrag, frag),
    ]);
    f
}

fn v4_fields(proto: u8, frag: u128) -> Vec<(Field, u128)> {
    let mut f = ip_fields(0x0800, proto, 64, frag);
    f.extend([
        (Field::Ipv4Src, u32::from_be_bytes(V4_SRC) as u128),
        (Field::Ipv4Dst, u32::from_be_bytes(V4_DST) as u128),
    ]);
    f
}

fn v6_fields(proto: u8, exthdr: u16, frag: u128) -> Vec<(Field, u128)> {
    let mut f = ip_fields(0x86dd, proto, 33, frag);
    f.extend([
        (Field::Ipv6Flabel, 0xabcde),
        (Field::Ipv6Src, V6_SRC),
        (Field::Ipv6Dst, V6_DST),
        (Field::Ipv6Exthdr, exthdr as u128),
    ]);
    f
}

/// `fields` and then `more`.
fn with<const N: usize>(
    mut fields: Vec<(Field, u128)>,
    more: [(Field, u128); N],
) -> Vec<(Field, u128)> {
    fields.extend(more);
    fields
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

#[test]
fn ipv4_options_are_skipped() {
    let opts = [0x94, 0x04, 0, 0, 0x01, 0x01, 0x01, 0x00]; // router alert, NOPs, EOL
    let t = tcp(1234, 80, 0x0012, &[]);
    let f = cat(&[&eth(0x0800), &ipv4(6, &opts, 0, t.len()), &t]);
    let (k, o) = run(&f);
    assert_fields(
        &k,
        &with(v4_fields(6, 0), [(Field::TpSrc, 1234), (Field::TpDst, 80), (Field::TcpFlags, 0x12)]),
    );
    assert_eq!(
        o,
        ParseOutcome {
            layers: Layers { ethertype: 12, l3: Some(14), l4: Some(14 + 28), ..Layers::default() },
            error: None,
            ip_truncated: false,
        }
    );
}

#[test]
fn ipv4_fragments() {
    let u = [0x12, 0x34, 0x56, 0x78, 0, 8, 0, 0];
    // (flags|offset, IpFrag, L4 parsed)
    let cases = [
        (0x0000, 0, true),        // not a fragment
        (0x4000, 0, true),        // DF only: not a fragment
        (0x2000, 1, true),        // first fragment
        (0x2000 | 185, 3, false), // middle fragment
        (185, 3, false),          // last fragment
    ];
    for (frag, want_frag, l4) in cases {
        let f = cat(&[&eth(0x0800), &ipv4(17, &[], frag, 8), &u]);
        let (k, o) = run(&f);
        let mut want = v4_fields(17, want_frag);
        if l4 {
            want.extend([(Field::TpSrc, 0x1234), (Field::TpDst, 0x5678)]);
        }
        assert_fields(&k, &want);
        assert_eq!(o.error, None);
        assert_eq!(o.layers.l4, l4.then_some(34), "frag {frag:#x}");
    }
}

#[test]
fn malformed_ipv4() {
    let t = tcp(1, 2, 0, &[]);
    // Version 5.
    let mut h = ipv4(6, &[], 0, 20);
    h[0] = 0x55;
    let (k, o) = run(&cat(&[&eth(0x0800), &h, &t]));
    assert_eq!(o.error, Some(ParseError::BadIpv4Header));
    assert_fields(&k, &eth_fields(0x0800));
    assert_eq!(o.layers.l3, None);
    // IHL 4.
    h[0] = 0x44;
    let (_, o) = run(&cat(&[&eth(0x0800), &h, &t]));
    assert_eq!(o.error, Some(ParseError::BadIpv4Header));
    // IHL 15 beyond the frame: fixed fields kept.
    h[0] = 0x4f;
    h[2..4].copy_from_slice(&60u16.to_be_bytes());
    let (k, o) = run(&cat(&[&eth(0x0800), &h, &[0; 10]]));
    assert_eq!(o.error, Some(ParseError::TruncatedIpv4));
    assert_fields(&k, &v4_fields(6, 0));
    assert!(o.ip_truncated);
    // Total length shorter than the header.
    let mut h = ipv4(6, &[], 0, 20);
    h[2..4].copy_from_slice(&19u16.to_be_bytes());
    let (k, o) = run(&cat(&[&eth(0x0800), &h, &t]));
    assert_eq!(o.error, Some(ParseError::BadIpv4Header));
    assert_fields(&k, &v4_fields(6, 0));
}

#[test]
fn ipv4_length_bounds_l4() {
    let t = tcp(1, 2, 0x10, &[]);
    // Total length covers only 10 bytes of TCP; the rest is "padding".
    let f = cat(&[&eth(0x0800), &ipv4(6, &[], 0, 10), &t]);
    let (k, o) = run(&f);
    assert_eq!(o.error, Some(ParseError::TruncatedL4));
    assert!(!o.ip_truncated);
    assert_fields(&k, &v4_fields(6, 0));
    // Total length claims more than the frame: parsed, flagged.
    let f = cat(&[&eth(0x0800), &ipv4(6, &[], 0, 100), &t]);
    let (k, o) = run(&f);
    assert_eq!(o.error, None);
    assert!(o.ip_truncated);
    assert_eq!(k.get(Field::TpDst), 2);
    // Ethernet padding after a short packet is fine.
    let u = [0, 1, 0, 2, 0, 8, 0, 0];
    let f = cat(&[&eth(0x0800), &ipv4(17, &[], 0, 8), &u, &[0; 18]]);
    let (k, o) = run(&f);
    assert_eq!((o.error, o.ip_truncated), (None, false));
    assert_eq!(k.get(Field::TpSrc), 1);
}

#[test]
fn tcp_sanity() {
    let mut t = tcp(5, 6, 0xfff, &[]);
    t[12] = 0x40 | (t[12] & 0x0f); // data offset 4
    let (k, o) = run(&cat(&[&eth(0x0800), &ipv4(6, &[], 0, 20), &t]));
    assert_eq!(o.error, Some(ParseError::BadTcpHeader));
    assert_eq!((k.get(Field::TpSrc), k.get(Field::TcpFlags)), (5, 0xfff));
    // Options claimed but absent.
    let mut t = tcp(5, 6, 0x002, &[]);
    t[12] = 0x80;
    let (k, o) = run(&cat(&[&eth(0x0800), &ipv4(6, &[], 0, 20), &t]));
    assert_eq!(o.error, Some(ParseError::TruncatedL4));
    assert_eq!(k.get(Field::TpDst), 6);
    assert_eq!(o.layers.l4, Some(34));
    // Options present: fine. Reserved bits above the 12 flag bits are dropped.
    let mut t = tcp(5, 6, 0x1ff, &[1, 1, 1, 0]);
    t[12] |= 0x0e;
    let (k, o) = run(&cat(&[&eth(0x0800), &ipv4(6, &[], 0, 24), &t]));
    assert_eq!(o.error, None);
    assert_eq!(k.get(Field::TcpFlags), 0xff | 0x100 | 0xe00);
}

#[test]
fn vlan_tags() {
    let u = [0, 1, 0, 2, 0, 8, 0, 0];
    let ip = ipv4(17, &[], 0, 8);
    // (tags, VlanVid, VlanPcp, ethertype offset)
    let single = [0x81, 0x00, 0xa0, 0x64]; // pcp 5, vid 100
    let s_tag = [0x88, 0xa8, 0xe0, 0x0a]; // pcp 7, vid 10
    let c_tag = [0x81, 0x00, 0x20, 0xc8]; // pcp 1, vid 200
    let cases: [(Vec<u8>, u128, u128); 4] = [
        (single.to_vec(), 0x1064, 5),
        (s_tag.to_vec(), 0x100a, 7),
        (cat(&[&s_tag, &c_tag]), 0x100a, 7),
        (cat(&[&single, &c_tag]), 0x1064, 5),
    ];
    for (tags, vid, pcp) in cases {
        let mut f = eth(0);
        f.truncate(12);
        f.extend_from_slice(&tags);
        f.extend_from_slice(&0x0800u16.to_be_bytes());
        f.extend_from_slice(&ip);
        f.extend_from_slice(&u);
        let (k, o) = run(&f);
        assert_fields(
            &k,
            &with(
                v4_fields(17, 0),
                [
                    (Field::VlanVid, vid),
                    (Field::VlanPcp, pcp),
                    (Field::TpSrc, 1),
                    (Field::TpDst, 2),
                ],
            ),
        );
        let et = 12 + tags.len() as u16;
        assert_eq!(
            o.layers,
            Layers {
                vlan: Some(12),
                mpls: None,
                ethertype: et,
                l3: Some(et + 2),
                l4: Some(et + 22),
            }
        );
        assert_eq!(o.error, None);
        // Every cut inside the tags is a truncated VLAN.
        for cut in 14..12 + tags.len() + 2 {
            let (k2, o2) = run(&f[..cut]);
            assert_eq!(o2.error, Some(ParseError::TruncatedVlan), "cut {cut}");
            assert_eq!(k2.get(Field::VlanVid), if cut >= 16 { vid } else { 0 });
            assert_eq!(k2.get(Field::EthType), 0);
        }
    }
    // A third tag is not parsed: ETH_TYPE is its TPID.
    let mut f = eth(0);
    f.truncate(12);
    f.extend_from_slice(&[0x88, 0xa8, 0, 1, 0x81, 0x00, 0, 2, 0x81, 0x00, 0, 3, 0x08, 0x00]);
    let (k, o) = run(&f);
    assert_eq!((k.get(Field::EthType), o.layers.ethertype), (0x8100, 20));
    assert_eq!((k.get(Field::VlanVid), o.layers.l3, o.error), (0x1001, None, None));
    // An S-tag inside a C-tag is not a tag: ETH_TYPE 0x88a8.
    let mut f = eth(0);
    f.truncate(12);
    f.extend_from_slice(&[0x81, 0x00, 0, 1, 0x88, 0xa8, 0, 2, 0x08, 0x00]);
    let (k, o) = run(&f);
    assert_eq!((k.get(Field::EthType), o.layers.ethertype), (0x88a8, 16));
}

#[test]
fn ieee_802_3_length_frames() {
    let f = cat(&[&eth(0x0040), &[0xaa, 0xaa, 0x03, 0, 0, 0, 0x08, 0x00], &[0; 40]]);
    let (k, o) = run(&f);
    assert_fields(&k, &eth_fields(0x05ff));
    assert_eq!((o.error, o.layers.ethertype, o.layers.l3), (None, 12, None));
    let mut f = eth(0);
    f.truncate(12);
    f.extend_from_slice(&[0x81, 0x00, 0x00, 0x05, 0x05, 0xff]);
    let (k, o) = run(&f);
    assert_eq!(k.get(Field::EthType), 0x05ff);
    assert_eq!(k.get(Field::VlanVid), 0x1005);
    assert_eq!(o.layers.ethertype, 16);
    // 0x0600 is the first ethertype.
    let (k, _) = run(&eth(0x0600));
    assert_eq!(k.get(Field::EthType), 0x0600);
}

#[test]
fn pbb_isid_and_uca() {
    // TCI 0xe8abcdef: PCP 7, DEI 0, UCA 1, I-SID 0xabcdef.
    let f = cat(&[&eth(0x88e7), &[0xe8, 0xab, 0xcd, 0xef], &DST, &SRC, &[0x08, 0x00]]);
    let (k, o) = run(&f);
    let mut want = eth_fields(0x88e7);
    want.push((Field::PbbIsid, 0xabcdef));
    want.push((Field::PbbUca, 1));
    assert_fields(&k, &want);
    assert_eq!(o.error, None);
    let (k, o) = run(&f[..17]);
    assert_eq!(o.error, Some(ParseError::TruncatedPbb));
    assert_fields(&k, &eth_fields(0x88e7));
}

#[test]
fn mpls_outermost_entry() {
    // label 0xabcde tc 5 bos 0 ttl 64; label 16 tc 0 bos 1; then an IPv4 header.
    let lse1 = (0xabcde << 12 | 5 << 9 | 64u32).to_be_bytes();
    let lse2 = (16 << 12 | 1 << 8 | 63u32).to_be_bytes();
    for ty in [0x8847u16, 0x8848] {
        let f = cat(&[&eth(ty), &lse1, &lse2, &ipv4(6, &[], 0, 0)]);
        let (k, o) = run(&f);
        assert_fields(
            &k,
            &with(
                eth_fields(ty),
                [(Field::MplsLabel, 0xabcde), (Field::MplsTc, 5), (Field::MplsBos, 0)],
            ),
        );
        assert_eq!(o.layers, Layers { mpls: Some(14), ethertype: 12, ..Layers::default() });
        let (k, o) = run(&f[..17]);
        assert_eq!(o.error, Some(ParseError::TruncatedMpls));
        assert_fields(&k, &eth_fields(ty));
    }
    let (k, _) = run(&cat(&[&eth(0x8847), &lse2]));
    assert_eq!((k.get(Field::MplsLabel), k.get(Field::MplsBos)), (16, 1));
}

#[test]
fn arp() {
    let mut a = vec![0, 1, 8, 0, 6, 4, 0, 2];
    a.extend_from_slice(&SRC);
    a.extend_from_slice(&V4_SRC);
    a.extend_from_slice(&DST);
    a.extend_from_slice(&V4_DST);
    let f = cat(&[&eth(0x0806), &a, &[0; 18]]);
    let (k, o) = run(&f);
    assert_fields(
        &k,
        &with(
            eth_fields(0x0806),
            [
                (Field::ArpOp, 2),
                (Field::ArpSha, mac_u(SRC)),
                (Field::ArpTha, mac_u(DST)),
                (Field::Ipv4Src, u32::from_be_bytes(V4_SRC) as u128),
                (Field::Ipv4Dst, u32::from_be_bytes(V4_DST) as u128),
            ],
        ),
    );
    assert_eq!((o.error, o.layers.l3), (None, Some(14)));
    // Non-Ethernet hardware: no ARP fields, no error.
    a[1] = 6;
    let (k, o) = run(&cat(&[&eth(0x0806), &a]));
    assert_fields(&k, &eth_fields(0x0806));
    assert_eq!(o.error, None);
    a[1] = 1;
    for cut in 14..14 + 28 {
        let (_, o) = run(&cat(&[&eth(0x0806), &a])[..cut]);
        assert_eq!(o.error, Some(ParseError::TruncatedArp), "cut {cut}");
    }
}

/// An extension header `nh`, `len8` 8-byte units long (AH: length field in 4-byte units
/// minus 2, so `len8 * 2 - 2`).
fn ext(kind: u8, nh: u8, len8: usize) -> Vec<u8> {
    let mut v = vec![0u8; len8 * 8];
    v[0] = nh;
    v[1] = if kind == 51 { (len8 * 2 - 2) as u8 } else { (len8 - 1) as u8 };
    v
}

fn frag_hdr(nh: u8, offset: u16, more: bool) -> Vec<u8> {
    let mut v = vec![nh, 0];
    v.extend_from_slice(&((offset << 3) | more as u16).to_be_bytes());
    v.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
    v
}

/// Builds IPv6 + a chain of (kind, header bytes) + payload; returns the frame and the
/// offset of the payload.
fn v6_chain(first: u8, exts: &[Vec<u8>], payload: &[u8]) -> (Vec<u8>, usize) {
    let len: usize = exts.iter().map(Vec::len).sum::<usize>() + payload.len();
    let mut f = cat(&[&eth(0x86dd), &ipv6(first, len)]);
    for e in exts {
        f.extend_from_slice(e);
    }
    let at = f.len();
    f.extend_from_slice(payload);
    (f, at)
}

#[test]
fn ipv6_extension_chains() {
    let u = [0x12, 0x34, 0x56, 0x78, 0, 8, 0, 0];
    use ieh::*;
    // The recommended order, all headers: no UNSEQ/UNREP.
    let exts = [
        ext(0, 60, 1),
        ext(60, 43, 2),
        ext(43, 44, 1),
        frag_hdr(51, 0, true),
        ext(51, 60, 2),
        ext(60, 17, 1),
    ];
    let (f, at) = v6_chain(0, &exts, &u);
    let (k, o) = run(&f);
    assert_fields(
        &k,
        &with(
            v6_fields(17, HOP | DEST | ROUTER | FRAG | AUTH, 1),
            [(Field::TpSrc, 0x1234), (Field::TpDst, 0x5678)],
        ),
    );
    assert_eq!(o.error, None);
    assert_eq!(o.layers.l4, Some(at as u16));
    assert_eq!(o.layers.l3, Some(14));

    /// First next header, chain, IpProto, Ipv6Exthdr, IpFrag, L4 parsed.
    type Case = (u8, Vec<Vec<u8>>, u8, u16, u128, bool);
    let cases: Vec<Case> = vec![
        (17, vec![], 17, 0, 0, true),
        // Routing then hop-by-hop: out of sequence.
        (43, vec![ext(43, 0, 1), ext(0, 17, 1)], 17, ROUTER | HOP | UNSEQ, 0, true),
        // Routing twice: repeated.
        (43, vec![ext(43, 43, 1), ext(43, 17, 1)], 17, ROUTER | UNREP, 0, true),
        // Destination options twice around routing: fine; three times: repeated.
        (60, vec![ext(60, 43, 1), ext(43, 60, 1), ext(60, 17, 1)], 17, DEST | ROUTER, 0, true),
        (
            60,
            vec![ext(60, 43, 1), ext(43, 60, 1), ext(60, 60, 1), ext(60, 17, 1)],
            17,
            DEST | ROUTER | UNREP,
            0,
            true,
        ),
        // Auth before fragment: out of sequence.
        (51, vec![ext(51, 44, 3), frag_hdr(17, 0, true)], 17, AUTH | FRAG | UNSEQ, 1, true),
        // Final destination options then routing: out of sequence.
        (
            44,
            vec![frag_hdr(60, 0, false), ext(60, 43, 1), ext(43, 17, 1)],
            17,
            FRAG | DEST | ROUTER | UNSEQ,
            0,
            true,
        ),
        // ESP: stop, IpProto 50.
        (0, vec![ext(0, 50, 1)], 50, HOP | ESP, 0, false),
        (50, vec![], 50, ESP, 0, false),
        // No next header.
        (60, vec![ext(60, 59, 1)], 59, DEST | NONEXT, 0, false),
        (59, vec![], 59, NONEXT, 0, false),
        // A later fragment: IpProto from the fragment header, nothing below.
        (44, vec![frag_hdr(17, 100, true)], 17, FRAG, 3, false),
        (0, vec![ext(0, 44, 1), frag_hdr(60, 7, false)], 60, HOP | FRAG, 3, false),
        // Atomic fragment (offset 0, no more): not a fragment.
        (44, vec![frag_hdr(17, 0, false)], 17, FRAG, 0, true),
        // Unknown upper-layer protocol (GRE).
        (47, vec![], 47, 0, 0, false),
    ];
    for (first, exts, proto, bits, frag, l4) in cases {
        let (f, at) = v6_chain(first, &exts, &u);
        let (k, o) = run(&f);
        let mut want = v6_fields(proto, bits, frag);
        if l4 {
            want.extend([(Field::TpSrc, 0x1234), (Field::TpDst, 0x5678)]);
        }
        assert_fields(&k, &want);
        assert_eq!(o.error, None, "first {first}");
        assert_eq!(o.layers.l4, l4.then_some(at as u16), "first {first}");
    }
}

#[test]
fn ipv6_truncated_extension_headers() {
    let (f, _) = v6_chain(0, &[ext(0, 43, 1), ext(43, 17, 3)], &[]);
    for cut in 54..f.len() {
        let (k, o) = run(&f[..cut]);
        assert_eq!(o.error, Some(ParseError::BadIpv6ExtHeader), "cut {cut}");
        assert!(o.ip_truncated);
        assert_eq!(k.get(Field::IpProto), 0);
        assert_eq!(k.get(Field::Ipv6Src), V6_SRC);
    }
    // The payload length (not the frame) ends the chain.
    let (mut f, _) = v6_chain(0, &[ext(0, 17, 2)], &[]);
    f[18..20].copy_from_slice(&8u16.to_be_bytes());
    let (_, o) = run(&f);
    assert_eq!((o.error, o.ip_truncated), (Some(ParseError::BadIpv6ExtHeader), false));
    let mut bad = cat(&[&eth(0x86dd), &ipv6(17, 0)]);
    bad[14] = 0x45;
    let (k, o) = run(&bad);
    assert_eq!(o.error, Some(ParseError::BadIpv6Header));
    assert_fields(&k, &eth_fields(0x86dd));
    let (_, o) = run(&bad[..53]);
    assert_eq!(o.error, Some(ParseError::TruncatedIpv6));
}

/// An ICMPv6 NS/NA with `target` and `opts`.
fn nd(ty: u8, code: u8, opts: &[u8]) -> (Vec<u8>, usize) {
    let mut m = vec![ty, code, 0, 0, 0x60, 0, 0, 0];
    m.extend_from_slice(&V6_DST.to_be_bytes());
    m.extend_from_slice(opts);
    v6_chain(58, &[], &m)
}

fn ll_opt(ty: u8, m: [u8; 6]) -> Vec<u8> {
    cat(&[&[ty, 1], &m])
}

#[test]
fn neighbour_discovery() {
    let sll = ll_opt(1, SRC);
    let tll = ll_opt(2, DST);
    let nonce = [14, 1, 1, 2, 3, 4, 5, 6];
    let long = {
        let mut v = vec![0u8; 16];
        v[0] = 5;
        v[1] = 2;
        v
    };
    // (type, options, SLL, TLL)
    let cases: Vec<(u8, Vec<u8>, u128, u128)> = vec![
        (135, cat(&[&nonce, &sll, &long]), mac_u(SRC), 0),
        (136, cat(&[&long, &tll]), 0, mac_u(DST)),
        (135, vec![], 0, 0),
        // TLL on an NS and SLL on an NA are ignored.
        (135, tll.clone(), 0, 0),
        (136, sll.clone(), 0, 0),
    ];
    for (ty, opts, want_sll, want_tll) in cases {
        let (f, at) = nd(ty, 0, &opts);
        let (k, o) = run(&f);
        assert_fields(
            &k,
            &with(
                v6_fields(58, 0, 0),
                [
                    (Field::IcmpType, ty as u128),
                    (Field::Ipv6NdTarget, V6_DST),
                    (Field::ArpSha, want_sll),
                    (Field::ArpTha, want_tll),
                ],
            ),
        );
        assert_eq!((o.error, o.layers.l4), (None, Some(at as u16)));
    }
    // Code != 0, or another type: no ND fields.
    let (f, _) = nd(135, 1, &sll);
    let (k, _) = run(&f);
    assert_eq!((k.get(Field::Ipv6NdTarget), k.get(Field::ArpSha)), (0, 0));
    assert_eq!(k.get(Field::IcmpCode), 1);
    let (f, _) = nd(137, 0, &sll);
    let (k, _) = run(&f);
    assert_eq!(k.get(Field::Ipv6NdTarget), 0);
    // Zero-length option; repeated SLL: bad, target kept.
    for opts in [vec![1, 0, 0, 0, 0, 0, 0, 0], cat(&[&sll, &sll])] {
        let (f, _) = nd(135, 0, &opts);
        let (k, o) = run(&f);
        assert_eq!(o.error, Some(ParseError::BadNdOption));
        assert_eq!(k.get(Field::Ipv6NdTarget), V6_DST);
    }
    // Truncated message and options (a cut at an option boundary is a valid message).
    let (f, at) = nd(135, 0, &cat(&[&nonce, &sll]));
    for cut in (at + 4..f.len()).filter(|&c| c != at + 24 && c != at + 32) {
        let (k, o) = run(&f[..cut]);
        assert_eq!(o.error, Some(ParseError::TruncatedNd), "cut {cut}");
        assert_eq!(k.get(Field::IcmpType), 135);
        assert_eq!(k.get(Field::ArpSha), 0);
    }
    // A non-LL option longer than the packet.
    let (f, _) = nd(136, 0, &[5, 3, 0, 0, 0, 0, 0, 0]);
    assert_eq!(run(&f).1.error, Some(ParseError::TruncatedNd));
}

#[test]
fn short_frames() {
    for n in 0..14 {
        let (k, o) = run(&eth(0x0800)[..n]);
        assert_eq!(o.error, Some(ParseError::TruncatedEthernet));
        assert_fields(&k, &[]);
        assert_eq!(o.layers, Layers::default());
    }
    let (k, o) = run(&eth(0x1234));
    assert_fields(&k, &eth_fields(0x1234));
    assert_eq!(o.error, None);
}

#[test]
fn counters_record_and_merge() {
    let mut a = ParseCounters::default();
    a.record(&run(&[0; 3]).1);
    a.record(&run(&eth(0x0800)).1);
    a.record(&run(&eth(0x0800)).1);
    a.record(&run(&eth(0x9999)).1);
    assert_eq!(a.packets, 4);
    assert_eq!(a.truncated_ethernet, 1);
    assert_eq!(a.get(ParseError::TruncatedIpv4), 2);
    assert_eq!(a.errors(), 3);
    let mut b = ParseCounters::default();
    b.record(&ParseOutcome {
        ip_truncated: true,
        error: Some(ParseError::BadNdOption),
        ..ParseOutcome::default()
    });
    b.merge(&a);
    assert_eq!((b.packets, b.ip_truncated, b.errors()), (5, 1, 4));
    for e in ParseError::ALL {
        let mut c = ParseCounters::default();
        c.record(&ParseOutcome { error: Some(e), ..ParseOutcome::default() });
        assert_eq!((c.get(e), c.errors()), (1, 1), "{}", e.name());
    }
}
