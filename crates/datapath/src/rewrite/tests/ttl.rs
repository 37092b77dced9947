//! TTL actions.

use super::frames;
use super::*;
use crate::rewrite::RewriteError;

#[test]
fn nw_ttl_v4_and_v6() {
    let mut c = Case::new(&frames::ipv4_tcp());
    c.apply(&Action::DecNwTtl).unwrap();
    assert_eq!(c.pkt.data()[22], 63);
    verify_checksums(c.pkt.data());
    c.assert_consistent();
    c.apply(&Action::SetNwTtl(1)).unwrap();
    verify_checksums(c.pkt.data());
    c.assert_consistent();
    let before = c.pkt.clone();
    assert_eq!(c.apply(&Action::DecNwTtl), Err(RewriteError::InvalidTtl));
    assert_eq!(c.pkt, before);
    c.apply(&Action::SetNwTtl(0)).unwrap();
    assert_eq!(c.apply(&Action::DecNwTtl), Err(RewriteError::InvalidTtl));

    let mut c = Case::new(&frames::ipv6_udp());
    c.apply(&Action::DecNwTtl).unwrap();
    assert_eq!(c.pkt.data()[21], 63);
    c.assert_consistent();
    verify_checksums(c.pkt.data());
    let mut c = Case::new(&frames::arp());
    assert_eq!(c.apply(&Action::DecNwTtl), Err(RewriteError::MissingHeader));
}

#[test]
fn mpls_ttl_and_copies() {
    let mut c = Case::new(&frames::mpls_ipv4());
    c.apply(&Action::DecMplsTtl).unwrap();
    assert_eq!(c.pkt.data()[17], 32);
    // copy_ttl_in: the IPv4 TTL under the stack, with its checksum.
    c.apply(&Action::CopyTtlIn).unwrap();
    assert_eq!(c.pkt.data()[18 + 8], 32);
    assert_eq!(ones(&c.pkt.data()[18..38]), 0xffff);
    c.apply(&Action::SetMplsTtl(200)).unwrap();
    assert_eq!(c.pkt.data()[17], 200);
    c.apply(&Action::CopyTtlOut).unwrap();
    assert_eq!(c.pkt.data()[17], 32);
    c.apply(&Action::SetMplsTtl(1)).unwrap();
    let before = c.pkt.clone();
    assert_eq!(c.apply(&Action::DecMplsTtl), Err(RewriteError::InvalidTtl));
    assert_eq!(c.pkt, before);
    c.assert_consistent();

    // Two entries: the copies go between them.
    let mut c = Case::new(&frames::ipv6_tcp());
    c.apply(&Action::PushMpls(0x8847)).unwrap();
    assert_eq!(c.pkt.data()[17], 64);
    c.apply(&Action::SetMplsTtl(9)).unwrap();
    c.apply(&Action::PushMpls(0x8847)).unwrap();
    c.apply(&Action::SetMplsTtl(5)).unwrap();
    c.apply(&Action::CopyTtlIn).unwrap();
    assert_eq!((c.pkt.data()[17], c.pkt.data()[21]), (5, 5));
    c.apply(&Action::PopMpls(0x8847)).unwrap();
    c.apply(&Action::SetMplsTtl(77)).unwrap();
    c.apply(&Action::CopyTtlIn).unwrap();
    assert_eq!(c.pkt.data()[18 + 7], 77, "IPv6 hop limit");
    c.apply(&Action::SetMplsTtl(1)).unwrap();
    c.apply(&Action::CopyTtlOut).unwrap();
    assert_eq!(c.pkt.data()[17], 77);

    let mut c = Case::new(&frames::ipv4_tcp());
    for a in [Action::DecMplsTtl, Action::SetMplsTtl(3), Action::CopyTtlIn, Action::CopyTtlOut] {
        assert_eq!(c.apply(&a), Err(RewriteError::MissingHeader), "{a:?}");
    }
}
