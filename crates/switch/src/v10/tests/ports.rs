//! Port numbers (physical and reserved), feature bits, port descriptions, port-status
//! and port-mod.

use crate::v10::{
    port_mod_to_v13, port_no_from_v13, port_no_to_v13, port_status_to_v10, port_to_v10,
};
use openflow::model::{features_from_v10 as features_to_v13, features_to_v10};
use openflow::v10::port::{port_config as c10, port_features as pf10};
use openflow::v10::{PortMod as PortMod10, PortReason as R10};
use openflow::v13::port::{port_config as c13, port_features as pf13, port_state as s13, Port};
use openflow::v13::{PortReason as R13, PortStatus as PortStatus13};
use openflow::{ErrorKind, MacAddr, Reader, Writer, OFP10_VERSION};

#[test]
fn port_numbers_both_ways() {
    let table: [(u16, u32); 13] = [
        (1, 1),
        (0xfeff, 0xfeff),
        (0xff00, 0xffff_ff00), // OFPP_MAX
        (0xff01, 0xffff_ff01),
        (0xfff8, 0xffff_fff8), // IN_PORT
        (0xfff9, 0xffff_fff9), // TABLE
        (0xfffa, 0xffff_fffa), // NORMAL
        (0xfffb, 0xffff_fffb), // FLOOD
        (0xfffc, 0xffff_fffc), // ALL
        (0xfffd, 0xffff_fffd), // CONTROLLER
        (0xfffe, 0xffff_fffe), // LOCAL
        (0xffff, 0xffff_ffff), // NONE ↔ ANY
        (0, 0),
    ];
    for (p10, p13) in table {
        assert_eq!(port_no_to_v13(p10), p13);
        assert_eq!(port_no_from_v13(p13).unwrap(), p10);
    }
    for p13 in [0xff00, 0x1_0000, 0xffff_feff] {
        let e = port_no_from_v13(p13).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_PORT, "{p13:#x}");
    }
}

#[test]
fn feature_bits() {
    let pairs = [
        (pf10::F_10MB_HD, pf13::F_10MB_HD),
        (pf10::F_10MB_FD, pf13::F_10MB_FD),
        (pf10::F_100MB_HD, pf13::F_100MB_HD),
        (pf10::F_100MB_FD, pf13::F_100MB_FD),
        (pf10::F_1GB_HD, pf13::F_1GB_HD),
        (pf10::F_1GB_FD, pf13::F_1GB_FD),
        (pf10::F_10GB_FD, pf13::F_10GB_FD),
        (pf10::COPPER, pf13::COPPER),
        (pf10::FIBER, pf13::FIBER),
        (pf10::AUTONEG, pf13::AUTONEG),
        (pf10::PAUSE, pf13::PAUSE),
        (pf10::PAUSE_ASYM, pf13::PAUSE_ASYM),
    ];
    for (b10, b13) in pairs {
        assert_eq!(features_to_v13(b10), b13);
        assert_eq!(features_to_v10(b13), b10);
    }
    let all10 = pairs.iter().fold(0, |a, (b, _)| a | b);
    assert_eq!(features_to_v10(features_to_v13(all10)), all10);
    // 1.3-only speeds and undefined bits have no 1.0 bit.
    for b in [pf13::F_40GB_FD, pf13::F_100GB_FD, pf13::F_1TB_FD, pf13::F_OTHER, 1 << 16] {
        assert_eq!(features_to_v10(b), 0, "{b:#x}");
    }
    assert_eq!(features_to_v13(1 << 12), 0);
}

fn port13() -> Port {
    Port {
        port_no: 5,
        hw_addr: MacAddr([2, 0, 0, 0, 0, 5]),
        name: "veth5".into(),
        config: c13::NO_PACKET_IN | c13::PORT_DOWN,
        state: s13::LINK_DOWN | s13::LIVE | s13::BLOCKED,
        curr: pf13::F_10GB_FD | pf13::COPPER,
        advertised: pf13::F_40GB_FD | pf13::AUTONEG,
        supported: pf13::F_1GB_FD | pf13::FIBER,
        peer: pf13::PAUSE,
        curr_speed: 10_000_000,
        max_speed: 40_000_000,
        undefined: None,
        properties: None,
    }
}

