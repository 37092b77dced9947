//! Random actions on random and truncated packets never panic, keep checksums valid and
//! leave a failing packet unchanged.

use super::frames;
use super::*;
use proptest::prelude::*;

fn any_frame() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(frames::ipv4_tcp()),
        Just(frames::vlan_ipv4_udp()),
        Just(frames::ipv4_udp_nocsum()),
        Just(frames::ipv6_tcp()),
        Just(frames::ipv6_udp()),
        Just(frames::ipv4_icmp()),
        Just(frames::ipv6_icmp()),
        Just(frames::nd(135)),
        Just(frames::nd(136)),
        Just(frames::ipv4_sctp()),
        Just(frames::arp()),
        Just(frames::mpls_ipv4()),
    ]
}

/// Actions that leave the frame within what `scan` and the checksum checks read.
fn safe_action() -> impl Strategy<Value = Action> {
    let settable = prop::sample::select(vec![
        Field::EthDst,
        Field::EthSrc,
        Field::VlanVid,
        Field::VlanPcp,
        Field::IpDscp,
        Field::IpEcn,
        Field::Ipv4Src,
        Field::Ipv4Dst,
        Field::TpSrc,
        Field::TpDst,
        Field::ArpOp,
        Field::ArpSha,
        Field::ArpTha,
        Field::Ipv6Src,
        Field::Ipv6Dst,
        Field::Ipv6Flabel,
        Field::Ipv6NdTarget,
        Field::MplsLabel,
        Field::MplsTc,
        Field::TunnelId,
    ]);
    prop_oneof![
        (settable, any::<u128>()).prop_map(|(f, v)| {
            let v = v & f.full();
            let v = match f {
                Field::VlanVid => 0x1000 | (v & 0xfff),
                Field::VlanPcp => v & 7,
                Field::IpDscp => v & 0x3f,
                Field::IpEcn => v & 3,
                Field::Ipv6Flabel | Field::MplsLabel => v & 0xfffff,
                Field::MplsTc => v & 7,
                _ => v,
            };
            Action::SetField(f, v)
        }),
        prop::sample::select(vec![0x8100u16, 0x88a8]).prop_map(Action::PushVlan),
        Just(Action::PopVlan),
        Just(Action::PushMpls(0x8847)),
        Just(Action::PopMpls(0x8847)),
        any::<u8>().prop_map(Action::SetMplsTtl),
        Just(Action::DecMplsTtl),
        any::<u8>().prop_map(Action::SetNwTtl),
        Just(Action::DecNwTtl),
        Just(Action::CopyTtlIn),
        Just(Action::CopyTtlOut),
    ]
}

fn any_action() -> impl Strategy<Value = Action> {
    prop_oneof![
        (prop::sample::select(Field::ALL.to_vec()), any::<u128>())
            .prop_map(|(f, v)| Action::SetField(f, v)),
        any::<u16>().prop_map(Action::PushVlan),
        Just(Action::PopVlan),
        any::<u16>().prop_map(Action::PushMpls),
        any::<u16>().prop_map(Action::PopMpls),
        any::<u16>().prop_map(Action::PushPbb),
        Just(Action::PopPbb),
        any::<u8>().prop_map(Action::SetMplsTtl),
        Just(Action::DecMplsTtl),
        any::<u8>().prop_map(Action::SetNwTtl),
        Just(Action::DecNwTtl),
        Just(Action::CopyTtlIn),
        Just(Action::CopyTtlOut),
    ]
}

proptest! {
    #[test]
    fn safe_actions_keep_key_layers_and_checksums(
        frame in any_frame(),
        actions in prop::collection::vec(safe_action(), 1..8),
    ) {
        let mut c = Case::new(&frame);
        for a in &actions {
            let before = (c.pkt.clone(), c.key, c.layers);
            match c.apply(a) {
                Ok(()) => {
                    c.assert_consistent();
                    verify_checksums(c.pkt.data());
                }
                Err(_) => prop_assert!(before == (c.pkt.clone(), c.key, c.layers), "{:?} failed but changed", a),
            }
        }
    }

    #[test]
    fn anything_on_anything_never_panics(
        frame in any_frame(),
        cut in any::<prop::sample::Index>(),
        junk in prop::collection::vec(any::<u8>(), 0..80),
        actions in prop::collection::vec(any_action(), 1..10),
    ) {
        // A valid frame cut short, and random bytes read with the first frame's offsets.
        let short = &frame[..cut.index(frame.len() + 1)];
        let (key, layers) = scan(&frame, 1);
        for bytes in [short, &junk[..]] {
            let mut c = Case::new(bytes);
            c.key = key;
            c.layers = layers;
            for a in &actions {
                let before = (c.pkt.clone(), c.key, c.layers);
                if c.apply(a).is_err() {
                    prop_assert!(before == (c.pkt.clone(), c.key, c.layers), "{:?} failed but changed", a);
                }
            }
        }
    }
}
