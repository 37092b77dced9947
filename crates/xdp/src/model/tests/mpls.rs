//! The model's MPLS parse and rewrites against the userspace parser and rewrites.

use super::*;

/// A label stack entry.
fn lse(label: u32, tc: u32, bos: u32, ttl: u32) -> u32 {
    (label << 12) | (tc << 9) | (bos << 8) | ttl
}

/// An MPLS frame: MACs, an optional tag, ethertype `ty`, the `stack`, then `payload`.
fn mpls_frame(tag: Option<(u16, u16)>, ty: u16, stack: &[u32], payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1];
    if let Some((tpid, tci)) = tag {
        f.extend_from_slice(&tpid.to_be_bytes());
        f.extend_from_slice(&tci.to_be_bytes());
    }
    f.extend_from_slice(&ty.to_be_bytes());
    for e in stack {
        f.extend_from_slice(&e.to_be_bytes());
    }
    f.extend_from_slice(payload);
    f
}

/// An IPv4 packet of `len` bytes (header and GRE-numbered payload, checksums valid).
fn ip4_packet(len: usize) -> Vec<u8> {
    let f =
        ipv4(&Spec { proto: 47, l4: (0..len - 20).map(|i| i as u8).collect(), ..Spec::default() });
    f[14..14 + len].to_vec()
}

/// An IPv6 header with payload length `plen`, then `have` payload bytes.
fn ip6_packet(plen: u16, have: usize) -> Vec<u8> {
    let mut p = vec![0x60, 0, 0, 0];
    p.extend_from_slice(&plen.to_be_bytes());
    p.extend_from_slice(&[59, 64]);
    p.extend((0..32).map(|i| i as u8));
    p.extend(std::iter::repeat_n(0xa5, have));
    p
}

/// The userspace actions of `e`'s MPLS rewrites, in the program's order.
pub(super) fn actions(e: &FpEntry) -> Vec<Action> {
    let f = e.flags;
    let w = e.mpls_word();
    let fields = |a: &mut Vec<Action>| {
        a.push(Action::SetField(Field::MplsLabel, (w >> 12).into()));
        a.push(Action::SetField(Field::MplsTc, ((w >> 9) & 7).into()));
        a.push(Action::SetField(Field::MplsBos, ((w >> 8) & 1).into()));
    };
    let mut a = Vec::new();
    if f & FP_MPLS_PUSH != 0 {
        let ty = if f & FP_MPLS_MCAST != 0 { 0x8848 } else { 0x8847 };
        a.push(Action::PushMpls(ty));
        fields(&mut a);
        a.push(Action::SetMplsTtl(w as u8));
        return a;
    }
    if f & (FP_MPLS_TTL_CHECK | FP_MPLS_TTL_DEC) != 0 {
        a.push(Action::DecMplsTtl);
    }
    if f & FP_MPLS_POP != 0 {
        a.push(Action::PopMpls(e.tp_src));
        return a;
    }
    if f & FP_MPLS_SET != 0 {
        fields(&mut a);
    }
    if f & FP_MPLS_TTL_SET != 0 {
        a.push(Action::SetMplsTtl(w as u8));
    }
    a
}

/// `actions(e)` with the VLAN rewrites before the MPLS ones (user space may run them in
/// either order).
fn vlan_first(e: &FpEntry) -> Vec<Action> {
    let all = super::actions(e);
    let vlan = |a: &Action| {
        matches!(
            a,
            Action::PopVlan
                | Action::PushVlan(_)
                | Action::SetField(Field::VlanVid | Field::VlanPcp, _)
        )
    };
    let mpls: Vec<Action> = actions(e);
    let mut out: Vec<Action> = all
        .iter()
        .filter(|a| !vlan(a) && !mpls.contains(a) && !matches!(a, Action::Output(_)))
        .cloned()
        .collect();
    out.extend(all.iter().filter(|a| vlan(a)).cloned());
    out.extend(mpls);
    out.push(Action::Output(2));
    out
}