/// A port's fields as a 1.0 controller reads them (`ofp_phy_port`).
struct PhyPort10 {
    port_no: u16,
    hw_addr: MacAddr,
    name: String,
    config: u32,
    state: u32,
    curr: u32,
    advertised: u32,
    supported: u32,
    peer: u32,
}

/// `p` as the 1.0 encoder writes it.
fn wire10(p: &Port) -> PhyPort10 {
    let mut w = Writer::new();
    p.encode(OFP10_VERSION, &mut w);
    let mut r = Reader::new(&w.buf);
    PhyPort10 {
        port_no: r.u16().unwrap(),
        hw_addr: r.mac().unwrap(),
        name: r.fixed_str(16).unwrap(),
        config: r.u32().unwrap(),
        state: r.u32().unwrap(),
        curr: r.u32().unwrap(),
        advertised: r.u32().unwrap(),
        supported: r.u32().unwrap(),
        peer: r.u32().unwrap(),
    }
}

#[test]
fn port_description_to_phy_port() {
    let p = wire10(&port_to_v10(&port13()).unwrap());
    assert_eq!(p.port_no, 5);
    assert_eq!(p.hw_addr, MacAddr([2, 0, 0, 0, 0, 5]));
    assert_eq!(p.name, "veth5");
    assert_eq!(p.config, c10::NO_PACKET_IN | c10::PORT_DOWN);
    assert_eq!(p.state, 1, "only LINK_DOWN; STP state bits 0");
    assert_eq!(p.curr, pf10::F_10GB_FD | pf10::COPPER);
    assert_eq!(p.advertised, pf10::AUTONEG);
    assert_eq!(p.supported, pf10::F_1GB_FD | pf10::FIBER);
    assert_eq!(p.peer, pf10::PAUSE);
    let local = wire10(&port_to_v10(&Port { port_no: 0xffff_fffe, ..port13() }).unwrap());
    assert_eq!(local.port_no, 0xfffe);
    assert!(port_to_v10(&Port { port_no: 70_000, ..port13() }).is_err());
}

#[test]
fn port_status_reasons() {
    for (r13, r10) in [
        (R13::Add, R10::Add),
        (R13::Delete, R10::Delete),
        (R13::Modify, R10::Modify),
        (R13::Unknown(9), R10::Unknown(9)),
    ] {
        let s = port_status_to_v10(&PortStatus13 { reason: r13, port: port13() }).unwrap();
        assert_eq!(s.reason, r10);
        assert_eq!(s.port, port_to_v10(&port13()).unwrap());
    }
}

#[test]
fn port_mod_to_1_3() {
    let pm = PortMod10 {
        port_no: 5,
        hw_addr: MacAddr([2, 0, 0, 0, 0, 5]),
        config: c10::PORT_DOWN | c10::NO_STP | c10::NO_FLOOD | c10::NO_PACKET_IN | 1 << 9,
        mask: c10::PORT_DOWN
            | c10::NO_STP
            | c10::NO_RECV
            | c10::NO_RECV_STP
            | c10::NO_FLOOD
            | c10::NO_FWD
            | c10::NO_PACKET_IN
            | 1 << 9,
        advertise: pf10::F_100MB_FD | pf10::AUTONEG,
    };
    let m = port_mod_to_v13(&pm);
    assert_eq!(m.port_no, 5);
    assert_eq!(m.hw_addr, pm.hw_addr);
    // STP and undefined bits are ignored; NO_FLOOD keeps bit 4.
    assert_eq!(m.mask, c13::PORT_DOWN | c13::NO_RECV | 1 << 4 | c13::NO_FWD | c13::NO_PACKET_IN);
    assert_eq!(m.config, c13::PORT_DOWN | 1 << 4 | c13::NO_PACKET_IN);
    assert_eq!(m.advertise, pf13::F_100MB_FD | pf13::AUTONEG);
    m.validate().unwrap();
    // Reserved ports cannot be configured: 1.3's check answers OFPPMFC_BAD_PORT (4, 0).
    for port_no in [0xffff, 0xfffe, 0xfff8] {
        let e = port_mod_to_v13(&PortMod10 { port_no, ..pm.clone() }).validate().unwrap_err();
        assert_eq!(e.kind.to_v10(), (4, 0), "{port_no:#x}");
    }
}
