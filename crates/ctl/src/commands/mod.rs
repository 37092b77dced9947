//! The commands of `peregrine ctl`, by name, with ovs-ofctl's argument counts and
//! messages for wrong ones.
//!
//! - `query`: `show`, the `dump-*` commands, `meter-stats`, `meter-features`, `probe`:
//!   send a request, print each reply message as it comes (or gather them for
//!   `--json`, `--sort`, `--no-stats`);
//! - `modify`: flow, group, meter and port changes and `packet-out`: requests that
//!   have no reply unless they fail, sent with one barrier behind them (or, with
//!   `--bundle`, inside one bundle: [`crate::bundle`]);
//! - `replace`: `replace-flows`, which makes the switch's flows those of a file;
//! - `monitor`: print what the switch sends until killed or `--timeout`;
//! - `ports`: peregrine's `add-port`, `del-port`, `list-ports` and `reload`.

mod modify;
mod monitor;
mod ports;
mod query;
mod replace;

use std::io::Write;

use openflow::v10::stats::{StatsRequest, StatsRequestBody};
use openflow::v10::Message as M10;
use openflow::v13::flow_mod::{FlowMod, FlowModCommand};
use openflow::v13::multipart::{MultipartRequest, MultipartRequestBody};
use openflow::v13::Message as M13;
use openflow::{Frame, Message, OFP10_VERSION};

use super::conn::Conn;
use super::{CtlError, Ctx};

/// Each command: its name, and the least and most arguments after the command word
/// (SWITCH included).
const COMMANDS: &[(&str, usize, usize)] = &[
    ("show", 1, 1),
    ("dump-desc", 1, 1),
    ("dump-tables", 1, 1),
    ("dump-ports", 1, 2),
    ("dump-ports-desc", 1, 2),
    ("mod-port", 3, 3),
    ("dump-flows", 1, 2),
    ("dump-aggregate", 1, 2),
    ("add-flow", 2, 2),
    ("add-flows", 2, 2),
    ("mod-flows", 2, 2),
    ("del-flows", 1, 2),
    ("replace-flows", 2, 2),
    ("add-group", 2, 2),
    ("add-groups", 2, 2),
    ("mod-group", 2, 2),
    ("del-groups", 1, 2),
    ("dump-groups", 1, 2),
    ("dump-group-stats", 1, 2),
    ("dump-group-features", 1, 1),
    ("add-meter", 2, 2),
    ("mod-meter", 2, 2),
    ("del-meter", 1, 2),
    ("del-meters", 1, 2),
    ("dump-meter", 1, 2),
    ("dump-meters", 1, 2),
    ("meter-stats", 1, 2),
    ("meter-features", 1, 1),
    ("packet-out", 2, usize::MAX),
    ("monitor", 1, 3),
    ("probe", 1, 1),
    ("dump-fastpath", 1, 1),
    ("add-port", 2, 2),
    ("del-port", 2, 2),
    ("list-ports", 1, 1),
    ("reload", 1, 1),
];

/// Checks the command name and its number of arguments (SWITCH included).
pub fn check_arity(cmd: &str, n: usize) -> Result<(), CtlError> {
    let Some(&(_, min, max)) = COMMANDS.iter().find(|(c, _, _)| *c == cmd) else {
        return Err(CtlError::fatal(format!("unknown command '{cmd}'; use --help for help")));
    };
    if n < min {
        return Err(CtlError::fatal(format!("'{cmd}' command requires at least {min} arguments")));
    }
    if n > max {
        return Err(CtlError::fatal(format!("'{cmd}' command takes at most {max} arguments")));
    }
    Ok(())
}

/// The commands `--bundle` applies to: ovs-ofctl's flow and group changes.
const BUNDLED: &[&str] = &[
    "add-flow",
    "add-flows",
    "mod-flows",
    "del-flows",
    "replace-flows",
    "add-group",
    "add-groups",
    "mod-group",
    "del-groups",
];

/// Checks that `--bundle` applies to command `cmd`.
pub fn check_bundle(cmd: &str) -> Result<(), CtlError> {
    if BUNDLED.contains(&cmd) {
        Ok(())
    } else {
        Err(CtlError::fatal(format!(
            "--bundle: '{cmd}' cannot be bundled (only {} can)",
            BUNDLED.join(", ")
        )))
    }
}