fn datapath() -> Datapath {
    let (dp, _wr, _rx) = Datapath::new(
        DatapathConfig {
            ports: vec![PortInfo::new(1, 0), PortInfo::new(2, 1)],
            ..DatapathConfig::default()
        },
        8,
    );
    dp
}

/// The frame `dp` sends first for a packet-out of `f` with `actions` (from port 1).
fn sent(dp: &Datapath, f: &[u8], actions: &[Action]) -> Option<Vec<u8>> {
    let t = dp.trace_packet_out(f, 1, actions, 0);
    t.outputs.tx.first().map(|tx| tx.packet.data().to_vec())
}

fn mpls_frames() -> Vec<Vec<u8>> {
    let payloads = [
        ip4_packet(60),
        // Ethernet padding after the IP packet, which user space trims after a pop.
        [ip4_packet(28), vec![0; 18]].concat(),
        ip4_packet(28),
        ip6_packet(20, 20),
        ip6_packet(8, 20),
        vec![0x5a; 50],
        vec![0x5a; 3],
    ];
    let stacks = [
        vec![lse(100, 3, 1, 64)],
        vec![lse(100, 3, 0, 64), lse(200, 0, 1, 9)],
        vec![lse(0xf_ffff, 7, 1, 2)],
        vec![lse(1, 0, 1, 1)],
        vec![lse(1, 0, 1, 0)],
    ];
    let mut v = Vec::new();
    for tag in [None, Some((0x8100, 0x6005)), Some((0x88a8, 0x0fff))] {
        for ty in [0x8847, 0x8848] {
            for stack in &stacks {
                for p in &payloads {
                    v.push(mpls_frame(tag, ty, stack, p));
                }
            }
        }
    }
    v
}

fn mpls_entries() -> Vec<FpEntry> {
    let base = FpEntry {
        out: 1,
        eth_dst: [0x0a, 1, 2, 3, 4, 5],
        vlan_tci: 0x4123,
        vlan_tpid: 0x8100,
        ..FpEntry::default()
    };
    let word = |flags: u32, w: u32| {
        let mut e = FpEntry { flags, ..base };
        e.set_mpls_word(w);
        e
    };
    let swap = lse(777, 5, 1, 33);
    let mut v = Vec::new();
    for ty in [0x0800, 0x86dd, 0x8847, 0x8848, 0x88cc] {
        for extra in [0, FP_MPLS_TTL_CHECK, FP_SET_ETH_DST | FP_VLAN_POP, FP_VLAN_PUSH] {
            v.push(word(FP_MPLS_POP | extra, u32::from(ty as u16) << 16));
        }
    }
    for flags in [
        FP_MPLS_SET,
        FP_MPLS_TTL_SET,
        FP_MPLS_TTL_DEC,
        FP_MPLS_TTL_DEC | FP_MPLS_TTL_CHECK,
        FP_MPLS_TTL_SET | FP_MPLS_TTL_CHECK,
        FP_MPLS_SET | FP_MPLS_TTL_DEC | FP_SET_ETH_DST,
        FP_MPLS_SET | FP_MPLS_TTL_SET | FP_VLAN_SET,
        FP_MPLS_SET | FP_VLAN_POP,
        FP_MPLS_TTL_DEC | FP_VLAN_PUSH,
    ] {
        v.push(word(flags, swap));
    }
    v
}

