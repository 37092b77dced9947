//! The conditional rewrites of OpenFlow 1.0: VLAN sets that push a tag onto an untagged
//! frame, set-fields done only where the packet has the field's header.

use super::frames;
use super::*;

/// `frame` after `a`, checked consistent (key and offsets) and with valid checksums.
fn after(frame: &[u8], a: Action) -> Vec<u8> {
    let mut c = Case::new(frame);
    c.apply(&a).unwrap();
    c.assert_consistent();
    verify_checksums(c.pkt.data());
    c.pkt.data().to_vec()
}

/// The outermost tag's (TPID, TCI) and the number of tags.
fn tag(f: &[u8]) -> ((u16, u16), usize) {
    let tags = (0..).take_while(|i| matches!(be16(f, 12 + 4 * i), 0x8100 | 0x88a8)).count();
    ((be16(f, 12), be16(f, 14)), tags)
}

#[test]
fn mod_vlan_vid_pushes_a_tag_with_pcp_0_on_an_untagged_frame() {
    let orig = frames::ipv4_tcp();
    let got = after(&orig, Action::ModVlanVid(5));
    assert_eq!(tag(&got), ((0x8100, 5), 1));
    assert_eq!(&got[16..], &orig[12..], "the rest of the frame is unchanged");
}

#[test]
fn mod_vlan_vid_rewrites_the_tag_of_a_tagged_frame() {
    let mut orig = frames::vlan_ipv4_udp();
    orig[14] |= 0x60; // PCP 3
    let got = after(&orig, Action::ModVlanVid(5));
    assert_eq!(tag(&got), ((0x8100, 3 << 13 | 5), 1));
    assert_eq!(got.len(), orig.len());
}

#[test]
fn mod_vlan_pcp_pushes_vid_0_or_rewrites_the_pcp() {
    let got = after(&frames::ipv4_tcp(), Action::ModVlanPcp(4));
    assert_eq!(tag(&got), ((0x8100, 4 << 13), 1));
    let got = after(&frames::vlan_ipv4_udp(), Action::ModVlanPcp(4));
    assert_eq!(tag(&got), ((0x8100, 4 << 13 | 100), 1));
}

#[test]
fn set_nw_src_rewrites_ipv4_only() {
    let set = Action::SetFieldIfPresent(Field::Ipv4Src, 0x0a00_0063);
    // ARP's sender address shares the place; the conditional set leaves ARP alone.
    let arp = frames::arp();
    assert_eq!(after(&arp, set.clone()), arp);
    for f in [frames::ipv4_tcp(), frames::vlan_ipv4_udp(), frames::ipv4_icmp()] {
        let got = after(&f, set.clone());
        let (k, l) = parsed(&got, 0);
        assert_eq!(k.get(Field::Ipv4Src), 0x0a00_0063);
        let l3 = usize::from(l.l3.unwrap());
        assert_eq!(got[l3 + 12..l3 + 16], [10, 0, 0, 99]);
    }
    let v6 = frames::ipv6_tcp();
    assert_eq!(after(&v6, set), v6);
}

#[test]
fn set_nw_tos_rewrites_ipv4_and_ipv6() {
    let set = Action::SetFieldIfPresent(Field::IpDscp, 8);
    for f in [frames::ipv4_tcp(), frames::ipv6_tcp()] {
        let (k, _) = parsed(&after(&f, set.clone()), 0);
        assert_eq!(k.get(Field::IpDscp), 8);
    }
    let arp = frames::arp();
    assert_eq!(after(&arp, set), arp);
}

#[test]
fn set_tp_dst_rewrites_tcp_udp_sctp_not_icmp() {
    let set = Action::SetFieldIfPresent(Field::TpDst, 8080);
    for f in [
        frames::ipv4_tcp(),
        frames::vlan_ipv4_udp(),
        frames::ipv6_udp(),
        frames::ipv4_udp_nocsum(),
        frames::ipv4_sctp(),
    ] {
        let (k, _) = parsed(&after(&f, set.clone()), 0);
        assert_eq!(k.get(Field::TpDst), 8080);
    }
    for f in [frames::ipv4_icmp(), frames::ipv6_icmp(), frames::arp()] {
        let mut c = Case::new(&f);
        // Not an error (MissingHeader would count as a fault): the packet passes.
        assert_eq!(c.apply(&set), Ok(()));
        assert_eq!(c.pkt.data(), &f[..]);
    }
}
