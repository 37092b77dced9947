//! Ports: descriptions (`show`, `dump-ports-desc`, port-status), counters
//! (`dump-ports`) and port-mods, in Open vSwitch's multi-line layout.

use super::{bit_names, duration};
use crate::model::{port_name, Port, PortStats};
use crate::wire::MacAddr;

fn config_name(bit: u32) -> Option<&'static str> {
    Some(match bit {
        0x01 => "PORT_DOWN",
        0x02 => "NO_STP",
        0x04 => "NO_RECV",
        0x08 => "NO_RECV_STP",
        0x10 => "NO_FLOOD",
        0x20 => "NO_FWD",
        0x40 => "NO_PACKET_IN",
        _ => return None,
    })
}

fn state_name(bit: u32) -> Option<&'static str> {
    Some(match bit {
        0x1 => "LINK_DOWN",
        0x2 => "BLOCKED",
        0x4 => "LIVE",
        _ => return None,
    })
}

fn feature_name(bit: u32) -> Option<&'static str> {
    Some(match bit {
        0x0001 => "10MB-HD",
        0x0002 => "10MB-FD",
        0x0004 => "100MB-HD",
        0x0008 => "100MB-FD",
        0x0010 => "1GB-HD",
        0x0020 => "1GB-FD",
        0x0040 => "10GB-FD",
        0x0080 => "40GB-FD",
        0x0100 => "100GB-FD",
        0x0200 => "1TB-FD",
        0x0400 => "OTHER",
        0x0800 => "COPPER",
        0x1000 => "FIBER",
        0x2000 => "AUTO_NEG",
        0x4000 => "AUTO_PAUSE",
        0x8000 => "AUTO_PAUSE_ASYM",
        _ => return None,
    })
}

/// Port config bits as names (`PORT_DOWN NO_FLOOD`, `0`).
pub fn config_names(c: u32) -> String {
    bit_names(c, config_name)
}

/// Port state: the STP state first (when not "listen"), then the other bits.
pub fn state_names(state: u32) -> String {
    let stp = state & 0x300;
    if stp != 0 {
        let mut s = match stp {
            0x100 => "STP_LEARN",
            0x200 => "STP_FORWARD",
            _ => "STP_BLOCK",
        }
        .to_string();
        let rest = state & !0x300;
        if rest != 0 {
            s.push_str(&bit_names(rest, state_name));
        }
        s
    } else {
        bit_names(state, state_name)
    }
}

/// Port feature bits (1.3 layout) as names.
pub fn feature_names(f: u32) -> String {
    bit_names(f, feature_name)
}

/// One port as ovs-ofctl prints it (five or more lines, each ending in `\n`).
pub(super) fn port(p: &Port) -> String {
    let name: String = p.name.chars().take_while(|c| c.is_ascii_graphic() || *c == ' ').collect();
    let mut s = format!(" {}({name}): addr:{}\n", port_name(p.port_no), p.hw_addr);
    s.push_str(&format!("     config:     {}\n", config_names(p.config)));
    s.push_str(&format!("     state:      {}\n", state_names(p.state)));
    for (label, bits) in [
        ("current:    ", p.curr),
        ("advertised: ", p.advertised),
        ("supported:  ", p.supported),
        ("peer:       ", p.peer),
    ] {
        if bits != 0 {
            s.push_str(&format!("     {label}{}\n", feature_names(bits)));
        }
    }
    s.push_str(&format!(
        "     speed: {} Mbps now, {} Mbps max\n",
        p.curr_speed / 1000,
        p.max_speed / 1000
    ));
    s
}

/// The 16-bit number Open vSwitch sorts and pads ports by.
fn ovs_port16(p: u32) -> u16 {
    if p >= 0xffff_ff00 {
        (p & 0xffff) as u16
    } else {
        p.min(0xffff) as u16
    }
}

/// Ports sorted by number (`LOCAL` and the other reserved ports last), as Open vSwitch
/// prints a features reply's or a port-desc reply's ports.
pub(super) fn ports(list: &[Port]) -> String {
    let mut sorted: Vec<&Port> = list.iter().collect();
    sorted.sort_by_key(|p| ovs_port16(p.port_no));
    sorted.into_iter().map(port).collect()
}

/// ` ADD: 1(eth1): ...`.
pub(super) fn port_status(reason: u8, p: &Port) -> String {
    let r = match reason {
        0 => " ADD:",
        1 => " DEL:",
        2 => " MOD:",
        _ => "",
    };
    format!("{r}{}", port(p))
}

fn counter(leader: &str, v: u64, more: bool) -> String {
    let n = if v == u64::MAX { "?".to_string() } else { v.to_string() };
    format!("{leader}{n}{}", if more { ", " } else { "\n" })
}

/// One port's counters (two or three lines).
pub fn port_counters(p: &PortStats) -> String {
    let mut s = String::from("  port ");
    if ovs_port16(p.port_no) < 10 {
        s.push(' ');
    }
    s.push_str(&port_name(p.port_no));
    s.push_str(": rx ");
    s.push_str(&counter("pkts=", p.rx_packets, true));
    s.push_str(&counter("bytes=", p.rx_bytes, true));
    s.push_str(&counter("drop=", p.rx_dropped, true));
    s.push_str(&counter("errs=", p.rx_errors, true));
    s.push_str(&counter("frame=", p.rx_frame_err, true));
    s.push_str(&counter("over=", p.rx_over_err, true));
    s.push_str(&counter("crc=", p.rx_crc_err, false));
    s.push_str("           tx ");
    s.push_str(&counter("pkts=", p.tx_packets, true));
    s.push_str(&counter("bytes=", p.tx_bytes, true));
    s.push_str(&counter("drop=", p.tx_dropped, true));
    s.push_str(&counter("errs=", p.tx_errors, true));
    s.push_str(&counter("coll=", p.collisions, false));
    if let Some((sec, nsec)) = p.duration() {
        s.push_str(&format!("           duration={}\n", duration(sec, nsec)));
    }
    s
}

/// The body of a port-stats reply: the count, then each port (in reply order).
pub(super) fn port_stats(list: &[PortStats]) -> String {
    let mut s = format!(" {} ports\n", list.len());
    for p in list {
        s.push_str(&port_counters(p));
    }
    s
}

/// The body of a port-mod.
pub(super) fn port_mod(
    port_no: u32,
    addr: MacAddr,
    config: u32,
    mask: u32,
    advertise: u32,
) -> String {
    let mut s = format!(" port: {}: addr:{addr}\n", port_name(port_no));
    s.push_str(&format!("     config: {}\n", config_names(config)));
    s.push_str(&format!("     mask:   {}\n", config_names(mask)));
    s.push_str("     advertise: ");
    if advertise != 0 {
        s.push_str(&feature_names(advertise));
        s.push('\n');
    } else {
        s.push_str("UNCHANGED\n");
    }
    s
}