fn push_entries() -> Vec<FpEntry> {
    let mut v = Vec::new();
    for (flags, w) in [
        (FP_MPLS_PUSH, lse(16, 0, 1, 64)),
        (FP_MPLS_PUSH | FP_MPLS_MCAST, lse(0xf_ffff, 7, 1, 1)),
        (FP_MPLS_PUSH | FP_SET_ETH_DST | FP_SET_TTL, lse(42, 2, 0, 0)),
        (FP_MPLS_PUSH | FP_VLAN_POP | FP_SET_IPV4_DST, lse(3, 1, 1, 255)),
        (FP_MPLS_PUSH | FP_VLAN_PUSH, lse(5, 0, 1, 9)),
        (FP_MPLS_PUSH | FP_VLAN_SET | FP_SET_TOS, lse(6, 0, 1, 8)),
    ] {
        let mut e = FpEntry {
            flags,
            out: 1,
            eth_dst: [0x0a, 1, 2, 3, 4, 5],
            ipv4_dst: 0xac10_fffe,
            ip_tos: 0xb9,
            ip_ttl: 17,
            vlan_tci: 0x4123,
            vlan_tpid: 0x88a8,
            ..FpEntry::default()
        };
        e.set_mpls_word(w);
        v.push(e);
    }
    v
}

#[test]
fn mpls_frames_parse_as_user_space_parses_them() {
    let mut frames = mpls_frames();
    // An entry cut short, two tags before the stack.
    frames.push(mpls_frame(None, 0x8847, &[], &[0, 1, 0x41]));
    frames.push(mpls_frame(Some((0x88a8, 7)), 0x8100, &[], &mpls_frame(None, 0, &[], &[])[12..]));
    let double = [
        &mpls_frame(Some((0x88a8, 7)), 0x8100, &[], &[])[..16],
        &[0, 8, 0x88, 0x47, 0, 1, 0x41, 64][..],
        &[0; 40][..],
    ]
    .concat();
    frames.push(double.clone());
    let mut parsed = 0;
    for (i, f) in frames.iter().enumerate() {
        let (k, clean) = userspace_key(f, 7);
        let m = parse(f, 7);
        if clean && FpKey::from_flow_key(&k).is_some() && i < mpls_frames().len() {
            assert!(m.is_some(), "frame {i}: the model should parse it");
        }
        if let Some(m) = m {
            parsed += 1;
            assert!(clean, "frame {i}");
            assert_eq!(Some(m), FpKey::from_flow_key(&k), "frame {i}");
        }
    }
    assert_eq!(parsed, mpls_frames().len());
    assert_eq!(parse(&double, 7), None, "two tags before the stack");
    let k = parse(&mpls_frame(None, 0x8848, &[lse(100, 3, 0, 64)], &[0; 46]), 2).unwrap();
    assert_eq!((k.eth_type, k.ipv4_src), (0x8848, lse(100, 3, 0, 0)));
    assert_eq!((k.ip_ttl, k.ipv4_dst, k.tp_src), (0, 0, 0));
    assert_eq!(
        k.describe(),
        "in_port=2,dl_src=02:00:00:00:00:01,dl_dst=02:00:00:00:00:02,dl_type=0x8848,\
         mpls_label=100,mpls_tc=3,mpls_bos=0"
    );
}

#[test]
fn mpls_rewrites_equal_the_userspace_rewrites_in_either_order() {
    let dp = datapath();
    let run = |f: &[u8], a: &[Action]| sent(&dp, f, a);
    let mut compared = 0;
    let mut refused = 0;
    for (i, f) in mpls_frames().iter().enumerate() {
        for (j, e) in mpls_entries().iter().enumerate() {
            let Some(out) = apply(f, e) else {
                refused += 1;
                continue;
            };
            let what = format!("frame {i} entry {j} ({})", e.describe());
            assert_eq!(Some(&out), run(f, &super::actions(e)).as_ref(), "{what}");
            assert_eq!(Some(&out), run(f, &vlan_first(e)).as_ref(), "{what}, VLAN first");
            compared += 1;
        }
        for e in push_entries() {
            assert_eq!(apply(f, &e), None, "frame {i}: a push onto a label stack");
        }
    }
    assert!(compared > 1000 && refused > 1000, "{compared} compared, {refused} refused");
}

