//! Push and pop of VLAN, MPLS and PBB headers: exact bytes and offsets.

use super::frames;
use super::*;
use crate::rewrite::RewriteError;

/// `orig` up to `head`, then `insert`, then `orig` from `tail`.
fn spliced(orig: &[u8], head: usize, insert: &[u8], tail: usize) -> Vec<u8> {
    [&orig[..head], insert, &orig[tail..]].concat()
}

#[test]
fn push_vlan_on_untagged_then_pop() {
    let orig = frames::ipv4_tcp();
    let mut c = Case::new(&orig);
    c.apply(&Action::PushVlan(0x8100)).unwrap();
    assert_eq!(c.pkt.data(), spliced(&orig, 12, &[0x81, 0x00, 0, 0], 12));
    assert_eq!(c.key.get(Field::VlanVid), 0x1000);
    c.assert_consistent();
    verify_checksums(c.pkt.data());
    c.apply(&Action::PopVlan).unwrap();
    assert_eq!(c.pkt.data(), &orig[..]);
    c.assert_consistent();
}

#[test]
fn push_vlan_copies_the_outer_tag() {
    let mut orig = frames::vlan_ipv4_udp();
    orig[14] |= 0xb0; // PCP 5, DEI 1
    let mut c = Case::new(&orig);
    c.apply(&Action::PushVlan(0x88a8)).unwrap();
    assert_eq!(c.pkt.data(), spliced(&orig, 12, &[0x88, 0xa8, 0xa0, 100], 12));
    assert_eq!(c.layers.vlan, Some(12));
    assert_eq!(c.layers.ethertype, 20);
    assert_eq!(c.layers.l3, Some(22));
    c.assert_consistent();
    c.apply(&Action::SetField(Field::VlanVid, 0x1000 | 7)).unwrap();
    c.apply(&Action::PopVlan).unwrap();
    assert_eq!(c.pkt.data(), &orig[..]);
    assert_eq!(c.key.get(Field::VlanVid), 0x1000 | 100);
    c.assert_consistent();
    c.apply(&Action::PopVlan).unwrap();
    c.assert_consistent();
    assert_eq!(c.layers.vlan, None);
    assert_eq!(c.apply(&Action::PopVlan), Err(RewriteError::MissingHeader));
}

#[test]
fn push_mpls_on_ip_takes_the_ip_ttl() {
    let orig = frames::vlan_ipv4_udp();
    let mut c = Case::new(&orig);
    c.apply(&Action::PushMpls(0x8847)).unwrap();
    assert_eq!(c.pkt.data(), spliced(&orig, 16, &[0x88, 0x47, 0, 0, 0x01, 64], 18));
    assert_eq!(c.layers.mpls, Some(18));
    assert_eq!(c.key.get(Field::MplsBos), 1);
    assert_eq!(c.key.get(Field::Ipv4Src), 0);
    c.assert_consistent();
    // A second push copies label, TC and TTL and clears bottom-of-stack.
    c.apply(&Action::SetField(Field::MplsLabel, 99)).unwrap();
    c.apply(&Action::PushMpls(0x8848)).unwrap();
    assert_eq!(&c.pkt.data()[16..26], &[0x88, 0x48, 0, 0x06, 0x30, 64, 0, 0x06, 0x31, 64]);
    assert_eq!((c.key.get(Field::MplsLabel), c.key.get(Field::MplsBos)), (99, 0));
    c.assert_consistent();
    c.apply(&Action::PopMpls(0x8847)).unwrap();
    assert_eq!(&c.pkt.data()[16..22], &[0x88, 0x47, 0, 0x06, 0x31, 64]);
    assert_eq!((c.key.get(Field::MplsLabel), c.key.get(Field::MplsBos)), (99, 1));
    c.assert_consistent();
    c.apply(&Action::PopMpls(0x0800)).unwrap();
    assert_eq!(c.pkt.data()[..16], orig[..16]);
    assert_eq!(c.pkt.data()[16..], orig[16..]);
    assert_eq!(c.apply(&Action::PopMpls(0x0800)), Err(RewriteError::MissingHeader));
}

