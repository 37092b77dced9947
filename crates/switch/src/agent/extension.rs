//! peregrine's own requests, carried in OpenFlow experimenter messages on any connection
//! (normally the management socket): what `peregrine trace` and the statistics commands
//! ask the running switch.
//!
//! A request is an `OFPT_EXPERIMENTER` with experimenter id [`PEREGRINE_EXPERIMENTER`],
//! an `exp_type` from [`exp_type`], and a UTF-8 JSON object as data. The reply is an
//! `OFPT_EXPERIMENTER` with the same id, type and xid whose data is a UTF-8 JSON
//! document; a request the switch cannot serve gets an `OFPT_ERROR` (an unknown type is
//! `OFPBRC_BAD_EXP_TYPE`, bad JSON `OFPBRC_BAD_LEN`... each handler documents its own).
//! Only OpenFlow 1.3 connections carry them (1.0 vendor messages are refused).
//!
//! A reply longer than one message can carry (65519 bytes of data) cannot be an
//! `OFPT_EXPERIMENTER`: such a request gets `OFPBRC_MULTIPART_BUFFER_OVERFLOW`. The same
//! requests can be made as an `OFPMP_EXPERIMENTER` multipart request (same id, type and
//! data), whose reply is cut into as many multipart replies as it needs, all but the
//! last flagged `OFPMPF_REPLY_MORE`; their data concatenated is the document.
//! `peregrine ctl dump-fastpath` asks that way.

use openflow::v13::Experimenter;
use openflow::{v13, ErrorKind, OfpError};

use super::Agent;

/// The experimenter id of peregrine's requests ("PRG" in ASCII, below the OUI range).
pub const PEREGRINE_EXPERIMENTER: u32 = 0x0050_5247;

/// The request types.
pub mod exp_type {
    /// The agent's state: connections (kind, version, role), fail-open, what it counted,
    /// flow entries per non-empty table. Request data: `{}`.
    pub const STATUS: u32 = 1;
    /// Traces a flow (ovs-ofctl match text) or a frame (hex) through the live pipeline.
    /// Request data: `{"flow": "..."}` or `{"packet": "...", "in_port": N}`; the reply,
    /// and the `{"error": ...}` reply for a user's mistake, are described in `trace.rs`.
    pub const TRACE: u32 = 2;
    /// Each datapath worker's own counters (packets, exact-match cache hits and misses,
    /// packet-ins queued and dropped, parse errors, drops by reason), as documented at
    /// [`crate::agent::stats::workers_json`]. Request data: `{}` (ignored).
    pub const WORKERS: u32 = 3;
    /// The in-kernel fast tier's entries (key, actions, version, whether live, hits) and
    /// counts, as `peregrine ctl dump-fastpath` shows them. Request data: `{}` (ignored).
    /// Reply: `{"enabled": false}` when the switch runs without the tier, else the
    /// tier's own object (see the binary's `fastpath` view).
    pub const FAST_PATH: u32 = 4;
    /// Adds a port while the switch runs (management connections only). Request data:
    /// `{"name": IFACE, "backend": B, "ofport": N}` (backend and ofport optional).
    /// Reply: `{"port": PORT}` (see `port_json`), or `{"error": "..."}`.
    pub const ADD_PORT: u32 = 5;
    /// Removes a port (management connections only). Request data: `{"name": IFACE}` or
    /// `{"ofport": N}`. Reply: `{"port": PORT}` (as it was), or `{"error": "..."}`.
    pub const DEL_PORT: u32 = 6;
    /// The ports. Request data: `{}` (ignored). Reply: `{"ports": [PORT...]}`.
    pub const LIST_PORTS: u32 = 7;
    /// Re-reads the configuration file and adds and removes the ports it added and
    /// removed (management connections only). Request data: `{}` (ignored). Reply:
    /// `{"added": [PORT...], "removed": [PORT...], "errors": ["..."]}`, or
    /// `{"error": "..."}` when the file could not be used.
    pub const RELOAD: u32 = 8;
}