#[test]
fn pushes_equal_the_userspace_pushes_in_either_order() {
    let dp = datapath();
    let run = |f: &[u8], a: &[Action]| sent(&dp, f, a);
    let mut compared = 0;
    for tag in [None, Some((0x8100, 0x3005))] {
        let mut frames: Vec<Vec<u8>> =
            [TCP, UDP, ICMP, 47].iter().map(|&proto| ipv4_of(tag, proto)).collect();
        frames.push(l2(tag.as_slice(), 0x88cc, 46));
        for f in &frames {
            for e in push_entries() {
                let Some(out) = apply(f, &e) else {
                    continue;
                };
                let what = e.describe();
                assert_eq!(
                    out.len(),
                    f.len() + 4 * (1 + (e.flags & FP_VLAN_PUSH != 0) as usize)
                        - 4 * (e.flags & FP_VLAN_POP != 0) as usize,
                    "{what}"
                );
                assert_eq!(Some(&out), run(f, &super::actions(&e)).as_ref(), "{what}");
                assert_eq!(Some(&out), run(f, &vlan_first(&e)).as_ref(), "{what}, VLAN first");
                compared += 1;
            }
        }
        // The other MPLS rewrites need a label stack.
        for e in mpls_entries() {
            assert_eq!(apply(&frames[0], &e), None, "{}", e.describe());
        }
    }
    assert!(compared >= 30, "{compared} compared");
}

#[test]
fn pops_that_user_space_pads_or_trims_and_ttls_that_expire_are_refused() {
    let pop_to = |ty: u16| {
        let mut e = FpEntry { flags: FP_MPLS_POP, ..FpEntry::default() };
        e.set_mpls_word(u32::from(ty) << 16);
        e
    };
    let stack = [lse(9, 0, 1, 64)];
    // Exactly an IPv4 packet below: popped, 4 bytes shorter.
    let f = mpls_frame(None, 0x8847, &stack, &ip4_packet(60));
    let out = apply(&f, &pop_to(0x0800)).unwrap();
    assert_eq!(out.len(), f.len() - 4);
    assert_eq!(&out[12..14], &[0x08, 0x00]);
    assert_eq!(&out[14..], &f[18..]);
    // Padding after it, or a result under 60 bytes: user space's.
    let padded = mpls_frame(None, 0x8847, &stack, &[ip4_packet(40), vec![0; 10]].concat());
    assert_eq!(apply(&padded, &pop_to(0x0800)), None);
    assert!(apply(&padded, &pop_to(0x88cc)).is_some(), "no IP header to trim by");
    let short = mpls_frame(None, 0x8847, &stack, &ip4_packet(40));
    assert_eq!(apply(&short, &pop_to(0x0800)), None);
    // To MPLS: no minimum, but a next entry.
    assert!(apply(&short, &pop_to(0x8847)).is_some());
    let bare = mpls_frame(None, 0x8847, &stack, &[1, 2, 3]);
    assert_eq!(apply(&bare, &pop_to(0x8847)), None);
    // TTL 1 and 0 go to user space where a decrement is on the path.
    for ttl in [0, 1] {
        let f = mpls_frame(None, 0x8847, &[lse(9, 0, 1, ttl)], &ip4_packet(60));
        let check = FpEntry { flags: FP_MPLS_TTL_CHECK | FP_MPLS_POP, ..pop_to(0x0800) };
        assert_eq!(apply(&f, &check), None);
        assert!(apply(&f, &pop_to(0x0800)).is_some());
        let dec = FpEntry { flags: FP_MPLS_TTL_DEC, ..FpEntry::default() };
        assert_eq!(apply(&f, &dec), None);
    }
    let f = mpls_frame(None, 0x8847, &[lse(9, 0, 1, 2)], &ip4_packet(60));
    let dec = FpEntry { flags: FP_MPLS_TTL_DEC, ..FpEntry::default() };
    assert_eq!(apply(&f, &dec).unwrap()[17], 1);
}
