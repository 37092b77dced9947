//! The loaded program under BPF_PROG_TEST_RUN, against the model (needs root).

mod common;

use common::{in_fresh_netns, lse, mpls_frame, udp_frame};
use ports::afxdp::AttachMode;
use xdp::layout::{event, FpEntry, FP_DROP, FP_SET_IPV4_DST, FP_SET_TP_SRC, FP_VLAN_PUSH};
use xdp::{model, Attached, FastPath};

const XDP_DROP: u32 = 1;
const XDP_PASS: u32 = 2;
const XDP_REDIRECT: u32 = 4;

/// The program loaded with room for `capacity` entries and `max_ports` ports, attached
/// to the loopback (generic mode, one queue) as port `port`.
fn on_lo(capacity: u32, max_ports: u32, port: u32) -> (FastPath, Attached) {
    let fp = FastPath::load(capacity, max_ports).expect("load");
    let att = fp.attach("lo", 1, port, 1, AttachMode::Generic).expect("attach to lo");
    (fp, att)
}

#[test]
#[ignore = "needs root: network namespaces"]
fn program_agrees_with_the_model() {
    in_fresh_netns(|| {
        let lo = 1;
        let (fp, att) = on_lo(64, 4, 5);
        assert_eq!(att.mode(), AttachMode::Generic);
        assert_eq!(fp.port_slot(5), Some(att.slot()));
        assert_eq!(fp.port_slot(6), None);
        fp.set_version(7).unwrap();
        assert_eq!(fp.version().unwrap(), 7);

        // Miss.
        let f = udp_frame(1000);
        let (rc, _) = fp.test_run(&f, lo, 0).unwrap();
        assert_eq!(rc, XDP_PASS);
        assert_eq!(fp.events()[event::MISS as usize], 1);

        // Hit with rewrites: redirected, bytes as the model says, counted.
        let key = model::parse(&f, 5).unwrap();
        let e = FpEntry {
            version: 7,
            counter: 3,
            out: att.slot(),
            flags: FP_SET_IPV4_DST | FP_SET_TP_SRC | FP_VLAN_PUSH,
            ipv4_dst: 0xc0a8_0001,
            tp_src: 4242,
            vlan_tpid: 0x8100,
            vlan_tci: 0x2064,
            ..FpEntry::default()
        };
        fp.insert(&key, &e).unwrap();
        assert_eq!(fp.entries().unwrap(), vec![(key, e)]);
        let (rc, out) = fp.test_run(&f, lo, 0).unwrap();
        assert_eq!(rc, XDP_REDIRECT);
        assert_eq!(Some(out), model::apply(&f, &e));
        let (rc, _) = fp.test_run(&f, lo, 0).unwrap();
        assert_eq!(rc, XDP_REDIRECT);
        let c = fp.counter(3);
        assert_eq!((c.packets, c.bytes), (2, 2 * f.len() as u64));
        assert_eq!(fp.counter(2).packets, 0);
        assert_eq!(fp.counter(1_000_000).packets, 0);
        assert_eq!(fp.events()[event::HIT as usize], 2);

        // Drop.
        let g = udp_frame(2000);
        let gk = model::parse(&g, 5).unwrap();
        let d = FpEntry { version: 7, counter: 4, out: FP_DROP, ..FpEntry::default() };
        fp.insert(&gk, &d).unwrap();
        let (rc, out) = fp.test_run(&g, lo, 0).unwrap();
        assert_eq!((rc, out), (XDP_DROP, g.clone()));
        assert_eq!(fp.counter(4).packets, 1);

        // Stale: another version is live.
        fp.set_version(8).unwrap();
        let (rc, out) = fp.test_run(&f, lo, 0).unwrap();
        assert_eq!((rc, out), (XDP_PASS, f.clone()));
        assert_eq!(fp.events()[event::STALE as usize], 1);
        fp.set_version(7).unwrap();

        // Rewrite failed: a push on a tagged frame is refused, the frame untouched.
        let mut tagged = f.clone();
        tagged.splice(12..12, [0x81, 0x00, 0x00, 0x05]);
        let tk = model::parse(&tagged, 5).unwrap();
        fp.insert(&tk, &e).unwrap();
        let (rc, out) = fp.test_run(&tagged, lo, 0).unwrap();
        assert_eq!((rc, out), (XDP_PASS, tagged.clone()));
        assert_eq!(fp.events()[event::REWRITE_FAILED as usize], 1);

        // Pop (with a port rewrite) on the tagged frame: the tag leaves, bytes as modelled.
        let pop = FpEntry {
            flags: xdp::layout::FP_VLAN_POP | FP_SET_TP_SRC | xdp::layout::FP_SET_ETH_SRC,
            eth_src: [0x0a, 0, 0, 0, 0, 0x0b],
            ..e
        };
        fp.insert(&tk, &pop).unwrap();
        let (rc, out) = fp.test_run(&tagged, lo, 0).unwrap();
        assert_eq!(rc, XDP_REDIRECT);
        assert_eq!(out.len(), tagged.len() - 4);
        assert_eq!(Some(out), model::apply(&tagged, &pop));
        fp.remove(&tk).unwrap();

        // Unparsed: IPv6 ethertype, a double tag, a fragment.
        let mut v6 = f.clone();
        v6[12..14].copy_from_slice(&[0x86, 0xdd]);
        let mut frag = f.clone();
        frag[20] = 0x20;
        let mut double = tagged.clone();
        double.splice(12..12, [0x88, 0xa8, 0x00, 0x06]);
        for u in [&v6, &frag, &double] {
            assert_eq!(model::parse(u, 5), None);
            let (rc, _) = fp.test_run(u, lo, 0).unwrap();
            assert_eq!(rc, XDP_PASS);
        }
        assert_eq!(fp.events()[event::UNPARSED as usize], 3);

        // Removal.
        assert!(fp.remove(&key).unwrap());
        assert!(!fp.remove(&key).unwrap());
        let (rc, _) = fp.test_run(&f, lo, 0).unwrap();
        assert_eq!(rc, XDP_PASS);
        assert_eq!(fp.events()[event::MISS as usize], 2);

        // Detach frees the slot and the port record: frames then pass uncounted.
        drop(att);
        assert_eq!(fp.port_slot(5), None);
        let before = fp.events();
        let (rc, _) = fp.test_run(&g, lo, 0).unwrap();
        assert_eq!(rc, XDP_PASS);
        assert_eq!(fp.events(), before);
    });
}