/// A port as the port requests describe it: `{"ofport", "name", "backend", "hw_addr",
/// "link": "up"|"down", "config": [bits...]}`.
fn port_json(p: &openflow::v13::port::Port, backend: Option<String>) -> serde_json::Value {
    use openflow::v13::port::port_config as pc;
    let names = [
        (pc::PORT_DOWN, "port_down"),
        (pc::NO_RECV, "no_recv"),
        (crate::ports::NO_FLOOD, "no_flood"),
        (pc::NO_FWD, "no_fwd"),
        (pc::NO_PACKET_IN, "no_packet_in"),
    ];
    let config: Vec<&str> =
        names.iter().filter(|(b, _)| p.config & b != 0).map(|(_, n)| *n).collect();
    let link =
        if p.state & openflow::v13::port::port_state::LINK_DOWN != 0 { "down" } else { "up" };
    serde_json::json!({
        "ofport": p.port_no,
        "name": p.name,
        "backend": backend,
        "hw_addr": p.hw_addr.to_string(),
        "link": link,
        "config": config,
    })
}

/// Request data of `DEL_PORT`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DelPort {
    name: Option<String>,
    ofport: Option<u32>,
}

impl Agent {
    fn status_json(&self) -> Vec<u8> {
        let sessions: Vec<serde_json::Value> = self
            .sessions()
            .into_iter()
            .map(|(id, kind, version, role)| {
                serde_json::json!({
                    "id": id,
                    "kind": match kind {
                        super::SessionKind::Controller => "controller",
                        super::SessionKind::Management => "management",
                    },
                    "version": version.map(openflow::text::message::version_name),
                    "role": format!("{role:?}").to_lowercase(),
                })
            })
            .collect();
        let c = self.counters();
        let tables: serde_json::Map<String, serde_json::Value> = (0..crate::flows::NUM_TABLES
            as u8)
            .filter_map(|t| {
                let n = self.flows.flows().table_len(t);
                (n > 0).then(|| (t.to_string(), n.into()))
            })
            .collect();
        serde_json::json!({
            "connections": sessions,
            "fail_open": self.in_fail_open(),
            "packet_ins_sent": c.packet_ins_sent,
            "packet_outs": c.packet_outs,
            "packet_out_drops": c.packet_out_drops,
            "flow_mods": c.flow_mods,
            "errors_sent": c.errors_sent,
            "flows_per_table": tables,
        })
        .to_string()
        .into_bytes()
    }

    /// Serves a peregrine experimenter request.
    pub(super) fn extension(
        &mut self,
        e: &Experimenter,
        admin: bool,
        now: u64,
    ) -> Result<Vec<v13::Message>, OfpError> {
        let data = self.extension_data(e.exp_type, &e.data, admin, now)?;
        if data.len() > MAX_DATA {
            return Err(OfpError::new(
                ErrorKind::BAD_REQUEST_MULTIPART_BUFFER_OVERFLOW,
                format!(
                    "the reply ({} bytes) does not fit one message: ask with an \
                     OFPMP_EXPERIMENTER multipart request",
                    data.len()
                ),
            ));
        }
        Ok(reply(e, data))
    }

