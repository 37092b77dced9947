//! MPLS in the map sync against the loaded program (needs root): decisions that push a
//! label stack entry onto IPv4 frames, pop one, or rewrite one mirrored by the tier and
//! run on the program (BPF_PROG_TEST_RUN), each frame's output equal to the one the
//! pipeline sends; frames the kernel leaves to user space (a TTL a decrement takes to
//! zero, a pop whose frame user space trims); and the paths that stay in user space.

mod common;

use std::sync::Arc;

use datapath::action::Action;
use datapath::key::{Field, FlowMatch};
use datapath::pipeline::{Datapath, Instructions, Rule, Writer};
use xdp::layout::*;
use xdp::tier::{KernelTier, Verdict};
use xdp::FastPath;

use common::{in_fresh_netns, key_of, lse};

const XDP_PASS: u32 = 2;
const XDP_REDIRECT: u32 = 4;

fn rule(m: FlowMatch, apply: Vec<Action>, goto: Option<u8>) -> Rule {
    Rule::new(
        m.exact(Field::InPort, 1),
        10,
        Instructions { apply, goto_table: goto, ..Instructions::default() },
    )
}

/// An MPLS frame with label stack `stack` over an IPv4 packet of `ip_len` bytes, then
/// `padding` zero bytes.
fn mpls_frame(stack: &[u32], ip_len: usize, padding: usize) -> Vec<u8> {
    let mut f = common::mpls_frame(None, 0x8847, stack, ip_len);
    f.resize(f.len() + padding, 0);
    f
}

/// Port 1 the loopback (frames are run "arriving" there), port 2 a veth; `body` gets
/// the program, the datapath, its writer and the tier.
fn bed(
    body: impl FnOnce(&Arc<FastPath>, &Datapath, &mut Writer, &Arc<KernelTier>) + Send + 'static,
) {
    in_fresh_netns(|| {
        let fp = Arc::new(FastPath::load(256, 4).expect("load"));
        let attached = common::attach_ports(&fp, "tp", "tq", 2);
        let (dp, mut wr, _rx) = common::datapath(2);
        let tier = common::mirrored(&fp, &dp, std::time::Instant::now());
        body(&fp, &dp, &mut wr, &tier);
        drop(attached);
    });
}

/// Table 0 applies `actions` to what `m` matches from port 1 (published).
fn install(wr: &mut Writer, m: FlowMatch, actions: Vec<Action>) {
    wr.insert_rule(0, rule(m, actions, None)).unwrap();
    wr.publish();
}

/// Offers `frame`'s key to `tier`: the program's entry then, which must be its only one.
fn the_entry(fp: &FastPath, tier: &KernelTier, frame: &[u8]) -> (FpKey, FpEntry) {
    tier.consider(&key_of(frame));
    let entries = fp.entries().unwrap();
    assert_eq!(entries.len(), 1, "{entries:?}");
    entries[0]
}

/// Runs `frame` through the program: it must be forwarded as the pipeline forwards it.
fn served_as_the_pipeline_does(fp: &FastPath, dp: &Datapath, frame: &[u8]) -> Vec<u8> {
    let (rc, out) = fp.test_run(frame, 1, 0).unwrap();
    assert_eq!(rc, XDP_REDIRECT, "served in the kernel");
    let t = dp.trace(frame, 1, 0);
    assert_eq!(t.outputs.ports(), vec![2]);
    assert_eq!(out, t.outputs.tx[0].packet.data(), "the pipeline's bytes");
    out
}

