//! A table of malformed or invalid messages, each with the exact OpenFlow error type/code
//! a switch must answer with. Every case is built byte by byte from the specification's
//! layouts, so it checks the codec against the spec rather than against itself.

use openflow::{error_reply, ErrorKind, Frame};

fn msg(version: u8, ty: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![version, ty, 0, 0, 0, 0, 0x12, 0x34];
    v.extend_from_slice(body);
    let l = v.len() as u16;
    v[2..4].copy_from_slice(&l.to_be_bytes());
    v
}

fn m13(ty: u8, body: &[u8]) -> Vec<u8> {
    msg(4, ty, body)
}

/// An OXM TLV of the basic class.
fn oxm(field: u8, value: &[u8], mask: Option<&[u8]>) -> Vec<u8> {
    let len = value.len() + mask.map_or(0, |m| m.len());
    let mut v = vec![0x80, 0x00, (field << 1) | mask.is_some() as u8, len as u8];
    v.extend_from_slice(value);
    if let Some(m) = mask {
        v.extend_from_slice(m);
    }
    v
}

/// An ofp_match of type OXM holding `tlvs`, padded to 8.
fn ofp_match(tlvs: &[Vec<u8>]) -> Vec<u8> {
    let body: Vec<u8> = tlvs.concat();
    let mut v = vec![0, 1];
    v.extend_from_slice(&((4 + body.len()) as u16).to_be_bytes());
    v.extend_from_slice(&body);
    while v.len() % 8 != 0 {
        v.push(0);
    }
    v
}

fn output(port: u32) -> Vec<u8> {
    let mut v = vec![0, 0, 0, 16];
    v.extend_from_slice(&port.to_be_bytes());
    v.extend_from_slice(&[0xff, 0xe5, 0, 0, 0, 0, 0, 0]);
    v
}

fn apply(actions: &[Vec<u8>]) -> Vec<u8> {
    let body = actions.concat();
    let mut v = vec![0, 4];
    v.extend_from_slice(&((8 + body.len()) as u16).to_be_bytes());
    v.extend_from_slice(&[0, 0, 0, 0]);
    v.extend_from_slice(&body);
    v
}

fn goto(table: u8) -> Vec<u8> {
    vec![0, 1, 0, 8, table, 0, 0, 0]
}

struct Fm {
    table: u8,
    command: u8,
    flags: u16,
    matched: Vec<u8>,
    insts: Vec<Vec<u8>>,
}

impl Default for Fm {
    fn default() -> Self {
        Fm {
            table: 0,
            command: 0,
            flags: 0,
            matched: ofp_match(&[]),
            insts: vec![apply(&[output(1)])],
        }
    }
}

fn flow_mod(f: Fm) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&0u64.to_be_bytes()); // cookie
    b.extend_from_slice(&0u64.to_be_bytes()); // cookie mask
    b.push(f.table);
    b.push(f.command);
    b.extend_from_slice(&[0, 0, 0, 0]); // idle, hard
    b.extend_from_slice(&0x8000u16.to_be_bytes());
    b.extend_from_slice(&0xffff_ffffu32.to_be_bytes()); // buffer
    b.extend_from_slice(&0xffff_ffffu32.to_be_bytes()); // out_port
    b.extend_from_slice(&0xffff_ffffu32.to_be_bytes()); // out_group
    b.extend_from_slice(&f.flags.to_be_bytes());
    b.extend_from_slice(&[0, 0]);
    b.extend_from_slice(&f.matched);
    b.extend_from_slice(&f.insts.concat());
    m13(14, &b)
}

fn fm_match(tlvs: &[Vec<u8>]) -> Vec<u8> {
    flow_mod(Fm { matched: ofp_match(tlvs), ..Fm::default() })
}

fn fm_actions(actions: &[Vec<u8>]) -> Vec<u8> {
    flow_mod(Fm { insts: vec![apply(actions)], ..Fm::default() })
}

fn group_mod(command: u16, ty: u8, group: u32, buckets: &[Vec<u8>]) -> Vec<u8> {
    let mut b = command.to_be_bytes().to_vec();
    b.push(ty);
    b.push(0);
    b.extend_from_slice(&group.to_be_bytes());
    b.extend_from_slice(&buckets.concat());
    m13(15, &b)
}

fn bucket(weight: u16, actions: &[Vec<u8>]) -> Vec<u8> {
    let a = actions.concat();
    let mut v = ((16 + a.len()) as u16).to_be_bytes().to_vec();
    v.extend_from_slice(&weight.to_be_bytes());
    v.extend_from_slice(&0xffff_ffffu32.to_be_bytes());
    v.extend_from_slice(&0xffff_ffffu32.to_be_bytes());
    v.extend_from_slice(&[0; 4]);
    v.extend_from_slice(&a);
    v
}

