//! Random actions on random and truncated packets never panic, keep checksums valid and
//! leave a failing packet unchanged.

use super::frames;
use super::*;
use proptest::prelude::*;

fn any_frame() -> impl Strategy<Value = Vec<u8>> {
    prop::sample::select(frames::all())
}

/// Actions that keep every checksum valid (an ip_proto or eth_type change would not: the
/// L4 checksum is not recomputed for another protocol).
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

/// Ethertypes and protocol numbers that change how a frame is read, often enough to
/// meet each of them, and anything else.
const INTERESTING: [u16; 24] = [
    0x0800, 0x86dd, 0x0806, 0x8100, 0x88a8, 0x8847, 0x8848, 0x88e7, 0x05ff, 0x0600, 0x0042, 0, 1,
    6, 17, 58, 132, 135, 136, 43, 44, 50, 51, 60,
];

fn any_u16() -> impl Strategy<Value = u16> {
    prop_oneof![prop::sample::select(INTERESTING.to_vec()), any::<u16>()]
}

fn any_value() -> impl Strategy<Value = u128> {
    prop_oneof![
        any_u16().prop_map(u128::from),
        any_u16().prop_map(|v| 0x1000 | u128::from(v)),
        any::<u128>(),
    ]
}

fn any_action() -> impl Strategy<Value = Action> {
    prop_oneof![
        (prop::sample::select(Field::ALL.to_vec()), any_value())
            .prop_map(|(f, v)| Action::SetField(f, v)),
        any_u16().prop_map(Action::PushVlan),
        Just(Action::PopVlan),
        any_u16().prop_map(Action::PushMpls),
        any_u16().prop_map(Action::PopMpls),
        any_u16().prop_map(Action::PushPbb),
        Just(Action::PopPbb),
        any::<u8>().prop_map(Action::SetMplsTtl),
        Just(Action::DecMplsTtl),
        any::<u8>().prop_map(Action::SetNwTtl),
        Just(Action::DecNwTtl),
        Just(Action::CopyTtlIn),
        Just(Action::CopyTtlOut),
    ]
}

#[test]
fn test_frames_parse_cleanly() {
    for (i, f) in frames::all().iter().enumerate() {
        let mut k = FlowKey::ZERO;
        let out = parse(f, 1, &mut k);
        assert_eq!((out.error, out.ip_truncated), (None, false), "frame {i}");
        verify_checksums(f);
    }
}

/// Applies `actions` in turn to `frame`: after each that succeeds the key and layers are
/// what the new bytes parse to (and, with `checksums`, every checksum verifies); one
/// that fails changes nothing.
fn apply_in_turn(frame: &[u8], actions: &[Action], checksums: bool) -> Result<(), TestCaseError> {
    let mut c = Case::new(frame);
    for a in actions {
        let before = (c.pkt.clone(), c.key, c.layers);
        match c.apply(a) {
            Ok(()) => {
                c.assert_consistent();
                if checksums {
                    verify_checksums(c.pkt.data());
                }
            }
            Err(_) => prop_assert!(
                before == (c.pkt.clone(), c.key, c.layers),
                "{:?} failed but changed",
                a
            ),
        }
    }
    Ok(())
}

proptest! {
    /// The invariant of `apply`: whatever the action (any field, any value, any
    /// ethertype), parsing the new bytes gives back the key and layers it left.
    #[test]
    fn every_action_keeps_key_and_layers(
        frame in any_frame(),
        actions in prop::collection::vec(any_action(), 1..10),
    ) {
        apply_in_turn(&frame, &actions, false)?;
    }

    #[test]
    fn safe_actions_keep_key_layers_and_checksums(
        frame in any_frame(),
        actions in prop::collection::vec(safe_action(), 1..8),
    ) {
        apply_in_turn(&frame, &actions, true)?;
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
        let (key, layers) = parsed(&frame, 1);
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

proptest! {
    /// The same invariant on valid frames cut anywhere, starting from what the parser
    /// makes of the cut frame (parse errors and `ip_truncated` included).
    #[test]
    fn truncated_frames_keep_key_and_layers(
        frame in any_frame(),
        cut in any::<prop::sample::Index>(),
        actions in prop::collection::vec(any_action(), 1..10),
    ) {
        let short = &frame[..cut.index(frame.len() + 1)];
        let mut c = Case::new(short);
        for a in &actions {
            let before = (c.pkt.clone(), c.key, c.layers);
            match c.apply(a) {
                Ok(()) => c.assert_consistent(),
                Err(_) => prop_assert!(before == (c.pkt.clone(), c.key, c.layers), "{:?} failed but changed", a),
            }
        }
    }
}