#[test]
#[ignore = "needs root: network namespaces"]
fn a_push_onto_ipv4_is_mirrored_and_done_as_the_pipeline_does() {
    bed(|fp, dp, wr, tier| {
        let ip = FlowMatch::ANY.exact(Field::EthType, 0x0800);
        let actions = vec![
            Action::SetField(Field::EthDst, 0x0a00_0000_0009),
            Action::DecNwTtl,
            Action::PushMpls(0x8847),
            Action::SetField(Field::MplsLabel, 1000),
            Action::SetField(Field::MplsTc, 5),
            Action::Output(2),
        ];
        install(wr, ip, actions);
        let frame = common::udp_frame(1000);
        let (_, e) = the_entry(fp, tier, &frame);
        assert_ne!(e.flags & FP_MPLS_PUSH, 0, "{}", e.describe());
        let out = served_as_the_pipeline_does(fp, dp, &frame);
        assert_eq!(out.len(), frame.len() + 4);
        assert_eq!(&out[12..18], &[0x88, 0x47, 0x00, 0x3e, 0x8b, 63]);
        // Another flow of the megaflow: the same entry, its own bytes.
        served_as_the_pipeline_does(fp, dp, &common::udp_frame(2000));
        // The new entry's TTL is the IPv4 TTL's: the megaflow holds it.
        let mut ttl9 = common::udp_frame(1000);
        ttl9[22] = 9;
        ttl9[24..26].copy_from_slice(&[0, 0]);
        let c = common::csum(&ttl9[14..34]);
        ttl9[24..26].copy_from_slice(&c.to_be_bytes());
        assert_eq!(fp.test_run(&ttl9, 1, 0).unwrap().0, XDP_PASS, "another TTL");
        tier.consider(&key_of(&ttl9));
        assert_eq!(served_as_the_pipeline_does(fp, dp, &ttl9)[17], 8);
        tier.harvest();
        assert_eq!(dp.read_port(1).tx_packets, 3);
        assert_eq!(dp.read_port(1).tx_bytes, 3 * (frame.len() as u64 + 4));
    });
}

#[test]
#[ignore = "needs root: network namespaces"]
fn a_pop_is_mirrored_for_every_ttl_and_leaves_padding_to_user_space() {
    bed(|fp, dp, wr, tier| {
        let mpls = FlowMatch::ANY.exact(Field::EthType, 0x8847).exact(Field::MplsLabel, 100);
        let actions = vec![Action::PopMpls(0x0800), Action::Output(2)];
        install(wr, mpls, actions);
        let frame = mpls_frame(&[lse(100, 0, 1, 64)], 60, 0);
        let (_, e) = the_entry(fp, tier, &frame);
        assert_eq!(e.flags & FP_MPLS_FLAGS, FP_MPLS_POP);
        assert_eq!(e.tp_src, 0x0800);
        let out = served_as_the_pipeline_does(fp, dp, &frame);
        assert_eq!(out, [&frame[..12], &[0x08, 0x00], &frame[18..]].concat());
        // The TTL is no part of the key: one entry serves them all.
        for ttl in [0, 1, 255] {
            served_as_the_pipeline_does(fp, dp, &mpls_frame(&[lse(100, 0, 1, ttl)], 60, 0));
        }
        // Ethernet padding below the stack: user space trims it after the pop.
        let padded = mpls_frame(&[lse(100, 0, 1, 64)], 50, 10);
        let (rc, out) = fp.test_run(&padded, 1, 0).unwrap();
        assert_eq!((rc, &out), (XDP_PASS, &padded), "to user space as it is");
        assert_eq!(dp.trace(&padded, 1, 0).outputs.tx[0].packet.len(), 14 + 50, "user space trims");
        // A pop to MPLS of a label above another.
        let two = FlowMatch::ANY.exact(Field::EthType, 0x8847).exact(Field::MplsLabel, 200);
        let actions = vec![Action::PopMpls(0x8847), Action::Output(2)];
        install(wr, two, actions);
        let frame = mpls_frame(&[lse(200, 1, 0, 9), lse(300, 0, 1, 8)], 20, 0);
        tier.consider(&key_of(&frame));
        let out = served_as_the_pipeline_does(fp, dp, &frame);
        assert_eq!(&out[12..18], &[0x88, 0x47, 0x00, 0x12, 0xc1, 8]);
    });
}

