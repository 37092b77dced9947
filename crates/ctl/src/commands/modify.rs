//! Modification commands: flows (`add-flow`, `add-flows`, `mod-flows`, `del-flows`),
//! groups (`add-group`, `add-groups`, `mod-group`, `del-groups`), meters
//! (`add-meter`, `mod-meter`, `del-meter(s)`), `mod-port` and `packet-out`.
//!
//! Their requests have no reply unless they fail. All of a command's requests go out,
//! then one barrier; every error that comes back before the barrier reply is printed as
//! ovs-ofctl prints it (the error, then the request it names) on standard error, after
//! `FILE:LINE:` when the request came from a file, and the run exits with status 1.
//! Arguments are parsed completely before anything is sent. With `--bundle`, flow and
//! group changes go inside one bundle instead ([`crate::bundle`]), their errors
//! reported the same way; a bundle that is not committed changed nothing, and a last
//! line says so.

use serde_json::json;

use openflow::action::port;
use openflow::v10::Message as M10;
use openflow::v13::flow_mod::{FlowMod, FlowModCommand};
use openflow::v13::group_mod::{GroupMod, GroupModCommand};
use openflow::v13::meter_mod::{MeterMod, MeterModCommand};
use openflow::v13::Message as M13;
use openflow::{Message, OFP10_VERSION};

use super::{out_json, parse_flow_arg};
use crate::bundle;
use crate::compat10;
use crate::conn::{Conn, Refusal};
use crate::flow_file;
use crate::json;
use crate::ports;
use crate::{CtlError, Ctx};
use openflow::text::print;

/// `FILE:LINE: msg` when both are known.
fn locate(file: Option<&str>, line: Option<usize>, msg: &str) -> String {
    match (file, line) {
        (Some(f), Some(n)) => format!("{f}:{n}: {msg}"),
        _ => msg.to_string(),
    }
}

/// Sends the requests built from `items` (with their file lines) over a new
/// connection and reports refusals.
fn send<T>(
    ctx: &Ctx,
    file: Option<&str>,
    items: &[(Option<usize>, T)],
    build: impl Fn(u8, &T) -> Result<Message, String>,
) -> Result<(), CtlError> {
    let mut c = ctx.open()?;
    send_on(ctx, &mut c, file, items, build)
}

/// [`send`] over an open connection: with `--bundle` inside one bundle, else with one
/// barrier behind them.
pub(super) fn send_on<T>(
    ctx: &Ctx,
    c: &mut Conn,
    file: Option<&str>,
    items: &[(Option<usize>, T)],
    build: impl Fn(u8, &T) -> Result<Message, String>,
) -> Result<(), CtlError> {
    if ctx.bundle {
        bundle::check_version(c.version, &c.name).map_err(CtlError::Fatal)?;
    }
    let mut msgs = Vec::with_capacity(items.len());
    for (line, it) in items {
        msgs.push(build(c.version, it).map_err(|e| CtlError::Fatal(locate(file, *line, &e)))?);
    }
    let lines: Vec<Option<usize>> = items.iter().map(|(l, _)| *l).collect();
    if ctx.bundle {
        let b = c.bundle_transact(msgs)?;
        let mut r = report(ctx, file, &lines, &b.refusals, c.version);
        if !b.committed {
            let not = format!(
                "peregrine ctl: {}: the bundle was not committed: nothing was changed\n",
                c.name
            );
            r = match r {
                Err(CtlError::Reported(t)) => Err(CtlError::Reported(t + &not)),
                _ => Err(CtlError::Reported(not)),
            };
        }
        r
    } else {
        let refusals = c.transact_noreply(msgs)?;
        report(ctx, file, &lines, &refusals, c.version)
    }
}