#[test]
fn pop_mpls_to_ip_pads_afresh_to_the_minimum_frame() {
    // A short IPv4/ICMP packet under one label, padded to the 60-byte minimum.
    let ip_packet: Vec<u8> = {
        let mut ip = vec![0x45, 0, 0, 28, 0, 1, 0, 0, 64, 1, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
        let c = !super::ones(&ip) as u16;
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        ip.extend_from_slice(&[8, 0, 0xf7, 0xff, 0, 0, 0, 0]);
        ip
    };
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x88, 0x47, 0, 0x01, 0x01, 64];
    f.extend_from_slice(&ip_packet);
    // Non-zero padding shows that the old padding goes, not just that zeros are added.
    f.resize(60, 0xee);
    let mut c = Case::new(&f);
    c.apply(&Action::PopMpls(0x0800)).unwrap();
    assert_eq!(c.pkt.len(), 60, "padded to the minimum");
    assert_eq!(&c.pkt.data()[14..42], &ip_packet[..]);
    assert!(c.pkt.data()[42..].iter().all(|&b| b == 0), "fresh zero padding");
    assert_eq!(&c.pkt.data()[12..14], &[0x08, 0x00]);
    c.assert_consistent();
    // A length that does not fit keeps what followed, padded to the minimum.
    let mut g = f.clone();
    g[18 + 3] = 200;
    let mut c = Case::new(&g);
    c.apply(&Action::PopMpls(0x0800)).unwrap();
    assert_eq!(c.pkt.len(), 60);
    assert_eq!(&c.pkt.data()[54..56], &[0xee, 0xee]);
}

#[test]
fn push_mpls_on_non_ip_has_ttl_zero() {
    let orig = frames::arp();
    let mut c = Case::new(&orig);
    c.apply(&Action::PushMpls(0x8847)).unwrap();
    assert_eq!(&c.pkt.data()[12..18], &[0x88, 0x47, 0, 0, 0x01, 0]);
    assert_eq!(c.pkt.data()[18..], orig[14..]);
    c.assert_consistent();
}

#[test]
fn push_pbb_puts_an_itag_in_front() {
    let mut orig = frames::vlan_ipv4_udp();
    orig[14] |= 0x60; // PCP 3
    let mut c = Case::new(&orig);
    c.apply(&Action::PushPbb(0x88e7)).unwrap();
    assert_eq!(c.pkt.data(), spliced(&orig, 12, &[0x88, 0xe7, 0x60, 0, 0, 0], 0));
    assert_eq!(c.key.get(Field::EthType), 0x88e7);
    assert_eq!((c.layers.ethertype, c.layers.l3), (12, None));
    c.assert_consistent();
    // A second push keeps the I-SID.
    c.apply(&Action::SetField(Field::PbbIsid, 0xabcdef)).unwrap();
    c.assert_consistent();
    c.apply(&Action::SetField(Field::PbbUca, 1)).unwrap();
    assert_eq!(&c.pkt.data()[12..18], &[0x88, 0xe7, 0x68, 0xab, 0xcd, 0xef]);
    assert_eq!((c.key.get(Field::PbbUca), c.key.get(Field::PbbIsid)), (1, 0xabcdef));
    c.assert_consistent();
    c.apply(&Action::SetField(Field::PbbUca, 0)).unwrap();
    c.assert_consistent();
    c.apply(&Action::PushPbb(0x88e7)).unwrap();
    assert_eq!(&c.pkt.data()[12..18], &[0x88, 0xe7, 0, 0xab, 0xcd, 0xef]);
    assert_eq!(c.key.get(Field::PbbIsid), 0xabcdef);
    c.assert_consistent();
    c.apply(&Action::PopPbb).unwrap();
    assert_eq!(c.key.get(Field::PbbIsid), 0xabcdef);
    c.assert_consistent();
    c.apply(&Action::PopPbb).unwrap();
    assert_eq!(c.pkt.data(), &orig[..]);
    assert_eq!(c.key.get(Field::PbbIsid), 0);
    assert_eq!(c.layers.vlan, Some(12));
    c.assert_consistent();
    assert_eq!(c.apply(&Action::PopPbb), Err(RewriteError::MissingHeader));
}

#[test]
fn pop_on_missing_headers_leaves_everything() {
    for a in [Action::PopVlan, Action::PopMpls(0x0800), Action::PopPbb] {
        let mut c = Case::new(&frames::ipv4_tcp());
        let (p, k, l) = (c.pkt.clone(), c.key, c.layers);
        assert_eq!(c.apply(&a), Err(RewriteError::MissingHeader), "{a:?}");
        assert_eq!((c.pkt, c.key, c.layers), (p, k, l));
    }
    let mut c = Case::new(&[0u8; 10]);
    for a in [Action::PushVlan(0x8100), Action::PushMpls(0x8847), Action::PushPbb(0x88e7)] {
        assert_eq!(c.apply(&a), Err(RewriteError::MissingHeader), "{a:?}");
    }
}