#[test]
#[ignore = "needs root: network namespaces"]
fn a_swap_and_decrement_leave_expiring_ttls_to_user_space() {
    bed(|fp, dp, wr, tier| {
        let mpls = FlowMatch::ANY.exact(Field::EthType, 0x8847);
        let actions =
            vec![Action::SetField(Field::MplsLabel, 200), Action::DecMplsTtl, Action::Output(2)];
        install(wr, mpls, actions);
        let frame = mpls_frame(&[lse(100, 3, 1, 64)], 40, 0);
        let (k, e) = the_entry(fp, tier, &frame);
        assert_eq!(
            e.flags & FP_MPLS_FLAGS,
            FP_MPLS_SET | FP_MPLS_TTL_DEC | FP_MPLS_TTL_CHECK,
            "{}",
            e.describe()
        );
        assert_eq!(k.ipv4_src, lse(100, 3, 1, 0), "the label, TC and BoS it writes");
        for ttl in [64, 2, 255] {
            let f = mpls_frame(&[lse(100, 3, 1, ttl)], 40, 0);
            let out = served_as_the_pipeline_does(fp, dp, &f);
            assert_eq!(&out[14..18], &lse(200, 3, 1, ttl - 1).to_be_bytes());
        }
        for ttl in [0, 1] {
            let f = mpls_frame(&[lse(100, 3, 1, ttl)], 40, 0);
            let (rc, out) = fp.test_run(&f, 1, 0).unwrap();
            assert_eq!((rc, &out), (XDP_PASS, &f), "TTL {ttl} to user space");
            assert!(dp.trace(&f, 1, 0).outputs.tx.is_empty(), "which drops it");
        }
        // A constant TTL: no check, no decrement.
        let set = vec![Action::SetMplsTtl(7), Action::Output(2)];
        wr.insert_rule(0, rule(FlowMatch::ANY.exact(Field::EthType, 0x8847), set, None)).unwrap();
        wr.publish();
        tier.consider(&key_of(&frame));
        let e = fp.entries().unwrap()[0].1;
        assert_eq!(e.flags & FP_MPLS_FLAGS, FP_MPLS_TTL_SET, "{}", e.describe());
        for ttl in [0, 1, 64] {
            let out =
                served_as_the_pipeline_does(fp, dp, &mpls_frame(&[lse(100, 3, 1, ttl)], 40, 0));
            assert_eq!(out[17], 7);
        }
    });
}

#[test]
#[ignore = "needs root: network namespaces"]
fn what_reads_below_a_pop_or_pushes_onto_a_stack_stays_in_user_space() {
    bed(|fp, _dp, wr, tier| {
        let mpls = FlowMatch::ANY.exact(Field::EthType, 0x8847);
        // A table after the pop would look the popped frame's IPv4 header up.
        let pop = vec![Action::PopMpls(0x0800)];
        wr.insert_rule(0, rule(mpls, pop, Some(1))).unwrap();
        wr.insert_rule(1, rule(FlowMatch::ANY, vec![Action::Output(2)], None)).unwrap();
        wr.publish();
        let frame = mpls_frame(&[lse(100, 0, 1, 64)], 60, 0);
        let key = key_of(&frame);
        match tier.verdict(&key) {
            Verdict::Refused(why) => assert!(why.contains("after a pop_mpls"), "{why}"),
            v => panic!("{v:?}"),
        }
        tier.consider(&key);
        assert!(fp.entries().unwrap().is_empty());
        // A push onto a label stack.
        let push = vec![Action::PushMpls(0x8847), Action::Output(2)];
        wr.insert_rule(0, rule(mpls, push, None)).unwrap();
        wr.publish();
        match tier.verdict(&key) {
            Verdict::Refused(why) => assert!(why.contains("onto a label stack"), "{why}"),
            v => panic!("{v:?}"),
        }
        tier.consider(&key);
        assert!(fp.entries().unwrap().is_empty());
    });
}