fn report(
    ctx: &Ctx,
    file: Option<&str>,
    lines: &[Option<usize>],
    refusals: &[Refusal],
    version: u8,
) -> Result<(), CtlError> {
    let mut text = String::new();
    let mut errors = Vec::new();
    for r in refusals {
        let line = r.index.and_then(|i| lines.get(i).copied().flatten());
        let t = print::raw(&r.error.bytes, 2);
        text.push_str(&locate(file, line, &t));
        if ctx.json {
            let mut e = json::error(&r.error.bytes, version);
            if let (Some(n), Some(o)) = (line, e.as_object_mut()) {
                o.insert("line".into(), json!(n));
            }
            errors.push(e);
        }
    }
    if ctx.json {
        out_json(&json!({"ok": refusals.is_empty(), "errors": errors}))?;
    }
    if refusals.is_empty() {
        Ok(())
    } else {
        Err(CtlError::Reported(text))
    }
}

pub(super) fn flow_msg(version: u8, fm: &FlowMod) -> Result<Message, String> {
    if version == OFP10_VERSION {
        compat10::flow_mod10(fm).map(|f| Message::V10(M10::FlowMod(f)))
    } else {
        Ok(Message::V13(M13::FlowMod(fm.clone())))
    }
}

/// `add-flow`, `mod-flows`, `del-flows` with one FLOW (`-`: a file on standard input).
pub fn flow_cmd(ctx: &Ctx, arg: &str, command: FlowModCommand) -> Result<(), CtlError> {
    if arg == "-" {
        return flow_file(ctx, "-", command);
    }
    let fm = parse_flow_arg(arg, command).map_err(CtlError::Fatal)?;
    send(ctx, None, &[(None, fm)], flow_msg)
}

/// `add-flows FILE`: lines without a command word are `default`.
pub fn flow_file(ctx: &Ctx, file: &str, default: FlowModCommand) -> Result<(), CtlError> {
    if file == "-" || ctx.bundle {
        return send_file(
            ctx,
            file,
            |lines| flow_file::parse_flows(file, lines, default),
            flow_msg,
        );
    }
    // Checked whole first (nothing is sent if a line is bad), then sent as read again.
    let mut lines = Vec::new();
    for l in flow_file::lines_of(file).map_err(CtlError::Fatal)? {
        let l = l.map_err(CtlError::Fatal)?;
        flow_file::parse_flow_line(file, &l, default).map_err(CtlError::Fatal)?;
        lines.push(Some(l.number));
    }
    let mut c = ctx.open()?;
    let version = c.version;
    let msgs = flow_file::lines_of(file).map_err(CtlError::Fatal)?.map(|l| {
        let l = l.map_err(CtlError::Fatal)?;
        let fm = flow_file::parse_flow_line(file, &l, default).map_err(CtlError::Fatal)?;
        flow_msg(version, &fm).map_err(|e| CtlError::Fatal(locate(Some(file), Some(l.number), &e)))
    });
    let refusals = c.transact_iter_noreply(msgs)?;
    report(ctx, Some(file), &lines, &refusals, version)
}

/// Reads `file` (`-`: standard input), parses its lines with `parse` into numbered
/// items and sends them as `build` makes them; a refusal names the item's line.
fn send_file<T>(
    ctx: &Ctx,
    file: &str,
    parse: impl FnOnce(&[flow_file::Line]) -> Result<Vec<(usize, T)>, String>,
    build: impl Fn(u8, &T) -> Result<Message, String>,
) -> Result<(), CtlError> {
    let lines = flow_file::read_lines(file).map_err(CtlError::Fatal)?;
    let items: Vec<(Option<usize>, T)> =
        parse(&lines).map_err(CtlError::Fatal)?.into_iter().map(|(n, it)| (Some(n), it)).collect();
    send(ctx, Some(file), &items, build)
}

/// Which group command.
#[derive(Clone, Copy, Debug)]
pub enum GroupCmd {
    Add,
    Modify,
    Delete,
}