fn meter_mod(command: u16, flags: u16, id: u32, bands: &[Vec<u8>]) -> Vec<u8> {
    let mut b = command.to_be_bytes().to_vec();
    b.extend_from_slice(&flags.to_be_bytes());
    b.extend_from_slice(&id.to_be_bytes());
    b.extend_from_slice(&bands.concat());
    m13(29, &b)
}

fn band(ty: u16, rate: u32) -> Vec<u8> {
    let mut v = ty.to_be_bytes().to_vec();
    v.extend_from_slice(&16u16.to_be_bytes());
    v.extend_from_slice(&rate.to_be_bytes());
    v.extend_from_slice(&0u32.to_be_bytes());
    v.extend_from_slice(&[0; 4]);
    v
}

const ETH_IP: [u8; 2] = [0x08, 0x00];

fn cases() -> Vec<(&'static str, Vec<u8>, ErrorKind)> {
    use ErrorKind as K;
    let set_field_in_port = {
        let o = oxm(0, &[0, 0, 0, 1], None);
        let mut v = vec![0, 25, 0, 16];
        v.extend_from_slice(&o);
        v.resize(16, 0);
        v
    };
    let set_field_masked = {
        let o = oxm(3, &[0, 1, 2, 3, 4, 5], Some(&[0xff; 6]));
        let mut v = vec![0, 25, 0, 24];
        v.extend_from_slice(&o);
        v.resize(24, 0);
        v
    };
    let mut short_header = vec![4, 2, 0, 4, 0, 0, 0x12, 0x34];
    short_header.truncate(8);
    let mut len_mismatch = m13(2, &[1, 2, 3, 4]);
    len_mismatch[3] = 20;
    let mut fm_truncated = flow_mod(Fm::default());
    fm_truncated.truncate(30);
    fm_truncated[2..4].copy_from_slice(&30u16.to_be_bytes());
    let mut std_match = flow_mod(Fm::default());
    std_match[8 + 40 + 1] = 0; // match type OFPMT_STANDARD
    let mut short_match = flow_mod(Fm::default());
    short_match[8 + 40 + 3] = 2; // match length 2
    let po_bad_len = {
        let mut b = 0xffff_ffffu32.to_be_bytes().to_vec();
        b.extend_from_slice(&1u32.to_be_bytes());
        b.extend_from_slice(&64u16.to_be_bytes()); // actions_len past the end
        b.extend_from_slice(&[0; 6]);
        b.extend_from_slice(&output(2));
        m13(13, &b)
    };
    let exp_oxm_short = {
        let mut t = vec![0xff, 0xff, 0x02, 2, 0, 0];
        t.resize(6, 0);
        t
    };
    vec![
        ("unsupported version", msg(9, 2, &[]), K::BAD_REQUEST_BAD_VERSION),
        ("unknown 1.3 message type", m13(99, &[]), K::BAD_REQUEST_BAD_TYPE),
        ("header length below 8", short_header, K::BAD_REQUEST_BAD_LEN),
        ("header length past the data", len_mismatch, K::BAD_REQUEST_BAD_LEN),
        ("barrier request with a body", m13(20, &[0; 8]), K::BAD_REQUEST_BAD_LEN),
        ("features request with a body", m13(5, &[0; 4]), K::BAD_REQUEST_BAD_LEN),
        ("flow-mod cut inside its fixed part", fm_truncated, K::BAD_REQUEST_BAD_LEN),
        ("match of type OFPMT_STANDARD", std_match, K::BAD_MATCH_BAD_TYPE),
        ("match length below 4", short_match, K::BAD_MATCH_BAD_LEN),
        ("unknown basic OXM field", fm_match(&[oxm(45, &[0, 0], None)]), K::BAD_MATCH_BAD_FIELD),
        ("in_port OXM of 2 bytes", fm_match(&[oxm(0, &[0, 1], None)]), K::BAD_MATCH_BAD_LEN),
        (
            "masked in_port",
            fm_match(&[oxm(0, &[0, 0, 0, 1], Some(&[0xff; 4]))]),
            K::BAD_MATCH_BAD_MASK,
        ),
        ("experimenter OXM without its id", fm_match(&[exp_oxm_short]), K::BAD_MATCH_BAD_LEN),
        (
            "tcp_dst without ip_proto",
            fm_match(&[oxm(5, &ETH_IP, None), oxm(14, &[0, 80], None)]),
            K::BAD_MATCH_BAD_PREREQ,
        ),
        (
            "ipv4_src without eth_type",
            fm_match(&[oxm(11, &[10, 0, 0, 1], None)]),
            K::BAD_MATCH_BAD_PREREQ,
        ),
        (
            "duplicate eth_type",
            fm_match(&[oxm(5, &ETH_IP, None), oxm(5, &ETH_IP, None)]),
            K::BAD_MATCH_DUP_FIELD,
        ),
        (
            "ipv4_src bits outside its mask",
            fm_match(&[oxm(5, &ETH_IP, None), oxm(11, &[10, 0, 0, 1], Some(&[255, 0, 0, 0]))]),
            K::BAD_MATCH_BAD_WILDCARDS,
        ),
        (
            "vlan_pcp of 9",
            fm_match(&[oxm(6, &[0x10, 0x05], None), oxm(7, &[9], None)]),
            K::BAD_MATCH_BAD_VALUE,
        ),
        (
            "unknown action type",
            fm_actions(&[vec![0, 99, 0, 8, 0, 0, 0, 0]]),
            K::BAD_ACTION_BAD_TYPE,
        ),
        (
            "action length not a multiple of 8",
            fm_actions(&[vec![0, 0, 0, 12, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]]),
            K::BAD_ACTION_BAD_LEN,
        ),
        (
            "output action of 8 bytes",
            fm_actions(&[vec![0, 0, 0, 8, 0, 0, 0, 1]]),
            K::BAD_ACTION_BAD_LEN,
        ),
        ("output to port 0", fm_actions(&[output(0)]), K::BAD_ACTION_BAD_OUT_PORT),
        (
            "push_vlan with ethertype 0x0800",
            fm_actions(&[vec![0, 17, 0, 8, 0x08, 0x00, 0, 0]]),
            K::BAD_ACTION_BAD_ARGUMENT,
        ),
        ("set_field on in_port", fm_actions(&[set_field_in_port]), K::BAD_ACTION_BAD_SET_TYPE),
        ("set_field with a mask", fm_actions(&[set_field_masked]), K::BAD_ACTION_BAD_SET_ARGUMENT),
        (
            "group action beyond OFPG_MAX",
            fm_actions(&[vec![0, 22, 0, 8, 0xff, 0xff, 0xff, 0xfe]]),
            K::BAD_ACTION_BAD_OUT_GROUP,
        ),
        (
            "unknown instruction type",
            flow_mod(Fm { insts: vec![vec![0, 9, 0, 8, 0, 0, 0, 0]], ..Fm::default() }),
            K::BAD_INSTRUCTION_UNKNOWN_INST,
        ),
        (
            "goto_table of 16 bytes",
            flow_mod(Fm {
                insts: vec![vec![0, 1, 0, 16, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]],
                ..Fm::default()
            }),
            K::BAD_INSTRUCTION_BAD_LEN,
        ),
        (
            "goto_table backwards",
            flow_mod(Fm { table: 3, insts: vec![goto(2)], ..Fm::default() }),
            K::BAD_INSTRUCTION_BAD_TABLE_ID,
        ),
        (
            "two apply-actions instructions",
            flow_mod(Fm { insts: vec![apply(&[output(1)]), apply(&[output(2)])], ..Fm::default() }),
            K::BAD_INSTRUCTION_DUP_INST,
        ),
        (
            "flow-mod command 9",
            flow_mod(Fm { command: 9, ..Fm::default() }),
            K::FLOW_MOD_FAILED_BAD_COMMAND,
        ),
        (
            "flow-mod unknown flag bit",
            flow_mod(Fm { flags: 0x100, ..Fm::default() }),
            K::FLOW_MOD_FAILED_BAD_FLAGS,
        ),
        (
            "flow-mod add to OFPTT_ALL",
            flow_mod(Fm { table: 0xff, ..Fm::default() }),
            K::FLOW_MOD_FAILED_BAD_TABLE_ID,
        ),
        ("packet-out actions_len past the end", po_bad_len, K::BAD_REQUEST_BAD_LEN),
        (
            "group-mod unknown type",
            group_mod(0, 7, 1, &[bucket(0, &[output(1)])]),
            K::GROUP_MOD_FAILED_BAD_TYPE,
        ),
        (
            "group-mod unknown command",
            group_mod(5, 0, 1, &[bucket(0, &[output(1)])]),
            K::GROUP_MOD_FAILED_BAD_COMMAND,
        ),
        (
            "indirect group with two buckets",
            group_mod(0, 2, 1, &[bucket(0, &[output(1)]), bucket(0, &[output(2)])]),
            K::GROUP_MOD_FAILED_INVALID_GROUP,
        ),
        (
            "group add with id beyond OFPG_MAX",
            group_mod(0, 0, 0xffff_fffc, &[bucket(0, &[output(1)])]),
            K::GROUP_MOD_FAILED_INVALID_GROUP,
        ),
        (
            "meter with both kbps and pktps",
            meter_mod(0, 0b11, 1, &[band(1, 1000)]),
            K::METER_MOD_FAILED_BAD_FLAGS,
        ),
        ("meter band of rate 0", meter_mod(0, 1, 1, &[band(1, 0)]), K::METER_MOD_FAILED_BAD_RATE),
        ("meter id 0", meter_mod(0, 1, 0, &[band(1, 1000)]), K::METER_MOD_FAILED_INVALID_METER),
        (
            "meter band of unknown type",
            meter_mod(0, 1, 1, &[band(5, 1000)]),
            K::METER_MOD_FAILED_BAD_BAND,
        ),
        (
            "multipart request of unknown type",
            m13(18, &[0, 77, 0, 0, 0, 0, 0, 0]),
            K::BAD_REQUEST_BAD_MULTIPART,
        ),
        (
            "role request with role 7",
            m13(24, &[0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
            K::ROLE_REQUEST_FAILED_BAD_ROLE,
        ),
        (
            "set-config with unknown flags",
            m13(9, &[0, 0x10, 0, 128]),
            K::SWITCH_CONFIG_FAILED_BAD_FLAGS,
        ),
        ("1.0 unknown message type", msg(1, 30, &[]), K::BAD_REQUEST_BAD_TYPE),
        (
            "1.0 stats request of unknown type",
            msg(1, 16, &[0, 9, 0, 0]),
            K::BAD_REQUEST_BAD_MULTIPART,
        ),
        (
            "1.0 flow-mod with an unknown action",
            {
                let mut b = vec![0u8; 40]; // match
                b[..4].copy_from_slice(&0x003f_ffffu32.to_be_bytes());
                b.extend_from_slice(&[0; 8]); // cookie
                b.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0x80, 0]); // command, idle, hard, priority
                b.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0]); // buffer, out_port, flags
                b.extend_from_slice(&[0, 42, 0, 8, 0, 0, 0, 0]);
                msg(1, 14, &b)
            },
            K::BAD_ACTION_BAD_TYPE,
        ),
    ]
}