#[test]
#[ignore = "needs root: network namespaces"]
fn full_map_is_reported() {
    in_fresh_netns(|| {
        let fp = FastPath::load(2, 1).expect("load");
        let e = FpEntry::default();
        for i in 0..2u16 {
            let k = model::parse(&udp_frame(i), 1).unwrap();
            fp.insert(&k, &e).unwrap();
        }
        let k = model::parse(&udp_frame(99), 1).unwrap();
        assert!(matches!(fp.insert(&k, &e), Err(xdp::FastPathError::Full { capacity: 2 })));
    });
}

#[test]
#[ignore = "needs root: network namespaces"]
fn program_builds_the_model_key() {
    in_fresh_netns(|| {
        let (fp, _att) = on_lo(16, 1, 9);
        let udp = udp_frame(7);
        let mut tagged = udp.clone();
        tagged.splice(12..12, [0x88, 0xa8, 0xe0, 0x07]);
        let mut gre = udp.clone();
        gre[23] = 47;
        let mut icmp = udp.clone();
        icmp[23] = 1;
        let mut lldp = udp.clone();
        lldp[12..14].copy_from_slice(&[0x88, 0xcc]);
        let mut tcp = udp.clone();
        tcp[23] = 6;
        tcp[16..18].copy_from_slice(&40u16.to_be_bytes());
        tcp[34 + 12] = 0x50;
        tcp[34 + 13] = 0x18;
        let mpls = mpls_frame(None, 0x8847, &[lse(0xabcde, 5, 0, 17), lse(3, 0, 1, 9)], 52);
        let mpls_tagged = mpls_frame(Some(0x2007), 0x8848, &[lse(1, 2, 1, 0)], 40);
        let frames = [udp, tagged, gre, icmp, lldp, tcp, mpls, mpls_tagged];
        for (i, f) in frames.iter().enumerate() {
            let key = model::parse(f, 9).unwrap_or_else(|| panic!("frame {i} parses"));
            let e = FpEntry { counter: i as u32, out: FP_DROP, ..FpEntry::default() };
            fp.insert(&key, &e).unwrap();
            let (rc, _) = fp.test_run(f, 1, 0).unwrap();
            assert_eq!(rc, XDP_DROP, "frame {i}: the program's key differs");
            assert_eq!(fp.counter(i as u32).packets, 1, "frame {i}");
        }
        assert_eq!(fp.events()[event::HIT as usize], frames.len() as u64);
    });
}