    /// The reply document of peregrine request `exp_type` with request data `data`;
    /// `admin`: the request came on a management connection as an `OFPT_EXPERIMENTER`
    /// (only such may change the switch's ports: others get `OFPBRC_EPERM`).
    pub(super) fn extension_data(
        &mut self,
        exp_type: u32,
        data: &[u8],
        admin: bool,
        now: u64,
    ) -> Result<Vec<u8>, OfpError> {
        let changes =
            matches!(exp_type, exp_type::ADD_PORT | exp_type::DEL_PORT | exp_type::RELOAD);
        if changes && !admin {
            return Err(OfpError::new(
                ErrorKind::BAD_REQUEST_EPERM,
                "ports are added and removed only over the management socket".to_string(),
            ));
        }
        let bad_json = |e: serde_json::Error| {
            OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_LEN,
                format!("the request's data is not the JSON object it should be: {e}"),
            )
        };
        let answer = |r: Result<openflow::v13::port::Port, String>, this: &Self| {
            match r {
                Ok(p) => {
                    let b = this.port_control.as_ref().and_then(|c| c.backend(p.port_no));
                    serde_json::json!({ "port": port_json(&p, b) })
                }
                Err(e) => serde_json::json!({ "error": e }),
            }
            .to_string()
            .into_bytes()
        };
        match exp_type {
            exp_type::ADD_PORT => {
                let req: super::port_admin::AddPort =
                    serde_json::from_slice(data).map_err(bad_json)?;
                let r = self.add_port(&req, now);
                Ok(answer(r, self))
            }
            exp_type::DEL_PORT => {
                let req: DelPort = serde_json::from_slice(data).map_err(bad_json)?;
                let which = match (req.name, req.ofport) {
                    (Some(n), None) => super::port_admin::PortRef::Name(n),
                    (None, Some(n)) => super::port_admin::PortRef::No(n),
                    _ => {
                        return Ok(serde_json::json!({
                            "error": "name the port by \"name\" or by \"ofport\""
                        })
                        .to_string()
                        .into_bytes())
                    }
                };
                // The port's backend is said as it was before it closed.
                let no = match &which {
                    super::port_admin::PortRef::No(n) => Some(*n),
                    super::port_admin::PortRef::Name(n) => self.ports.by_name(n),
                };
                let backend = no.and_then(|n| self.port_control.as_ref()?.backend(n));
                Ok(match self.del_port(&which, true) {
                    Ok(p) => serde_json::json!({ "port": port_json(&p, backend) }),
                    Err(e) => serde_json::json!({ "error": e }),
                }
                .to_string()
                .into_bytes())
            }
            exp_type::LIST_PORTS => {
                let ports: Vec<serde_json::Value> =
                    self.list_ports().into_iter().map(|(p, b)| port_json(&p, b)).collect();
                Ok(serde_json::json!({ "ports": ports }).to_string().into_bytes())
            }
            exp_type::RELOAD => Ok(match self.reload(now) {
                Ok(super::port_admin::Reloaded { added, removed, errors }) => {
                    let show = |ps: Vec<openflow::v13::port::Port>,
                                this: &Self|
                     -> Vec<serde_json::Value> {
                        ps.iter()
                            .map(|p| {
                                let b =
                                    this.port_control.as_ref().and_then(|c| c.backend(p.port_no));
                                port_json(p, b)
                            })
                            .collect()
                    };
                    serde_json::json!({
                        "added": show(added, self),
                        "removed": show(removed, self),
                        "errors": errors,
                    })
                }
                Err(e) => serde_json::json!({ "error": e }),
            }
            .to_string()
            .into_bytes()),
            exp_type::STATUS => Ok(self.status_json()),
            exp_type::TRACE => self.trace_request(data, now),
            exp_type::WORKERS => Ok(self.workers_json()),
            exp_type::FAST_PATH => {
                let v = match &self.fast_path {
                    Some(f) => f.dump(),
                    None => serde_json::json!({ "enabled": false }),
                };
                Ok(v.to_string().into_bytes())
            }
            t => Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_EXP_TYPE,
                format!("peregrine request type {t} does not exist"),
            )),
        }
    }
}

/// The most data an `OFPT_EXPERIMENTER` message carries (65535 less its 16-byte head).
const MAX_DATA: usize = u16::MAX as usize - 16;

/// The reply to request `e` carrying `data`.
fn reply(e: &Experimenter, data: Vec<u8>) -> Vec<v13::Message> {
    vec![v13::Message::Experimenter(Experimenter {
        experimenter: PEREGRINE_EXPERIMENTER,
        exp_type: e.exp_type,
        data,
    })]
}