/// `msg()` where the switch speaks 1.3; over 1.0 an error saying that `what` need 1.3.
fn only13(version: u8, what: &str, msg: impl FnOnce() -> M13) -> Result<Message, String> {
    if version == OFP10_VERSION {
        Err(format!(
            "{what} need OpenFlow 1.3, but the switch speaks OpenFlow 1.0 \
             (use -O OpenFlow13 with a switch that supports it)"
        ))
    } else {
        Ok(Message::V13(msg()))
    }
}

fn group_msg(version: u8, gm: &GroupMod) -> Result<Message, String> {
    only13(version, "groups", || M13::GroupMod(gm.clone()))
}

pub fn group_cmd(ctx: &Ctx, arg: &str, cmd: GroupCmd) -> Result<(), CtlError> {
    if arg == "-" {
        return group_file(ctx, "-");
    }
    let command = match cmd {
        GroupCmd::Add => GroupModCommand::Add,
        GroupCmd::Modify => GroupModCommand::Modify,
        GroupCmd::Delete => GroupModCommand::Delete,
    };
    let gm = openflow::text::parse_group_mod(arg, command)
        .map_err(|e| CtlError::fatal(e.to_string()))?;
    send(ctx, None, &[(None, gm)], group_msg)
}

/// `add-groups FILE`.
pub fn group_file(ctx: &Ctx, file: &str) -> Result<(), CtlError> {
    send_file(ctx, file, |lines| flow_file::parse_groups(file, lines), group_msg)
}

/// Which meter command.
#[derive(Clone, Copy, Debug)]
pub enum MeterCmd {
    Add,
    Modify,
    Delete,
}

pub fn meter_cmd(ctx: &Ctx, arg: Option<&str>, cmd: MeterCmd) -> Result<(), CtlError> {
    let command = match cmd {
        MeterCmd::Add => MeterModCommand::Add,
        MeterCmd::Modify => MeterModCommand::Modify,
        MeterCmd::Delete => MeterModCommand::Delete,
    };
    let mm = openflow::text::parse_meter_mod(arg.unwrap_or(""), command)
        .map_err(|e| CtlError::fatal(e.to_string()))?;
    send(ctx, None, &[(None, mm)], |version, mm: &MeterMod| {
        only13(version, "meters", || M13::MeterMod(mm.clone()))
    })
}

/// The config bit a `mod-port` action changes, and the value it gives it.
pub fn port_action(action: &str) -> Result<(u32, bool), String> {
    const FLAGS: [(&str, u32, bool); 8] = [
        ("up", 0x01, false),
        ("down", 0x01, true),
        ("stp", 0x02, false),
        ("receive", 0x04, false),
        ("receive-stp", 0x08, false),
        ("flood", 0x10, false),
        ("forward", 0x20, false),
        ("packet-in", 0x40, false),
    ];
    let lower = action.to_ascii_lowercase();
    let (word, not) = if let Some(w) = lower.strip_prefix("no-") {
        (w, true)
    } else if let Some(w) = lower.strip_prefix("no") {
        (w, true)
    } else {
        (lower.as_str(), false)
    };
    FLAGS
        .iter()
        .find(|(n, _, _)| *n == word)
        .map(|(_, bit, on)| (*bit, on ^ not))
        .ok_or_else(|| format!("unknown mod-port command '{action}'"))
}