#[test]
#[ignore = "needs root: network namespaces"]
fn megaflow_masks_cover_every_key_equal_under_them() {
    use xdp::layout::{FpKey, FP_EXACT_MASK};
    in_fresh_netns(|| {
        let (fp, _att) = on_lo(16, 1, 9);
        fp.set_version(3).unwrap();
        // Slot 5: the input port, the ethertype, the protocol and the /24 of the
        // destination (what a rule `ip,nw_dst=10.0.0.0/24` consults).
        let mask = FpKey {
            in_port: u32::MAX,
            eth_type: u16::MAX,
            ip_proto: u8::MAX,
            ipv4_dst: 0xffff_ff00,
            ..FpKey::default()
        };
        fp.set_mask(5, &mask).unwrap();
        fp.set_walk(&[FP_EXACT_MASK, 5]).unwrap();
        let first = udp_frame(1000);
        let key = model::parse(&first, 9).unwrap();
        let drop_at = |counter: u32, version: u64| FpEntry {
            version,
            counter,
            out: FP_DROP,
            ..FpEntry::default()
        };
        fp.insert(&key.masked(&mask, 5), &drop_at(1, 3)).unwrap();
        // Other source ports: the same megaflow, served from their first frame.
        for sport in [1000, 1001, 40000] {
            let (rc, _) = fp.test_run(&udp_frame(sport), 1, 0).unwrap();
            assert_eq!(rc, XDP_DROP, "source port {sport}");
        }
        assert_eq!(fp.counter(1).packets, 3);
        // Another /24: not covered.
        let mut far = udp_frame(1000);
        far[32] = 9;
        far[24..26].copy_from_slice(&[0, 0]);
        let c = common::csum(&far[14..34]);
        far[24..26].copy_from_slice(&c.to_be_bytes());
        let (rc, _) = fp.test_run(&far, 1, 0).unwrap();
        assert_eq!(rc, XDP_PASS);
        assert_eq!(fp.events()[event::MISS as usize], 1);
        // A stale exact entry walked first does not hide the live megaflow behind it.
        fp.insert(&key.masked(&FpKey::EXACT, FP_EXACT_MASK), &drop_at(2, 2)).unwrap();
        let (rc, _) = fp.test_run(&first, 1, 0).unwrap();
        assert_eq!(rc, XDP_DROP);
        assert_eq!((fp.counter(1).packets, fp.counter(2).packets), (4, 0));
        // Only stale entries: STALE. A mask no longer walked is not consulted: MISS.
        fp.set_version(4).unwrap();
        let (rc, _) = fp.test_run(&first, 1, 0).unwrap();
        assert_eq!(rc, XDP_PASS);
        assert_eq!(fp.events()[event::STALE as usize], 1);
        fp.insert(&key.masked(&mask, 5), &drop_at(1, 4)).unwrap();
        fp.set_walk(&[FP_EXACT_MASK]).unwrap();
        let (rc, _) = fp.test_run(&udp_frame(1001), 1, 0).unwrap();
        assert_eq!(rc, XDP_PASS);
        assert_eq!(fp.events()[event::MISS as usize], 2);
    });
}