/// Runs command `cmd` with its arguments after SWITCH.
pub fn run(ctx: &Ctx, cmd: &str, args: &[String]) -> Result<(), CtlError> {
    let arg = |i: usize| args.get(i).map(String::as_str);
    match cmd {
        "show" => query::show(ctx),
        "dump-desc" => query::dump_desc(ctx),
        "dump-tables" => query::dump_tables(ctx),
        "dump-ports" => query::dump_ports(ctx, arg(0)),
        "dump-ports-desc" => query::dump_ports_desc(ctx),
        "dump-flows" => query::dump_flows(ctx, arg(0).unwrap_or("")),
        "dump-aggregate" => query::dump_aggregate(ctx, arg(0).unwrap_or("")),
        "dump-groups" => query::dump_groups(ctx),
        "dump-group-stats" => query::dump_group_stats(ctx, arg(0).unwrap_or("")),
        "dump-group-features" => query::dump_group_features(ctx),
        "dump-meter" | "dump-meters" => query::dump_meters(ctx, arg(0), false),
        "meter-stats" => query::dump_meters(ctx, arg(0), true),
        "meter-features" => query::meter_features(ctx),
        "probe" => query::probe(ctx),
        "dump-fastpath" => query::dump_fastpath(ctx),
        "mod-port" => modify::mod_port(ctx, &args[0], &args[1]),
        "add-flow" => modify::flow_cmd(ctx, &args[0], FlowModCommand::Add),
        "add-flows" => modify::flow_file(ctx, &args[0], FlowModCommand::Add),
        "mod-flows" => {
            let c = if ctx.strict { FlowModCommand::ModifyStrict } else { FlowModCommand::Modify };
            modify::flow_cmd(ctx, &args[0], c)
        }
        "del-flows" => {
            let c = if ctx.strict { FlowModCommand::DeleteStrict } else { FlowModCommand::Delete };
            modify::flow_cmd(ctx, arg(0).unwrap_or(""), c)
        }
        "replace-flows" => replace::replace_flows(ctx, &args[0]),
        "add-group" => modify::group_cmd(ctx, &args[0], modify::GroupCmd::Add),
        "add-groups" => modify::group_file(ctx, &args[0]),
        "mod-group" => modify::group_cmd(ctx, &args[0], modify::GroupCmd::Modify),
        "del-groups" => modify::group_cmd(ctx, arg(0).unwrap_or(""), modify::GroupCmd::Delete),
        "add-meter" => modify::meter_cmd(ctx, Some(&args[0]), modify::MeterCmd::Add),
        "mod-meter" => modify::meter_cmd(ctx, Some(&args[0]), modify::MeterCmd::Modify),
        "del-meter" | "del-meters" => modify::meter_cmd(ctx, arg(0), modify::MeterCmd::Delete),
        "packet-out" => modify::packet_out(ctx, args),
        "monitor" => monitor::monitor(ctx, args),
        "add-port" => ports::add_port(ctx, &args[0]),
        "del-port" => ports::del_port(ctx, &args[0]),
        "list-ports" => ports::list_ports(ctx),
        "reload" => ports::reload(ctx),
        other => Err(CtlError::fatal(format!("unknown command '{other}'; use --help for help"))),
    }
}

/// Parses a FLOW argument for `command` (ovs-ofctl syntax), with ovs-ofctl's extra
/// rule that deletes and dumps select by cookie only with a mask (`cookie=V/M`).
pub fn parse_flow_arg(s: &str, command: FlowModCommand) -> Result<FlowMod, String> {
    let fm = openflow::text::parse_flow_mod(s, command).map_err(|e| e.to_string())?;
    let selects = matches!(command, FlowModCommand::Delete | FlowModCommand::DeleteStrict);
    let plain_cookie =
        s.split([',', ' ', '\t']).any(|t| t.starts_with("cookie=") && !t.contains('/'));
    if selects && plain_cookie {
        return Err("cannot set cookie (select flows by cookie with cookie=VALUE/MASK)".into());
    }
    Ok(fm)
}

/// A 1.3 multipart request.
fn mp(body: MultipartRequestBody) -> Message {
    Message::V13(M13::MultipartRequest(MultipartRequest { flags: 0, body }))
}

