//! Port descriptions as Open vSwitch's `ofp_print_phy_port` prints them, on one line:
//! `1(eth1): addr:aa:bb:cc:dd:ee:ff config: 0 state: LINK_DOWN current: 10GB-FD
//! speed: 10000 Mbps now, 10000 Mbps max`. `current`, `advertised`, `supported` and
//! `peer` appear only when non-zero; `speed` only in OpenFlow 1.3.

use super::{bit_names, port_name};
use crate::v10::port as p10;
use crate::v13::port as p13;
use crate::v13::port::Port;
use crate::wire::MacAddr;

/// `ofp_port_features` bits of OpenFlow 1.3 with Open vSwitch's names.
const FEATURES_13: [(u32, &str); 16] = {
    use p13::port_features as f;
    [
        (f::F_10MB_HD, "10MB-HD"),
        (f::F_10MB_FD, "10MB-FD"),
        (f::F_100MB_HD, "100MB-HD"),
        (f::F_100MB_FD, "100MB-FD"),
        (f::F_1GB_HD, "1GB-HD"),
        (f::F_1GB_FD, "1GB-FD"),
        (f::F_10GB_FD, "10GB-FD"),
        (f::F_40GB_FD, "40GB-FD"),
        (f::F_100GB_FD, "100GB-FD"),
        (f::F_1TB_FD, "1TB-FD"),
        (f::F_OTHER, "OTHER"),
        (f::COPPER, "COPPER"),
        (f::FIBER, "FIBER"),
        (f::AUTONEG, "AUTO_NEG"),
        (f::PAUSE, "AUTO_PAUSE"),
        (f::PAUSE_ASYM, "AUTO_PAUSE_ASYM"),
    ]
};

/// `ofp_port_features` bits of OpenFlow 1.0 (no 40G/100G/1T/other; media bits lower).
const FEATURES_10: [(u32, &str); 12] = {
    use p10::port_features as f;
    [
        (f::F_10MB_HD, "10MB-HD"),
        (f::F_10MB_FD, "10MB-FD"),
        (f::F_100MB_HD, "100MB-HD"),
        (f::F_100MB_FD, "100MB-FD"),
        (f::F_1GB_HD, "1GB-HD"),
        (f::F_1GB_FD, "1GB-FD"),
        (f::F_10GB_FD, "10GB-FD"),
        (f::COPPER, "COPPER"),
        (f::FIBER, "FIBER"),
        (f::AUTONEG, "AUTO_NEG"),
        (f::PAUSE, "AUTO_PAUSE"),
        (f::PAUSE_ASYM, "AUTO_PAUSE_ASYM"),
    ]
};

/// `ofp_port_config` bits (the 1.0 set; 1.3 keeps the same numbers for its subset).
pub(super) const CONFIG: [(u32, &str); 7] = {
    use p10::port_config as c;
    [
        (c::PORT_DOWN, "PORT_DOWN"),
        (c::NO_STP, "NO_STP"),
        (c::NO_RECV, "NO_RECV"),
        (c::NO_RECV_STP, "NO_RECV_STP"),
        (c::NO_FLOOD, "NO_FLOOD"),
        (c::NO_FWD, "NO_FWD"),
        (c::NO_PACKET_IN, "NO_PACKET_IN"),
    ]
};

const STATE_13: [(u32, &str); 3] = [
    (p13::port_state::LINK_DOWN, "LINK_DOWN"),
    (p13::port_state::BLOCKED, "BLOCKED"),
    (p13::port_state::LIVE, "LIVE"),
];

/// Feature bits of OpenFlow 1.3 as names (`0` when none).
pub(super) fn features13(bits: u32) -> String {
    bit_names(bits, &FEATURES_13)
}

/// Feature bits of OpenFlow 1.0 as names (`0` when none).
pub(super) fn features10(bits: u32) -> String {
    bit_names(bits, &FEATURES_10)
}

/// `N(name): addr:..`: the common head.
fn head(port: String, name: &str, addr: MacAddr) -> String {
    format!("{port}({name}): addr:{addr}")
}

/// The optional feature lists.
fn push_features(s: &mut String, lists: [(&str, u32); 4], names: fn(u32) -> String) {
    for (label, bits) in lists {
        if bits != 0 {
            s.push_str(&format!(" {label}: {}", names(bits)));
        }
    }
}

/// An OpenFlow 1.3 port.
pub(super) fn format_port13(p: &Port) -> String {
    let mut s = head(port_name(p.port_no), &p.name, p.hw_addr);
    s.push_str(&format!(
        " config: {} state: {}",
        bit_names(p.config, &CONFIG),
        bit_names(p.state, &STATE_13)
    ));
    push_features(
        &mut s,
        [
            ("current", p.curr),
            ("advertised", p.advertised),
            ("supported", p.supported),
            ("peer", p.peer),
        ],
        features13,
    );
    s.push_str(&format!(
        " speed: {} Mbps now, {} Mbps max",
        p.curr_speed / 1000,
        p.max_speed / 1000
    ));
    s
}

/// An OpenFlow 1.0 port: the state adds the spanning-tree state when it is not
/// `STP_LISTEN` (zero).
pub(super) fn format_port10(p: &p10::PhyPort) -> String {
    use p10::port_state as st;
    let mut s = head(port_name(p10::port_to_v13(p.port_no)), &p.name, p.hw_addr);
    let mut state: Vec<String> = Vec::new();
    if p.state & st::LINK_DOWN != 0 {
        state.push("LINK_DOWN".into());
    }
    match p.state & st::STP_MASK {
        st::STP_LEARN => state.push("STP_LEARN".into()),
        st::STP_FORWARD => state.push("STP_FORWARD".into()),
        st::STP_BLOCK => state.push("STP_BLOCK".into()),
        _ => {}
    }
    let other = p.state & !(st::LINK_DOWN | st::STP_MASK);
    if other != 0 {
        state.push(format!("{other:#x}"));
    }
    if state.is_empty() {
        state.push("0".into());
    }
    s.push_str(&format!(
        " config: {} state: {}",
        bit_names(p.config, &CONFIG),
        state.join(" ")
    ));
    push_features(
        &mut s,
        [
            ("current", p.curr),
            ("advertised", p.advertised),
            ("supported", p.supported),
            ("peer", p.peer),
        ],
        features10,
    );
    s
}

/// A port-mod body after the command: `port: 1: addr:.. config: PORT_DOWN mask:
/// PORT_DOWN advertise: UNCHANGED` (advertise 0 means "leave as is").
pub(super) fn format_port_mod(
    port: String,
    addr: MacAddr,
    config: u32,
    mask: u32,
    advertise: u32,
    features: fn(u32) -> String,
) -> String {
    let adv = if advertise == 0 {
        "UNCHANGED".into()
    } else {
        features(advertise)
    };
    format!(
        "port: {port}: addr:{addr} config: {} mask: {} advertise: {adv}",
        bit_names(config, &CONFIG),
        bit_names(mask, &CONFIG)
    )
}