#[test]
#[ignore = "needs root: network namespaces"]
fn mpls_frames_and_rewrites_agree_with_the_model() {
    use xdp::layout::*;
    in_fresh_netns(|| {
        let (fp, att) = on_lo(64, 4, 5);
        fp.set_version(1).unwrap();
        let mut frames = Vec::new();
        for tci in [None, Some(0x6005)] {
            for ty in [0x8847, 0x8848] {
                for stack in [
                    vec![lse(100, 3, 1, 64)],
                    vec![lse(100, 3, 0, 2), lse(200, 0, 1, 9)],
                    vec![lse(7, 0, 1, 1)],
                ] {
                    for ip_len in [20, 42, 80] {
                        frames.push(mpls_frame(tci, ty, &stack, ip_len));
                    }
                }
                // Ethernet padding below the stack (user space trims it after a pop).
                let mut padded = mpls_frame(tci, ty, &[lse(1, 0, 1, 64)], 50);
                padded.extend_from_slice(&[0; 12]);
                frames.push(padded);
            }
            // An IPv4 frame, for the pushes.
            let mut udp = udp_frame(9);
            if let Some(t) = tci {
                udp.splice(12..12, [0x81, 0x00, (t >> 8) as u8, t as u8]);
            }
            frames.push(udp);
        }
        let entry = |flags: u32, word: u32| {
            let mut e = FpEntry {
                version: 1,
                counter: 1,
                out: att.slot(),
                flags,
                eth_src: [0x0a, 0, 0, 0, 0, 0x0b],
                vlan_tpid: 0x88a8,
                vlan_tci: 0x2064,
                ip_ttl: 3,
                ..FpEntry::default()
            };
            e.set_mpls_word(word);
            e
        };
        let mut entries = Vec::new();
        for ty in [0x0800u32, 0x86dd, 0x8847, 0x8848] {
            for extra in [0, FP_MPLS_TTL_CHECK, FP_VLAN_POP | FP_SET_ETH_SRC, FP_VLAN_PUSH] {
                entries.push(entry(FP_MPLS_POP | extra, ty << 16));
            }
        }
        let swap = lse(0x12345, 6, 1, 200);
        for flags in [
            FP_MPLS_SET,
            FP_MPLS_SET | FP_MPLS_TTL_SET | FP_VLAN_SET,
            FP_MPLS_TTL_DEC | FP_SET_ETH_SRC,
            FP_MPLS_TTL_SET | FP_MPLS_TTL_CHECK | FP_VLAN_PUSH,
            FP_MPLS_PUSH,
            FP_MPLS_PUSH | FP_MPLS_MCAST | FP_SET_TTL | FP_VLAN_POP,
            FP_MPLS_PUSH | FP_VLAN_PUSH,
        ] {
            entries.push(entry(flags, swap));
        }
        let (mut served, mut refused) = (0, 0);
        for (i, f) in frames.iter().enumerate() {
            let key = model::parse(f, 5).unwrap_or_else(|| panic!("frame {i} parses"));
            for (j, e) in entries.iter().enumerate() {
                fp.insert(&key, e).unwrap();
                let (rc, out) = fp.test_run(f, 1, 0).unwrap();
                let what = format!("frame {i} entry {j} ({})", e.describe());
                match model::apply(f, e) {
                    Some(m) => {
                        assert_eq!(rc, XDP_REDIRECT, "{what}");
                        assert_eq!(out, m, "{what}");
                        served += 1;
                    }
                    None => {
                        assert_eq!((rc, &out), (XDP_PASS, f), "{what}");
                        refused += 1;
                    }
                }
            }
        }
        let ev = fp.events();
        assert_eq!(ev[event::HIT as usize], served);
        assert_eq!(ev[event::REWRITE_FAILED as usize], refused);
        assert!(served > 150 && refused > 100, "{served} served, {refused} refused");
        drop(att);
    });
}

