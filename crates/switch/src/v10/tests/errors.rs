//! The 1.0 numbers of the errors the agent and this translation produce, checked against
//! the OpenFlow 1.0 spec's tables (`ofp_error_type` and the `ofp_*_code` enums).

use crate::v10::{error_msg_to_v10, error_to_v10};
use openflow::v13::ErrorMsg as ErrorMsg13;
use openflow::{ErrorKind as K, OfpError};

/// 1.0 types: 0 HELLO_FAILED, 1 BAD_REQUEST, 2 BAD_ACTION, 3 FLOW_MOD_FAILED,
/// 4 PORT_MOD_FAILED, 5 QUEUE_OP_FAILED.
const SPEC_1_0: &[(K, (u16, u16), &str)] = &[
    (K::HELLO_FAILED_INCOMPATIBLE, (0, 0), "OFPHFC_INCOMPATIBLE"),
    (K::HELLO_FAILED_EPERM, (0, 1), "OFPHFC_EPERM"),
    (K::BAD_REQUEST_BAD_VERSION, (1, 0), "OFPBRC_BAD_VERSION"),
    (K::BAD_REQUEST_BAD_TYPE, (1, 1), "OFPBRC_BAD_TYPE"),
    (K::BAD_REQUEST_BAD_MULTIPART, (1, 2), "OFPBRC_BAD_STAT"),
    (K::BAD_REQUEST_BAD_EXPERIMENTER, (1, 3), "OFPBRC_BAD_VENDOR"),
    (K::BAD_REQUEST_BAD_EXP_TYPE, (1, 4), "OFPBRC_BAD_SUBTYPE"),
    (K::BAD_REQUEST_EPERM, (1, 5), "OFPBRC_EPERM"),
    (K::BAD_REQUEST_BAD_LEN, (1, 6), "OFPBRC_BAD_LEN"),
    (K::BAD_REQUEST_BUFFER_EMPTY, (1, 7), "OFPBRC_BUFFER_EMPTY"),
    (K::BAD_REQUEST_BUFFER_UNKNOWN, (1, 8), "OFPBRC_BUFFER_UNKNOWN"),
    (K::BAD_REQUEST_IS_SLAVE, (1, 5), "OFPBRC_EPERM"),
    (K::BAD_ACTION_BAD_TYPE, (2, 0), "OFPBAC_BAD_TYPE"),
    (K::BAD_ACTION_BAD_LEN, (2, 1), "OFPBAC_BAD_LEN"),
    (K::BAD_ACTION_BAD_EXPERIMENTER, (2, 2), "OFPBAC_BAD_VENDOR"),
    (K::BAD_ACTION_BAD_EXP_TYPE, (2, 3), "OFPBAC_BAD_VENDOR_TYPE"),
    (K::BAD_ACTION_BAD_OUT_PORT, (2, 4), "OFPBAC_BAD_OUT_PORT"),
    (K::BAD_ACTION_BAD_ARGUMENT, (2, 5), "OFPBAC_BAD_ARGUMENT"),
    (K::BAD_ACTION_EPERM, (2, 6), "OFPBAC_EPERM"),
    (K::BAD_ACTION_TOO_MANY, (2, 7), "OFPBAC_TOO_MANY"),
    (K::BAD_ACTION_BAD_QUEUE, (2, 8), "OFPBAC_BAD_QUEUE"),
    // 1.3-only action codes: the nearest 1.0 one.
    (K::BAD_ACTION_BAD_OUT_GROUP, (2, 4), "OFPBAC_BAD_OUT_PORT"),
    (K::BAD_ACTION_MATCH_INCONSISTENT, (2, 5), "OFPBAC_BAD_ARGUMENT"),
    (K::BAD_ACTION_UNSUPPORTED_ORDER, (2, 5), "OFPBAC_BAD_ARGUMENT"),
    (K::BAD_ACTION_BAD_SET_TYPE, (2, 0), "OFPBAC_BAD_TYPE"),
    (K::BAD_ACTION_BAD_SET_LEN, (2, 1), "OFPBAC_BAD_LEN"),
    (K::BAD_ACTION_BAD_SET_ARGUMENT, (2, 5), "OFPBAC_BAD_ARGUMENT"),
    (K::FLOW_MOD_FAILED_TABLE_FULL, (3, 0), "OFPFMFC_ALL_TABLES_FULL"),
    (K::FLOW_MOD_FAILED_OVERLAP, (3, 1), "OFPFMFC_OVERLAP"),
    (K::FLOW_MOD_FAILED_EPERM, (3, 2), "OFPFMFC_EPERM"),
    (K::FLOW_MOD_FAILED_BAD_TIMEOUT, (3, 3), "OFPFMFC_BAD_EMERG_TIMEOUT"),
    (K::FLOW_MOD_FAILED_BAD_COMMAND, (3, 4), "OFPFMFC_BAD_COMMAND"),
    (K::FLOW_MOD_FAILED_BAD_FLAGS, (3, 5), "OFPFMFC_UNSUPPORTED"),
    (K::FLOW_MOD_FAILED_BAD_TABLE_ID, (3, 5), "OFPFMFC_UNSUPPORTED"),
    (K::PORT_MOD_FAILED_BAD_PORT, (4, 0), "OFPPMFC_BAD_PORT"),
    (K::PORT_MOD_FAILED_BAD_HW_ADDR, (4, 1), "OFPPMFC_BAD_HW_ADDR"),
    (K::QUEUE_OP_FAILED_BAD_PORT, (5, 0), "OFPQOFC_BAD_PORT"),
    (K::QUEUE_OP_FAILED_BAD_QUEUE, (5, 1), "OFPQOFC_BAD_QUEUE"),
    (K::QUEUE_OP_FAILED_EPERM, (5, 2), "OFPQOFC_EPERM"),
];

