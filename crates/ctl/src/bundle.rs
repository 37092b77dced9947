//! Bundles as `peregrine ctl --bundle` sends them, the way ovs-ofctl does: one bundle
//! (id 0, flags `ATOMIC|ORDERED`) per run, opened with an `OPEN_REQUEST`, one bundle add
//! per request whose inner message carries the add's own xid, a barrier, then a
//! `COMMIT_REQUEST` (or a `DISCARD_REQUEST` when the switch refused an add).
//!
//! OpenFlow 1.4 has `OFPT_BUNDLE_CONTROL` and `OFPT_BUNDLE_ADD_MESSAGE`; over 1.3 the
//! same bodies travel as ONF extension messages (`OFPT_EXPERIMENTER`, experimenter
//! `0x4f4e4600`, `exp_type` 2300 and 2301), as ovs-ofctl sends them with
//! `-O OpenFlow13 --bundle`. OpenFlow 1.0 has no bundles. [`Conn::bundle_transact`]
//! runs the exchange.
//!
//! [`Conn::bundle_transact`]: crate::conn::Conn::bundle_transact

use openflow::v13::bundle::{bundle_flags, BundleAdd, BundleControl, BundleCtrlType};
use openflow::v13::Message as M13;
use openflow::{Frame, Message, OFP13_VERSION};

/// The flags of the bundle ctl opens: atomic and ordered, as ovs-ofctl's.
pub const FLAGS: u16 = bundle_flags::ATOMIC | bundle_flags::ORDERED;

/// The id of the bundle ctl opens. A run opens one bundle on a fresh connection, so any
/// id is free; 0 is the one ovs-ofctl uses.
pub const BUNDLE_ID: u32 = 0;

/// The error for a connection of `version` that has no bundles (1.0), naming the switch.
pub fn check_version(version: u8, switch: &str) -> Result<(), String> {
    if version < OFP13_VERSION {
        Err(format!(
            "--bundle: bundles need OpenFlow 1.3 or later, but {switch} speaks OpenFlow 1.0 \
             (use -O OpenFlow14 or -O OpenFlow13 with a switch that supports it)"
        ))
    } else {
        Ok(())
    }
}

/// A bundle control request of `ctrl_type` for ctl's bundle, in `version`'s form
/// (1.3: the ONF extension message; 1.4: `OFPT_BUNDLE_CONTROL`).
pub fn control(version: u8, ctrl_type: BundleCtrlType) -> Message {
    let c = BundleControl { bundle_id: BUNDLE_ID, ctrl_type, flags: FLAGS, properties: vec![] };
    Message::V13(if version == OFP13_VERSION {
        M13::Experimenter(c.to_experimenter())
    } else {
        M13::BundleControl(c)
    })
}

/// The frame that adds `inner` to ctl's bundle: a bundle add of xid `xid` (1.3: in the
/// ONF extension message) whose inner message is `inner` in `version` with the same xid.
pub fn add(version: u8, xid: u32, inner: Message) -> Result<Frame, String> {
    let inner = Frame { version, xid, message: inner };
    let a = BundleAdd::new(BUNDLE_ID, FLAGS, &inner)
        .map_err(|e| format!("cannot encode a bundled message: {e}"))?;
    let m = if version == OFP13_VERSION {
        M13::Experimenter(a.to_experimenter())
    } else {
        M13::BundleAdd(a)
    };
    Ok(Frame { version, xid, message: Message::V13(m) })
}

/// The bundle control message `f` carries in either form, if it is one (an ONF
/// message whose body does not decode is none).
pub fn control_of(f: &Frame) -> Option<BundleControl> {
    match &f.message {
        Message::V13(M13::BundleControl(c)) => Some(c.clone()),
        Message::V13(M13::Experimenter(e)) => BundleControl::from_experimenter(e)?.ok(),
        _ => None,
    }
}