/// An Ethernet/IPv4 TCP (proto 6) or UDP (17) frame with `payload` bytes whose L4
/// checksum field holds the pseudo-header's sum only (as a sender with checksum
/// offload leaves it), and the same frame with the full checksum.
fn offloaded_frame(proto: u8, payload: usize) -> (Vec<u8>, Vec<u8>) {
    let mut l4 = if proto == 6 {
        let mut t = vec![0u8; 20];
        t[..4].copy_from_slice(&[0x9c, 0x40, 0x14, 0x51]);
        t[12] = 0x50;
        t[13] = 0x18;
        t
    } else {
        let mut u = vec![0x9c, 0x40, 0x00, 0x35, 0, 0, 0, 0];
        u[4..6].copy_from_slice(&((8 + payload) as u16).to_be_bytes());
        u
    };
    l4.extend((0..payload).map(|i| (i * 13 + 5) as u8));
    let mut ip = vec![0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, proto, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
    ip[2..4].copy_from_slice(&((20 + l4.len()) as u16).to_be_bytes());
    let c = common::csum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let mut pseudo = ip[12..20].to_vec();
    pseudo.extend_from_slice(&[0, proto]);
    pseudo.extend_from_slice(&(l4.len() as u16).to_be_bytes());
    let at = if proto == 6 { 16 } else { 6 };
    let partial = !common::csum(&pseudo);
    let full = common::csum(&[pseudo.clone(), l4.clone()].concat());
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
    f.extend_from_slice(&ip);
    let mut part = f.clone();
    let mut l4p = l4.clone();
    l4p[at..at + 2].copy_from_slice(&partial.to_be_bytes());
    l4[at..at + 2].copy_from_slice(&full.to_be_bytes());
    part.extend_from_slice(&l4p);
    f.extend_from_slice(&l4);
    for x in [&mut part, &mut f] {
        if x.len() < 60 {
            x.resize(60, 0);
        }
    }
    (part, f)
}

#[test]
#[ignore = "needs root: network namespaces"]
fn unfinished_checksums_are_finished_on_a_hit_as_the_model_says() {
    in_fresh_netns(|| {
        let csa = common::veth("csa", "csb");
        // GRO on at the peer: the veth takes the XDP frames the program sends it.
        common::run_ok("ethtool", &["-K", "csb", "gro", "on"]);
        let fp = FastPath::load(64, 4).expect("load");
        // Frames "arrive" on the veth, attached natively, and on the loopback, which has
        // generic mode only.
        let native = fp.attach("csa", csa, 5, 1, AttachMode::Native).expect("native XDP on a veth");
        let generic = fp.attach("lo", 1, 6, 1, AttachMode::Generic).expect("attach to lo");
        fp.set_version(1).unwrap();
        let mut n = 0;
        for proto in [6u8, 17] {
            for payload in [0usize, 1, 2, 63, 64, 511, 512, 513, 1000, 1460] {
                let (part, full) = offloaded_frame(proto, payload);
                let key = model::parse(&part, 5).expect("parses");
                // A miss goes to user space unmodified.
                fp.remove(&key).unwrap();
                let (rc, out) = fp.test_run(&part, csa, 0).unwrap();
                assert_eq!((rc, &out), (XDP_PASS, &part), "miss, {proto}/{payload}");
                let e = FpEntry {
                    version: 1,
                    counter: 1,
                    out: native.slot(),
                    flags: FP_SET_TP_SRC,
                    tp_src: 4242,
                    ..FpEntry::default()
                };
                fp.insert(&key, &e).unwrap();
                let (rc, out) = fp.test_run(&part, csa, 0).unwrap();
                assert_eq!(rc, XDP_REDIRECT, "{proto}/{payload}");
                assert_eq!(Some(&out), model::apply(&part, &e).as_ref(), "{proto}/{payload}");
                assert_eq!(Some(out), model::apply(&full, &e), "{proto}/{payload}");
                n += 1;
                // From a generic-mode port the frame goes to user space as it is.
                let gkey = model::parse(&part, 6).unwrap();
                fp.insert(&gkey, &e).unwrap();
                let (rc, out) = fp.test_run(&part, 1, 0).unwrap();
                assert_eq!((rc, &out), (XDP_PASS, &part), "generic, {proto}/{payload}");
                let (rc, _) = fp.test_run(&full, 1, 0).unwrap();
                assert_eq!(rc, XDP_REDIRECT, "a finished checksum is served from generic");
            }
        }
        assert_eq!(fp.events()[event::CSUM_FINISHED as usize], n);
        assert_eq!(fp.events()[event::PARTIAL_CSUM as usize], n);
        drop((native, generic));
    });
}