#[test]
fn every_kind_gets_its_1_0_number() {
    for &(kind, want, name) in SPEC_1_0 {
        let m = error_to_v10(&OfpError::new(kind, "x"), &[1, 2, 3]);
        assert_eq!((m.err_type, m.code), want, "{kind} should be 1.0 {name}");
        assert_eq!(m.data, vec![1, 2, 3]);
    }
}

#[test]
fn every_1_3_kind_lands_on_a_1_0_type() {
    for &kind in K::ALL {
        let m = error_to_v10(&OfpError::new(kind, "x"), &[]);
        let max_code = [1, 8, 8, 5, 1, 2][usize::from(m.err_type.min(5))];
        assert!(
            m.err_type <= 5 && m.code <= max_code,
            "{kind} → ({}, {}) is not a 1.0 error",
            m.err_type,
            m.code
        );
    }
}

#[test]
fn error_data_is_the_head_of_the_request() {
    let req: Vec<u8> = (0..100).collect();
    let m = error_to_v10(&OfpError::new(K::BAD_REQUEST_BAD_LEN, "x"), &req);
    assert_eq!(m.data, req[..64]);
    // Same numbering as the connection's error replies.
    let wire = openflow::error_reply(1, &OfpError::new(K::FLOW_MOD_FAILED_OVERLAP, "x"), &req);
    let m = error_to_v10(&OfpError::new(K::FLOW_MOD_FAILED_OVERLAP, "x"), &req);
    assert_eq!(&wire[8..12], &[0, m.err_type as u8, 0, m.code as u8]);
    assert_eq!(&wire[12..], &m.data[..]);
}

#[test]
fn error_messages() {
    let m =
        error_msg_to_v10(&ErrorMsg13::Standard { kind: K::FLOW_MOD_FAILED_OVERLAP, data: vec![9] })
            .unwrap();
    assert_eq!((m.err_type, m.code, m.data), (3, 1, vec![9]));
    let e = error_msg_to_v10(&ErrorMsg13::Experimenter {
        exp_type: 1,
        experimenter: 0x2320,
        data: vec![],
    })
    .unwrap_err();
    assert_eq!(e.kind.to_v10(), (1, 3));
}