/// The reply type that answers a request of `ctrl_type` (open, close, commit and
/// discard requests are even, their replies the next number).
pub fn reply_to(ctrl_type: BundleCtrlType) -> BundleCtrlType {
    BundleCtrlType::from_u16(ctrl_type.to_u16() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use openflow::error::ONF_EXPERIMENTER_ID;
    use openflow::v13::bundle::{ONF_ET_BUNDLE_ADD_MESSAGE, ONF_ET_BUNDLE_CONTROL};
    use openflow::v13::flow_mod::FlowModCommand;
    use openflow::OFP14_VERSION;

    fn flow_mod() -> Message {
        let fm =
            openflow::text::parse_flow_mod("priority=7,ip,actions=output:2", FlowModCommand::Add)
                .unwrap();
        Message::V13(M13::FlowMod(fm))
    }

    #[test]
    fn control_in_14_and_in_13s_onf_form() {
        let want = BundleControl {
            bundle_id: 0,
            ctrl_type: BundleCtrlType::OpenRequest,
            flags: 3,
            properties: vec![],
        };
        let m14 = control(OFP14_VERSION, BundleCtrlType::OpenRequest);
        assert_eq!(m14, Message::V13(M13::BundleControl(want.clone())));
        let f14 = Frame { version: OFP14_VERSION, xid: 2, message: m14 };
        let bytes = f14.encode().unwrap();
        // OFPT_BUNDLE_CONTROL (33), 16 bytes: the header, then id 0, type 0, flags 3.
        assert_eq!(bytes, [5, 33, 0, 16, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3]);
        assert_eq!(control_of(&f14), Some(want.clone()));

        let m13 = control(OFP13_VERSION, BundleCtrlType::OpenRequest);
        let Message::V13(M13::Experimenter(e)) = &m13 else { panic!("{m13:?}") };
        assert_eq!((e.experimenter, e.exp_type), (ONF_EXPERIMENTER_ID, ONF_ET_BUNDLE_CONTROL));
        let f13 = Frame { version: OFP13_VERSION, xid: 2, message: m13 };
        let bytes = f13.encode().unwrap();
        // OFPT_EXPERIMENTER (4), 24 bytes: ONF, exp_type 2300, then the same body.
        assert_eq!(
            bytes,
            [
                4, 4, 0, 24, 0, 0, 0, 2, 0x4f, 0x4e, 0x46, 0, 0, 0, 0x08, 0xfc, 0, 0, 0, 0, 0, 0,
                0, 3
            ]
        );
        assert_eq!(control_of(&f13), Some(want));
        assert_eq!(control_of(&Frame::v13(2, M13::BarrierReply)), None);
    }

    #[test]
    fn add_carries_the_inner_message_with_its_own_xid() {
        for version in [OFP13_VERSION, OFP14_VERSION] {
            let f = add(version, 9, flow_mod()).unwrap();
            assert_eq!((f.version, f.xid), (version, 9));
            let a = match &f.message {
                Message::V13(M13::BundleAdd(a)) => {
                    assert_eq!(version, OFP14_VERSION);
                    a.clone()
                }
                Message::V13(M13::Experimenter(e)) => {
                    assert_eq!(version, OFP13_VERSION);
                    assert_eq!(e.exp_type, ONF_ET_BUNDLE_ADD_MESSAGE);
                    BundleAdd::from_experimenter(e).unwrap().unwrap()
                }
                other => panic!("{other:?}"),
            };
            assert_eq!((a.bundle_id, a.flags), (BUNDLE_ID, FLAGS));
            let inner = a.decode_message().unwrap();
            assert_eq!(inner, Frame { version, xid: 9, message: flow_mod() });
            // What goes on the wire decodes back to the same.
            assert_eq!(Frame::decode(&f.encode().unwrap()).unwrap(), f);
        }
    }

    #[test]
    fn replies_and_versions() {
        assert_eq!(reply_to(BundleCtrlType::OpenRequest), BundleCtrlType::OpenReply);
        assert_eq!(reply_to(BundleCtrlType::CommitRequest), BundleCtrlType::CommitReply);
        assert_eq!(reply_to(BundleCtrlType::DiscardRequest), BundleCtrlType::DiscardReply);
        assert!(check_version(OFP13_VERSION, "s").is_ok());
        assert!(check_version(OFP14_VERSION, "s").is_ok());
        let e = check_version(openflow::OFP10_VERSION, "tcp:1.2.3.4").unwrap_err();
        assert!(e.contains("bundles need OpenFlow 1.3 or later"), "{e}");
        assert!(e.contains("tcp:1.2.3.4 speaks OpenFlow 1.0"), "{e}");
    }
}
