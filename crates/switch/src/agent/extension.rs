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
        now: u64,
    ) -> Result<Vec<v13::Message>, OfpError> {
        let data = self.extension_data(e.exp_type, &e.data, now)?;
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

    /// The reply document of peregrine request `exp_type` with request data `data`.
    pub(super) fn extension_data(
        &mut self,
        exp_type: u32,
        data: &[u8],
        now: u64,
    ) -> Result<Vec<u8>, OfpError> {
        match exp_type {
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