/// `mod-port PORT ACTION`: the port's address comes from the switch's port list.
pub fn mod_port(ctx: &Ctx, port_arg: &str, action: &str) -> Result<(), CtlError> {
    let (bit, set) = port_action(action).map_err(CtlError::Fatal)?;
    let mut c = ctx.open()?;
    let list = ports::fetch_ports(&mut c)?;
    let p = ports::find_port(&list, port_arg).cloned().ok_or_else(|| {
        CtlError::fatal(format!("{}: couldn't find port `{port_arg}'", ctx.switch))
    })?;
    let config = if set { bit } else { 0 };
    let msg = if c.version == OFP10_VERSION {
        Message::V10(M10::PortMod(openflow::v10::PortMod {
            port_no: compat10::port10(p.port_no).map_err(CtlError::Fatal)?,
            hw_addr: p.hw_addr,
            config,
            mask: bit,
            advertise: 0,
        }))
    } else {
        if bit & 0x65 == 0 {
            return Err(CtlError::fatal(format!(
                "mod-port {action}: OpenFlow 1.3 ports have no such setting (it is OpenFlow 1.0's)"
            )));
        }
        Message::V13(M13::PortMod(openflow::v13::PortMod {
            port_no: p.port_no,
            hw_addr: p.hw_addr,
            config,
            mask: bit,
            advertise: 0,
            properties: None,
        }))
    };
    let refusals = c.transact_noreply(vec![msg])?;
    report(ctx, None, &[None], &refusals, c.version)
}

/// Packet bytes from hex (`ofpbuf_put_hex`: bytes may be separated by spaces or dots).
pub fn packet_from_hex(hex: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let b = hex.as_bytes();
    let mut i = 0;
    loop {
        while b.get(i).is_some_and(|c| b" .\t\r\n".contains(c)) {
            i += 1;
        }
        let pair = (b.get(i), b.get(i + 1));
        match pair {
            (Some(x), Some(y)) if x.is_ascii_hexdigit() && y.is_ascii_hexdigit() => {
                let s = std::str::from_utf8(&b[i..i + 2]).unwrap_or("00");
                out.push(u8::from_str_radix(s, 16).unwrap_or(0));
                i += 2;
            }
            _ => break,
        }
    }
    if i < b.len() {
        return Err("Trailing garbage in packet data".into());
    }
    if out.len() < 14 {
        return Err("Packet data too short for Ethernet".into());
    }
    Ok(out)
}

/// The parts of `packet-out "in_port=P,packet=HEX,actions=A"`.
#[derive(Debug, PartialEq, Eq)]
pub struct PacketOutText {
    /// The port as written (`CONTROLLER` when not given).
    pub in_port: String,
    pub packet: Vec<u8>,
    pub actions: String,
}

pub fn parse_packet_out(s: &str) -> Result<PacketOutText, String> {
    let (head, actions) = match s.find("actions=").or_else(|| s.find("action=")) {
        Some(at) => {
            let rest = &s[at..];
            let eq = rest.find('=').unwrap_or(0);
            (&s[..at], rest[eq + 1..].to_string())
        }
        None => (s, String::new()),
    };
    let mut in_port = "CONTROLLER".to_string();
    let mut packet = None;
    for tok in head.split([',', ' ', '\t']).filter(|t| !t.is_empty()) {
        let (k, v) = tok.split_once('=').unwrap_or((tok, ""));
        if v.is_empty() {
            return Err(format!("field {k} missing value"));
        }
        match k {
            "in_port" => in_port = v.to_string(),
            "packet" => packet = Some(packet_from_hex(v).map_err(|e| format!("packet: {e}"))?),
            "packet_type" => return Err("packet_type is not supported".into()),
            other => return Err(format!("unknown keyword {other}")),
        }
    }
    let packet = packet.ok_or_else(|| "must specify packet".to_string())?;
    Ok(PacketOutText { in_port, packet, actions })
}

/// Whether a port may be a packet-out's in_port (a real port, LOCAL, CONTROLLER or
/// ANY/NONE).
fn valid_in_port(p: u32) -> bool {
    p < port::MAX || p == port::LOCAL || p == port::CONTROLLER || p == port::ANY
}