/// A 1.0 stats request.
fn st(body: StatsRequestBody) -> Message {
    Message::V10(M10::StatsRequest(StatsRequest { flags: 0, body }))
}

/// Fails when the connection speaks 1.0 and `what` needs 1.3.
fn need13(c: &Conn, what: &str) -> Result<(), CtlError> {
    if c.version == OFP10_VERSION {
        Err(CtlError::fatal(format!(
            "{what} needs OpenFlow 1.3, but {} speaks OpenFlow 1.0 \
             (use -O OpenFlow13 with a switch that supports it)",
            c.name
        )))
    } else {
        Ok(())
    }
}

/// Asks for the switch configuration in the connection's version: the reply as it came,
/// and its `(flags, miss_send_len)` when it is a configuration reply.
fn get_config(c: &mut Conn) -> Result<(Frame, Option<(u16, u16)>), CtlError> {
    let reply = c.transact(if c.version == OFP10_VERSION {
        Message::V10(M10::GetConfigRequest)
    } else {
        Message::V13(M13::GetConfigRequest)
    })?;
    let config = match &reply.message {
        Message::V13(M13::GetConfigReply(c)) => Some((c.flags, c.miss_send_len)),
        Message::V10(M10::GetConfigReply(c)) => Some((c.flags, c.miss_send_len)),
        _ => None,
    };
    Ok((reply, config))
}

/// Writes to standard output; a closed pipe ends the run quietly.
fn out(s: &str) -> Result<(), CtlError> {
    let mut o = std::io::stdout().lock();
    o.write_all(s.as_bytes()).and_then(|_| o.flush()).map_err(|e| {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            CtlError::reported("")
        } else {
            CtlError::fatal(format!("standard output: {e}"))
        }
    })
}

/// The JSON document of a peregrine experimenter reply's data.
fn reply_json(ctx: &Ctx, data: &[u8]) -> Result<serde_json::Value, CtlError> {
    serde_json::from_slice(data)
        .map_err(|e| CtlError::fatal(format!("{}: a reply that is not JSON: {e}", ctx.switch)))
}

/// Writes one JSON document (and a newline) to standard output.
fn out_json(v: &serde_json::Value) -> Result<(), CtlError> {
    out(&format!("{v}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arity_messages_like_ovs_ofctl() {
        assert!(check_arity("show", 1).is_ok());
        let e = check_arity("show", 2).unwrap_err();
        assert!(
            matches!(e, CtlError::Fatal(ref m) if m == "'show' command takes at most 1 arguments")
        );
        let e = check_arity("mod-port", 2).unwrap_err();
        assert!(
            matches!(e, CtlError::Fatal(ref m) if m == "'mod-port' command requires at least 3 arguments")
        );
        let e = check_arity("frob", 1).unwrap_err();
        assert!(matches!(e, CtlError::Fatal(ref m) if m.contains("unknown command 'frob'")));
        assert!(check_arity("packet-out", 5).is_ok());
        assert!(check_arity("replace-flows", 2).is_ok());
        assert!(check_arity("replace-flows", 1).is_err());
    }

    #[test]
    fn bundle_applies_to_flow_and_group_changes() {
        for c in ["add-flow", "add-flows", "mod-flows", "del-flows", "replace-flows", "add-groups"]
        {
            assert!(check_bundle(c).is_ok(), "{c}");
        }
        let e = check_bundle("dump-flows").unwrap_err();
        assert!(
            matches!(e, CtlError::Fatal(ref m) if m.starts_with("--bundle: 'dump-flows' cannot be bundled (only add-flow, ")),
            "{e:?}"
        );
        assert!(check_bundle("add-meter").is_err());
        assert!(check_bundle("packet-out").is_err());
    }

    #[test]
    fn delete_needs_a_cookie_mask() {
        assert!(parse_flow_arg("cookie=5", FlowModCommand::Delete).is_err());
        let f = parse_flow_arg("cookie=0x5/0xff,ip", FlowModCommand::Delete).unwrap();
        assert_eq!((f.cookie, f.cookie_mask), (5, 0xff));
        let a = parse_flow_arg("cookie=5,actions=drop", FlowModCommand::Add).unwrap();
        assert_eq!(a.cookie, 5);
        let e = parse_flow_arg("ip,nw_scr=1", FlowModCommand::Add).unwrap_err();
        assert!(e.contains("at column 4"), "{e}");
    }
}