#[test]
fn each_malformed_message_gets_its_exact_error() {
    let cases = cases();
    assert!(cases.len() >= 25);
    let mut wrong = Vec::new();
    for (name, bytes, want) in &cases {
        match Frame::decode_validated(bytes) {
            Ok(f) => wrong.push(format!("{name}: accepted as {f:?}")),
            Err(e) if e.kind != *want => wrong.push(format!("{name}: got {e}, want {want}")),
            Err(_) => {}
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} cases wrong:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}

#[test]
fn the_well_formed_baselines_are_accepted() {
    // The builders above make valid messages when nothing is broken, so each case fails
    // for the one reason it names.
    let ok = [
        flow_mod(Fm::default()),
        fm_match(&[oxm(5, &ETH_IP, None), oxm(10, &[6], None), oxm(14, &[0, 80], None)]),
        fm_match(&[oxm(5, &ETH_IP, None), oxm(11, &[10, 0, 0, 0], Some(&[255, 0, 0, 0]))]),
        flow_mod(Fm { table: 1, insts: vec![goto(2)], ..Fm::default() }),
        group_mod(0, 1, 1, &[bucket(1, &[output(1)]), bucket(2, &[output(2)])]),
        meter_mod(0, 1, 1, &[band(1, 1000)]),
        m13(18, &[0, 0, 0, 0, 0, 0, 0, 0]),
        m13(24, &[0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
        m13(9, &[0, 0, 0, 128]),
    ];
    for b in &ok {
        if let Err(e) = Frame::decode_validated(b) {
            panic!("valid message rejected: {e}\n{b:02x?}");
        }
    }
}

#[test]
fn error_replies_carry_the_offending_bytes() {
    for (name, bytes, want) in cases() {
        let e = Frame::decode_validated(&bytes).unwrap_err();
        let version = if bytes[0] == 1 { 1 } else { 4 };
        let reply = error_reply(version, &e, &bytes);
        let f =
            Frame::decode(&reply).unwrap_or_else(|e| panic!("{name}: reply does not decode: {e}"));
        assert_eq!(f.xid, 0x1234, "{name}");
        let n = bytes.len().min(64);
        assert_eq!(&reply[12..], &bytes[..n], "{name}");
        if version == 4 {
            assert_eq!(
                &reply[8..12],
                &[(want.ty >> 8) as u8, want.ty as u8, (want.code >> 8) as u8, want.code as u8],
                "{name}"
            );
        }
    }
}