/// `packet-out IN_PORT ACTIONS PACKET...` or `packet-out "in_port=..,packet=..,actions=.."`.
pub fn packet_out(ctx: &Ctx, args: &[String]) -> Result<(), CtlError> {
    let (in_port_arg, actions_text, packets) = match args {
        [one] => {
            let p = parse_packet_out(one).map_err(CtlError::Fatal)?;
            (p.in_port, p.actions, vec![p.packet])
        }
        [_, _] => {
            return Err(CtlError::fatal(
                "packet-out takes IN_PORT ACTIONS PACKET... or one \
                 \"in_port=PORT,packet=HEX,actions=ACTIONS\" argument",
            ))
        }
        [port_arg, acts, pkts @ ..] => {
            let packets = pkts
                .iter()
                .map(|h| packet_from_hex(h))
                .collect::<Result<Vec<_>, _>>()
                .map_err(CtlError::Fatal)?;
            (port_arg.clone(), acts.clone(), packets)
        }
        [] => return Err(CtlError::fatal("packet-out needs a packet")),
    };
    let actions =
        openflow::text::parse_actions(&actions_text).map_err(|e| CtlError::fatal(e.to_string()))?;
    let mut c = ctx.open()?;
    let in_port = ports::resolve_port(&mut c, &in_port_arg)?;
    if !valid_in_port(in_port) {
        return Err(CtlError::fatal(format!(
            "{in_port_arg} is not a valid OpenFlow port for PACKET_OUT"
        )));
    }
    if c.version == OFP10_VERSION {
        compat10::port10(in_port).map_err(CtlError::Fatal)?;
    }
    let mut msgs = Vec::new();
    for data in packets {
        msgs.push(if c.version == OFP10_VERSION {
            Message::V10(M10::PacketOut(openflow::v10::PacketOut {
                buffer_id: u32::MAX,
                in_port,
                actions: compat10::actions10(&actions).map_err(CtlError::Fatal)?,
                data,
            }))
        } else {
            Message::V13(M13::PacketOut(openflow::v13::PacketOut {
                buffer_id: u32::MAX,
                in_port,
                actions: actions.clone(),
                data,
            }))
        });
    }
    let lines = vec![None; msgs.len()];
    let refusals = c.transact_noreply(msgs)?;
    report(ctx, None, &lines, &refusals, c.version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_actions_like_ovs_ofctl() {
        assert_eq!(port_action("down"), Ok((1, true)));
        assert_eq!(port_action("up"), Ok((1, false)));
        assert_eq!(port_action("no-flood"), Ok((0x10, true)));
        assert_eq!(port_action("noflood"), Ok((0x10, true)));
        assert_eq!(port_action("flood"), Ok((0x10, false)));
        assert_eq!(port_action("no-packet-in"), Ok((0x40, true)));
        assert_eq!(port_action("Receive"), Ok((4, false)));
        assert_eq!(port_action("sideways"), Err("unknown mod-port command 'sideways'".into()));
    }

    #[test]
    fn packet_hex() {
        let p = packet_from_hex("ffffffffffff 0000.0000.0001 0800 45").unwrap();
        assert_eq!(p.len(), 15);
        assert_eq!(p[14], 0x45);
        assert_eq!(
            packet_from_hex("ffffffffffff00000000000108004g"),
            Err("Trailing garbage in packet data".into())
        );
        assert_eq!(packet_from_hex("ffff"), Err("Packet data too short for Ethernet".into()));
    }

    #[test]
    fn packet_out_string() {
        let p = parse_packet_out(
            "in_port=1,packet=ffffffffffff0000000000010800,actions=output:2,output:3",
        )
        .unwrap();
        assert_eq!(p.in_port, "1");
        assert_eq!(p.packet.len(), 14);
        assert_eq!(p.actions, "output:2,output:3");
        let d = parse_packet_out("packet=ffffffffffff0000000000010800 actions=drop").unwrap();
        assert_eq!(d.in_port, "CONTROLLER");
        assert_eq!(parse_packet_out("in_port=1,actions=drop"), Err("must specify packet".into()));
        assert_eq!(
            parse_packet_out("in_port=1,frob=2,packet=ffffffffffff0000000000010800"),
            Err("unknown keyword frob".into())
        );
        assert!(parse_packet_out("packet=zz").unwrap_err().starts_with("packet: "));
    }
}
