//! Tests of the message printer: one per message kind (exact strings for the short ones,
//! the key parts for long ones; `v13`, `multipart`, `v10`) and, here, proptests that every
//! generated message prints without panicking under the right head.

mod multipart;
mod v10;
mod v13;

use super::*;
use crate::action::{port, Action, OFPG_ANY};
use crate::error::ErrorKind;
use crate::instruction::Instruction;
use crate::match13::Match;
use crate::oxm::Oxm;
use crate::v10::{self as m10, Message as M10};
use crate::v13::flow_mod::{FlowModCommand, OFP_NO_BUFFER};
use crate::v13::group_mod::{Bucket, GroupMod, GroupModCommand, GroupType};
use crate::v13::meter_mod::{MeterBand, MeterMod, MeterModCommand};
use crate::v13::multipart::{
    AggregateStats, Desc, FlowStats, FlowStatsRequest, GroupStats, MeterStats, MultipartReply,
    MultipartReplyBody as RB, MultipartRequest, MultipartRequestBody as QB, PortStats, QueueStats,
    TableStats, OFPMPF_REPLY_MORE,
};
use crate::v13::port::Port;
use crate::v13::table_features::{FeatureId, TableFeatureProp, TableFeatures};
use crate::v13::{self as m13, Message as M13};
use crate::wire::MacAddr;
use proptest::prelude::*;
use std::net::Ipv4Addr;

pub(super) fn p13(xid: u32, m: M13) -> String {
    format_frame(&Frame::v13(xid, m))
}

pub(super) fn p10(xid: u32, m: M10) -> String {
    format_frame(&Frame::v10(xid, m))
}

pub(super) fn ip_match() -> Match {
    Match {
        fields: vec![
            Oxm::EthType(0x0800),
            Oxm::Ipv4Src(
                Ipv4Addr::new(10, 0, 0, 0),
                Some(Ipv4Addr::new(255, 0, 0, 0)),
            ),
        ],
    }
}

pub(super) fn flow_mod() -> m13::FlowMod {
    m13::FlowMod {
        cookie: 0,
        cookie_mask: 0,
        table_id: 0,
        command: FlowModCommand::Add,
        idle_timeout: 0,
        hard_timeout: 0,
        priority: 100,
        buffer_id: OFP_NO_BUFFER,
        out_port: port::ANY,
        out_group: OFPG_ANY,
        flags: 0,
        match_: ip_match(),
        instructions: vec![Instruction::ApplyActions(vec![Action::Output {
            port: 2,
            max_len: 0,
        }])],
    }
}

/// A 60-byte TCP/IPv4 frame 10.0.0.1:1234 -> 10.0.0.2:80.
pub(super) fn tcp_frame() -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00];
    f.extend_from_slice(&[
        0x45, 0, 0, 46, 0, 0, 0, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
    ]);
    f.extend_from_slice(&[0x04, 0xd2, 0x00, 0x50]);
    f.resize(60, 0);
    f
}

pub(super) fn port13() -> Port {
    Port {
        port_no: 1,
        hw_addr: MacAddr([0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x01]),
        name: "eth1".into(),
        config: 0,
        state: 1,
        curr: (1 << 6) | (1 << 11),
        advertised: 0,
        supported: 0,
        peer: 0,
        curr_speed: 10_000_000,
        max_speed: 10_000_000,
    }
}

/// The head a frame must start with.
fn head_of(f: &Frame) -> String {
    let name = match &f.message {
        crate::Message::V13(m) => m.name(),
        crate::Message::V10(m) => m.name(),
    };
    format!("{name} ({}) (xid={:#x}):", version_name(f.version), f.xid)
}

proptest! {
    #[test]
    fn prints_every_v13_message(m in crate::v13::strategy::arb_message(), xid in any::<u32>()) {
        let f = Frame::v13(xid, m);
        let s = format_frame(&f);
        prop_assert!(s.starts_with(&head_of(&f)), "{}", s);
        prop_assert!(s.starts_with("OFPT_") && s.contains(" (OF1.3) "), "{}", s);
    }

    #[test]
    fn prints_every_v10_message(m in crate::v10::strategy::arb_message(), xid in any::<u32>()) {
        let f = Frame::v10(xid, m);
        let s = format_frame(&f);
        prop_assert!(s.starts_with(&head_of(&f)), "{}", s);
        prop_assert!(s.starts_with("OFPT_") && s.contains(" (OF1.0) "), "{}", s);
    }

    #[test]
    fn prints_every_multipart_request(r in crate::v13::multipart::strategy::arb_multipart_request()) {
        let name = r.body.name();
        let s = p13(1, M13::MultipartRequest(r));
        prop_assert!(s.starts_with("OFPT_MULTIPART_REQUEST (OF1.3) (xid=0x1): "), "{}", s);
        prop_assert!(s.contains(name), "{}", s);
    }

    #[test]
    fn prints_every_multipart_reply(r in crate::v13::multipart::strategy::arb_multipart_reply()) {
        let name = r.body.name();
        let s = p13(1, M13::MultipartReply(r));
        prop_assert!(s.starts_with("OFPT_MULTIPART_REPLY (OF1.3) (xid=0x1): "), "{}", s);
        prop_assert!(s.contains(name), "{}", s);
    }

    #[test]
    fn error_data_never_panics(data in proptest::collection::vec(any::<u8>(), 0..200)) {
        let s = p13(1, M13::Error(m13::ErrorMsg::Standard {
            kind: ErrorKind::BAD_REQUEST_BAD_LEN,
            data: data.clone(),
        }));
        prop_assert!(s.starts_with("OFPT_ERROR (OF1.3) (xid=0x1): OFPBRC_BAD_LEN "), "{}", s);
        let _ = packet::summary(&data);
    }
}
