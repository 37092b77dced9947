//! peregrine's own port commands, over the management socket (OpenFlow 1.3
//! experimenter requests, see `switch::agent::exp_type`):
//!
//! - `add-port SWITCH IFACE[,backend=B][,ofport=N]`: the interface joins the running
//!   switch (as `--port` writes a port); prints `added port N: IFACE (BACKEND)`;
//! - `del-port SWITCH IFACE|N`: the port leaves it; prints `deleted port N: IFACE`;
//! - `list-ports SWITCH`: one line per port: number, interface, backend, link state and
//!   the configuration bits set (`-` for none);
//! - `reload SWITCH`: the switch reads its configuration file again and adds and
//!   removes the ports added to it and removed from it; one line per change, and an
//!   exit status of 1 if some change failed.
//!
//! With `--json` each prints the switch's reply document. A refusal (a port that does
//! not exist, an interface that cannot be opened) is printed on standard error with
//! exit status 1.

use openflow::v13::Experimenter;
use openflow::v13::Message as M13;
use openflow::Message;
use serde_json::{json, Value};
use switch::agent::{exp_type, PEREGRINE_EXPERIMENTER};

use super::{out, out_json};
use crate::{CtlError, Ctx};

/// Sends request `exp_type` with `data` and returns the reply document; an
/// `{"error": ...}` reply is the error.
fn ask(ctx: &Ctx, exp_type: u32, data: Value, what: &str) -> Result<Value, CtlError> {
    let mut c = ctx.open()?;
    super::need13(&c, what)?;
    let reply = c.transact(Message::V13(M13::Experimenter(Experimenter {
        experimenter: PEREGRINE_EXPERIMENTER,
        exp_type,
        data: data.to_string().into_bytes(),
    })))?;
    let data = match reply.message {
        Message::V13(M13::Experimenter(e)) if e.experimenter == PEREGRINE_EXPERIMENTER => e.data,
        other => {
            return Err(CtlError::fatal(format!("{}: unexpected reply {other:?}", ctx.switch)))
        }
    };
    let v = super::reply_json(ctx, &data)?;
    if let Some(e) = v.get("error").and_then(Value::as_str) {
        return Err(CtlError::fatal(format!("{}: {what}: {e}", ctx.switch)));
    }
    Ok(v)
}

/// `add-port SWITCH IFACE[,backend=B][,ofport=N]`.
pub fn add_port(ctx: &Ctx, spec: &str) -> Result<(), CtlError> {
    let p = switch::port_spec::parse_port_flag(spec)
        .map_err(|e| CtlError::fatal(format!("add-port {spec}: {e}")))?;
    let mut req = json!({ "name": p.name });
    if p.backend != switch::port_spec::BackendName::Auto || spec.contains("backend=") {
        req["backend"] = json!(p.backend.as_str());
    }
    if let Some(n) = p.ofport {
        req["ofport"] = json!(n);
    }
    let v = ask(ctx, exp_type::ADD_PORT, req, "add-port")?;
    if ctx.json {
        return out_json(&v);
    }
    let port = &v["port"];
    out(&format!(
        "added port {}: {} ({})\n",
        port["ofport"],
        port["name"].as_str().unwrap_or_default(),
        port["backend"].as_str().unwrap_or("?")
    ))
}

/// `del-port SWITCH IFACE|N`.
pub fn del_port(ctx: &Ctx, which: &str) -> Result<(), CtlError> {
    let req = match which.parse::<u32>() {
        Ok(n) => json!({ "ofport": n }),
        Err(_) => json!({ "name": which }),
    };
    let v = ask(ctx, exp_type::DEL_PORT, req, "del-port")?;
    if ctx.json {
        return out_json(&v);
    }
    out(&format!(
        "deleted port {}: {}\n",
        v["port"]["ofport"],
        v["port"]["name"].as_str().unwrap_or_default()
    ))
}

/// `list-ports SWITCH`.
pub fn list_ports(ctx: &Ctx) -> Result<(), CtlError> {
    let v = ask(ctx, exp_type::LIST_PORTS, json!({}), "list-ports")?;
    if ctx.json {
        return out_json(&v);
    }
    let mut s = String::new();
    for p in v["ports"].as_array().map(Vec::as_slice).unwrap_or_default() {
        s.push_str(&port_line(p));
        s.push('\n');
    }
    out(&s)
}

/// One port of a reply as `list-ports` prints it.
fn port_line(p: &Value) -> String {
    let no = match p["ofport"].as_u64() {
        Some(n) if n == u64::from(openflow::action::port::LOCAL) => "LOCAL".to_string(),
        Some(n) => n.to_string(),
        None => "?".into(),
    };
    let config: Vec<&str> = p["config"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    format!(
        "{no:>5} {:<15} {:<13} {:<4} {}",
        p["name"].as_str().unwrap_or_default(),
        p["backend"].as_str().unwrap_or("-"),
        p["link"].as_str().unwrap_or("?"),
        if config.is_empty() { "-".to_string() } else { config.join(",") }
    )
}

/// `reload SWITCH`.
pub fn reload(ctx: &Ctx) -> Result<(), CtlError> {
    let v = ask(ctx, exp_type::RELOAD, json!({}), "reload")?;
    let errors: Vec<&str> = v["errors"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if ctx.json {
        out_json(&v)?;
    } else {
        let mut s = String::new();
        let list = |key: &str| v[key].as_array().cloned().unwrap_or_default();
        for p in list("removed") {
            s.push_str(&format!(
                "deleted port {}: {}\n",
                p["ofport"],
                p["name"].as_str().unwrap_or_default()
            ));
        }
        for p in list("added") {
            s.push_str(&format!(
                "added port {}: {} ({})\n",
                p["ofport"],
                p["name"].as_str().unwrap_or_default(),
                p["backend"].as_str().unwrap_or("?")
            ));
        }
        out(&s)?;
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(CtlError::fatal(format!("{}: reload: {}", ctx.switch, errors.join("; "))))
    }
}