#[test]
fn not_rewrites() {
    let mut c = Case::new(&frames::ipv4_tcp());
    for a in [
        Action::Output(1),
        Action::Controller { max_len: 128 },
        Action::Group(1),
        Action::SetQueue(1),
    ] {
        assert_eq!(c.apply(&a), Err(RewriteError::NotARewrite));
    }
}

#[test]
fn push_beyond_headroom_still_works() {
    let orig = frames::ipv4_tcp();
    let mut c = Case::new(&orig);
    for _ in 0..20 {
        c.apply(&Action::PushVlan(0x8100)).unwrap();
        c.assert_consistent();
    }
    assert_eq!(c.pkt.len(), orig.len() + 80);
    // The parser reads two tags; the third TPID is the ethertype.
    assert_eq!(c.layers.ethertype, 20);
    assert_eq!(c.key.get(Field::EthType), 0x8100);
    assert_eq!(c.layers.l3, None);
    for _ in 0..20 {
        c.apply(&Action::PopVlan).unwrap();
        c.assert_consistent();
    }
    assert_eq!(c.pkt.data(), &orig[..]);
    assert_eq!(c.layers.l3, Some(14));
    verify_checksums(c.pkt.data());
}

#[test]
fn tags_past_the_second_change_what_follows() {
    // A C-tag pushed on a QinQ frame: the S-tag, now second, is not read as a tag (only
    // 0x8100 is, inside), so its TPID becomes the ethertype.
    let orig = frames::qinq_ipv4_udp();
    let mut c = Case::new(&orig);
    assert_eq!(c.layers.l3, Some(22));
    c.apply(&Action::PushVlan(0x8100)).unwrap();
    assert_eq!(c.key.get(Field::EthType), 0x88a8);
    assert_eq!((c.layers.ethertype, c.layers.l3), (16, None));
    assert_eq!(c.key.get(Field::Ipv4Src), 0);
    c.assert_consistent();
    c.apply(&Action::PopVlan).unwrap();
    assert_eq!(c.pkt.data(), &orig[..]);
    assert_eq!(c.key.get(Field::Ipv4Src), 0x0a00_0001);
    c.assert_consistent();
    // Three tags with 0x8100 second: the parser stops at the third TPID.
    let mut c = Case::new(&frames::three_tags());
    assert_eq!(c.key.get(Field::EthType), 0x8100);
    assert_eq!((c.layers.ethertype, c.layers.l3), (20, None));
    c.apply(&Action::PopVlan).unwrap();
    assert_eq!((c.layers.ethertype, c.layers.l3), (20, Some(22)));
    assert_eq!(c.key.get(Field::VlanVid), 0x1000 | 7);
    c.assert_consistent();

    // An S-tag inside an S-tag is an ethertype; popping the outer one makes it a tag.
    let mut c = Case::new(&frames::stag_stag());
    assert_eq!((c.key.get(Field::EthType), c.layers.l3), (0x88a8, None));
    c.apply(&Action::PopVlan).unwrap();
    assert_eq!(c.key.get(Field::EthType), 0x0800);
    assert_eq!(c.key.get(Field::VlanVid), 0x1000 | 9);
    assert_eq!((c.layers.ethertype, c.layers.l3), (16, Some(18)));
    c.assert_consistent();

    // A tag pushed on a single S-tag leaves it as the ethertype.
    let mut c = Case::new(&frames::tagged(&frames::ipv4_tcp(), 0x88a8, 5));
    c.apply(&Action::PushVlan(0x8100)).unwrap();
    assert_eq!((c.key.get(Field::EthType), c.layers.l3), (0x88a8, None));
    c.assert_consistent();
}

#[test]
fn push_mpls_on_pbb_hides_the_itag() {
    let mut c = Case::new(&frames::pbb());
    assert_eq!(c.key.get(Field::PbbIsid), 0x0abcde);
    c.apply(&Action::PushMpls(0x8847)).unwrap();
    assert_eq!(c.key.get(Field::PbbIsid), 0);
    c.assert_consistent();
}
