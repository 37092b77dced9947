//! The switch's statistics for Prometheus: [`render`] writes them in the Prometheus text
//! exposition format (version 0.0.4), and [`serve`] answers `GET /metrics` with them
//! over a minimal HTTP/1.1 (no HTTP library: one request per connection, then close).
//!
//! # Metrics
//!
//! Every name starts with `peregrine_`; counters end in `_total`, gauges do not. Label
//! values are escaped as the format asks (backslash, double quote, newline).
//!
//! - per port (`port`: number or `LOCAL`, `name`: interface): `port_{rx,tx}_packets_total`,
//!   `port_{rx,tx}_bytes_total` (the datapath's counts), `port_{rx,tx}_dropped_total`,
//!   `port_{rx,tx}_errors_total` (the port backend's), `port_link_up` (gauge, 1 or 0);
//! - per table (`table`; table 0 and every table with flows or lookups):
//!   `table_active_flows` (gauge), `table_lookups_total`, `table_matches_total`;
//! - per group (`group`): `group_{packets,bytes}_total`, and per bucket (`group`,
//!   `bucket`: index) `group_bucket_{packets,bytes}_total`;
//! - per meter (`meter`): `meter_{packets,bytes}_total` (what reached it), and per band
//!   (`meter`, `band`: index, `type`: `drop`, `dscp_remark` or `experimenter`)
//!   `meter_band_{packets,bytes}_total` (what the band applied to: dropped by a drop
//!   band, remarked by a DSCP-remark band);
//! - per datapath worker (`worker`: registration index, `thread`: its thread's name):
//!   `worker_packets_total`, `worker_cache_hits_total`, `worker_cache_misses_total`;
//! - the datapath, summed over workers: `datapath_packets_total`, `datapath_drops_total`
//!   (`reason`, see [`DROP_REASONS`]), `datapath_packet_ins_total` (queued for the
//!   agent), `datapath_packet_ins_dropped_total` (queue full),
//!   `datapath_parse_errors_total` (`kind`: every parse error kind),
//!   `datapath_missing_header_total` (rewrites skipped);
//! - the agent: `agent_connections` (gauge; `kind`: `controller` or `management`,
//!   `role`: `equal`, `master` or `slave`, every combination), `agent_fail_open` (gauge),
//!   `agent_packet_ins_sent_total`, `agent_packet_outs_total`,
//!   `agent_packet_out_drops_total`, `agent_flow_mods_total`, `agent_errors_sent_total`.
//!
//! # HTTP
//!
//! [`parse_request`] reads a request head (request line and header fields, ended by an
//! empty line, at most [`MAX_HEAD`] bytes, LF or CRLF line ends, blank lines before the
//! request line skipped) and decides the answer: `GET` or `HEAD /metrics` (a query is
//! ignored; absolute-form targets are accepted) is 200 with
//! `Content-Type: text/plain; version=0.0.4; charset=utf-8`; another path is 404;
//! another method on `/metrics` is 405 with `Allow: GET, HEAD`; anything that is not an
//! HTTP/1.0 or 1.1 request head, or a head over [`MAX_HEAD`] bytes, is 400. A client
//! that sends no complete head within [`READ_TIMEOUT`] gets 408. The rendering runs on
//! the agent thread (an [`Input::Call`]); if the agent does not answer within
//! [`AGENT_TIMEOUT`] the answer is 503. Every response says `Connection: close`, and the
//! connection is closed after it. At most [`MAX_CONNECTIONS`] connections are served at
//! once; more wait in the listen backlog.

#[cfg(test)]
mod tests;

use std::fmt::Write as _;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Duration;

use datapath::counters::Misc;
use datapath::parse::ParseError;
use openflow::action::{port as ofport, OFPG_ALL};
use openflow::v13::meter_mod::{MeterBand, OFPM_ALL};
use openflow::v13::port::port_state;
use openflow::v13::role::ControllerRole;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub use crate::agent::stats::DROP_REASONS;
use crate::agent::{Agent, SessionKind};
use crate::shell::{AgentJob, Input};

/// Most bytes of a request head (request line and header fields).
pub const MAX_HEAD: usize = 8192;
/// How long a client has to send its request head.
pub const READ_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the agent thread has to render the metrics.
pub const AGENT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long writing a response (and reading what follows it) may take.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);
/// Most connections served at once.
pub const MAX_CONNECTIONS: usize = 16;
/// The `Content-Type` of the metrics.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A metric's type.
#[derive(Clone, Copy)]
enum Kind {
    Counter,
    Gauge,
}

/// Prometheus text being written: families one after another, each its `# HELP` and
/// `# TYPE` lines then its samples (a family's samples are never split).
struct Text(String);

impl Text {
    /// Writes family `name` with `samples` (label set as [`labels`] writes it, value).
    fn family(
        &mut self,
        name: &str,
        kind: Kind,
        help: &str,
        samples: impl IntoIterator<Item = (String, u64)>,
    ) {
        let kind = match kind {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        };
        let _ = writeln!(self.0, "# HELP {name} {}", escape_help(help));
        let _ = writeln!(self.0, "# TYPE {name} {kind}");
        for (labels, v) in samples {
            let _ = writeln!(self.0, "{name}{labels} {v}");
        }
    }

    /// A family of one sample without labels.
    fn single(&mut self, name: &str, kind: Kind, help: &str, v: u64) {
        self.family(name, kind, help, [(String::new(), v)]);
    }
}

/// A label set, `{k="v",...}` with the values escaped (empty for no labels).
pub fn labels(pairs: &[(&str, &str)]) -> String {
    if pairs.is_empty() {
        return String::new();
    }
    let mut s = String::from("{");
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(s, "{k}=\"{}\"", escape_label(v));
    }
    s.push('}');
    s
}

/// A label value escaped for the text format: `\` as `\\`, `"` as `\"`, a line feed as
/// `\n`.
pub fn escape_label(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

/// A `# HELP` text escaped: `\` as `\\`, a line feed as `\n`.
fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

/// How a port number is shown: its number, or `LOCAL`.
fn port_label(no: u32) -> String {
    if no == ofport::LOCAL {
        "LOCAL".to_string()
    } else {
        no.to_string()
    }
}

fn role_name(r: ControllerRole) -> &'static str {
    match r {
        ControllerRole::Master => "master",
        ControllerRole::Slave => "slave",
        ControllerRole::Equal | ControllerRole::NoChange | ControllerRole::Unknown(_) => "equal",
    }
}

fn band_type(b: &MeterBand) -> &'static str {
    match b {
        MeterBand::Drop { .. } => "drop",
        MeterBand::DscpRemark { .. } => "dscp_remark",
        MeterBand::Experimenter { .. } => "experimenter",
    }
}

/// Every statistic of the switch at `now` (ns on the agent's clock), in the Prometheus
/// text format (see the module comment for the names and labels).
pub fn render(agent: &Agent, now: u64) -> String {
    // The kernel tier's hits up to now count like the workers'.
    agent.sync_fast_path();
    let mut t = Text(String::with_capacity(16 * 1024));
    let dp = agent.flows().datapath();
    ports(&mut t, agent, now);
    tables(&mut t, agent);
    groups(&mut t, agent, now);
    meters(&mut t, agent, now);

    let workers = agent.worker_stats();
    let per_worker = |m: Misc| {
        workers.iter().map(move |w| {
            let thread = w.thread.as_deref().unwrap_or("");
            (
                labels(&[("worker", &w.index.to_string()), ("thread", thread)]),
                w.get(m),
            )
        })
    };
    use Kind::{Counter, Gauge};
    t.family(
        "peregrine_worker_packets_total",
        Counter,
        "Packets the datapath worker received and processed.",
        per_worker(Misc::Packets),
    );
    t.family(
        "peregrine_worker_cache_hits_total",
        Counter,
        "Packets the worker's exact-match cache answered.",
        per_worker(Misc::CacheHits),
    );
    t.family(
        "peregrine_worker_cache_misses_total",
        Counter,
        "Packets the worker looked up in the tables after an exact-match cache miss.",
        per_worker(Misc::CacheMisses),
    );

    t.single(
        "peregrine_datapath_packets_total",
        Counter,
        "Packets the datapath received and processed (all workers).",
        dp.read_misc(Misc::Packets),
    );
    t.family(
        "peregrine_datapath_drops_total",
        Counter,
        "Packets the datapath dropped, by reason.",
        DROP_REASONS
            .iter()
            .map(|(m, r)| (labels(&[("reason", r)]), dp.read_misc(*m))),
    );
    t.single(
        "peregrine_datapath_kernel_hits_total",
        Counter,
        "Packets the in-kernel fast tier forwarded or dropped itself (also in packets_total).",
        dp.read_misc(Misc::KernelHits),
    );
    t.single(
        "peregrine_datapath_packet_ins_total",
        Counter,
        "Packet-ins the datapath queued for the agent.",
        dp.read_misc(Misc::PacketIns),
    );
    t.single(
        "peregrine_datapath_packet_ins_dropped_total",
        Counter,
        "Packet-ins lost because the agent's queue was full.",
        dp.read_misc(Misc::PacketInDropped),
    );
    let parse = dp.read_parse_errors();
    t.family(
        "peregrine_datapath_parse_errors_total",
        Counter,
        "Received frames whose parsing stopped early, by the problem found.",
        ParseError::ALL.iter().map(|k| {
            let n = parse
                .iter()
                .filter(|(e, _)| e == k)
                .map(|(_, n)| n)
                .sum::<u64>();
            (labels(&[("kind", k.name())]), n)
        }),
    );
    t.single(
        "peregrine_datapath_missing_header_total",
        Counter,
        "Set-field and other rewrites skipped because the packet lacked the header.",
        dp.read_misc(Misc::MissingHeader),
    );

    let sessions = agent.sessions();
    let mut conns = Vec::new();
    for (kind, kname) in [
        (SessionKind::Controller, "controller"),
        (SessionKind::Management, "management"),
    ] {
        for role in ["equal", "master", "slave"] {
            let n = sessions
                .iter()
                .filter(|(_, k, _, r)| *k == kind && role_name(*r) == role)
                .count() as u64;
            conns.push((labels(&[("kind", kname), ("role", role)]), n));
        }
    }
    t.family(
        "peregrine_agent_connections",
        Gauge,
        "OpenFlow connections open, by kind and controller role.",
        conns,
    );
    t.single(
        "peregrine_agent_fail_open",
        Gauge,
        "Whether the fail-open learning switch is forwarding (1) or not (0).",
        u64::from(agent.in_fail_open()),
    );
    let c = agent.counters();
    t.single(
        "peregrine_agent_packet_ins_sent_total",
        Counter,
        "Packet-in messages sent to connections.",
        c.packet_ins_sent,
    );
    t.single(
        "peregrine_agent_packet_outs_total",
        Counter,
        "Packet-out requests received.",
        c.packet_outs,
    );
    t.single(
        "peregrine_agent_packet_out_drops_total",
        Counter,
        "Packet-outs whose packets could not be handed to the workers.",
        c.packet_out_drops,
    );
    t.single(
        "peregrine_agent_flow_mods_total",
        Counter,
        "Flow-mod requests received from connections.",
        c.flow_mods,
    );
    t.single(
        "peregrine_agent_errors_sent_total",
        Counter,
        "OpenFlow error messages sent.",
        c.errors_sent,
    );
    t.0
}

fn ports(t: &mut Text, agent: &Agent, now: u64) {
    let dp = agent.flows().datapath();
    let stats = agent
        .ports()
        .stats(dp, ofport::ANY, now)
        .unwrap_or_default();
    let rows: Vec<_> = agent
        .ports()
        .desc()
        .into_iter()
        .map(|d| {
            let s = stats
                .iter()
                .find(|s| s.port_no == d.port_no)
                .cloned()
                .unwrap_or_default();
            let l = labels(&[("port", &port_label(d.port_no)), ("name", &d.name)]);
            (l, s, d.state & port_state::LINK_DOWN == 0)
        })
        .collect();
    type Pick = fn(&openflow::v13::multipart::PortStats) -> u64;
    let counters: [(&str, &str, Pick); 8] = [
        (
            "peregrine_port_rx_packets_total",
            "Packets received on the port and processed by the datapath.",
            |s| s.rx_packets,
        ),
        (
            "peregrine_port_rx_bytes_total",
            "Bytes received on the port and processed by the datapath.",
            |s| s.rx_bytes,
        ),
        (
            "peregrine_port_tx_packets_total",
            "Packets the datapath sent to the port.",
            |s| s.tx_packets,
        ),
        (
            "peregrine_port_tx_bytes_total",
            "Bytes the datapath sent to the port.",
            |s| s.tx_bytes,
        ),
        (
            "peregrine_port_rx_dropped_total",
            "Received frames the port backend dropped.",
            |s| s.rx_dropped,
        ),
        (
            "peregrine_port_tx_dropped_total",
            "Frames to send that the port backend dropped, and frames the kernel dropped after the XDP fast path sent them to the port.",
            |s| s.tx_dropped,
        ),
        (
            "peregrine_port_rx_errors_total",
            "Receive errors of the port backend.",
            |s| s.rx_errors,
        ),
        (
            "peregrine_port_tx_errors_total",
            "Transmit errors of the port backend.",
            |s| s.tx_errors,
        ),
    ];
    for (name, help, pick) in counters {
        t.family(
            name,
            Kind::Counter,
            help,
            rows.iter().map(|(l, s, _)| (l.clone(), pick(s))),
        );
    }
    t.family(
        "peregrine_port_link_up",
        Kind::Gauge,
        "Whether the port's link is up (1) or down (0).",
        rows.iter().map(|(l, _, up)| (l.clone(), u64::from(*up))),
    );
}

fn tables(t: &mut Text, agent: &Agent) {
    let rows: Vec<(String, openflow::v13::multipart::TableStats)> = agent
        .flows()
        .table_stats()
        .into_iter()
        .filter(|s| s.table_id == 0 || s.active_count > 0 || s.lookup_count > 0)
        .map(|s| (labels(&[("table", &s.table_id.to_string())]), s))
        .collect();
    t.family(
        "peregrine_table_active_flows",
        Kind::Gauge,
        "Flow entries in the table.",
        rows.iter()
            .map(|(l, s)| (l.clone(), u64::from(s.active_count))),
    );
    t.family(
        "peregrine_table_lookups_total",
        Kind::Counter,
        "Packets looked up in the table.",
        rows.iter().map(|(l, s)| (l.clone(), s.lookup_count)),
    );
    t.family(
        "peregrine_table_matches_total",
        Kind::Counter,
        "Packets that matched a flow entry of the table.",
        rows.iter().map(|(l, s)| (l.clone(), s.matched_count)),
    );
}

fn groups(t: &mut Text, agent: &Agent, now: u64) {
    let stats = agent
        .groups()
        .stats(agent.flows().datapath(), OFPG_ALL, now, |_| 0);
    let group = |id: u32| labels(&[("group", &id.to_string())]);
    t.family(
        "peregrine_group_packets_total",
        Kind::Counter,
        "Packets the group processed.",
        stats.iter().map(|g| (group(g.group_id), g.packet_count)),
    );
    t.family(
        "peregrine_group_bytes_total",
        Kind::Counter,
        "Bytes the group processed.",
        stats.iter().map(|g| (group(g.group_id), g.byte_count)),
    );
    let buckets: Vec<(String, u64, u64)> = stats
        .iter()
        .flat_map(|g| {
            g.bucket_stats.iter().enumerate().map(|(i, b)| {
                let l = labels(&[
                    ("group", &g.group_id.to_string()),
                    ("bucket", &i.to_string()),
                ]);
                (l, b.packet_count, b.byte_count)
            })
        })
        .collect();
    t.family(
        "peregrine_group_bucket_packets_total",
        Kind::Counter,
        "Packets the group bucket processed.",
        buckets.iter().map(|(l, p, _)| (l.clone(), *p)),
    );
    t.family(
        "peregrine_group_bucket_bytes_total",
        Kind::Counter,
        "Bytes the group bucket processed.",
        buckets.iter().map(|(l, _, b)| (l.clone(), *b)),
    );
}

fn meters(t: &mut Text, agent: &Agent, now: u64) {
    let dp = agent.flows().datapath();
    let stats = agent.meters().stats(dp, OFPM_ALL, now, |_| 0);
    let configs = agent.meters().config(OFPM_ALL);
    let meter = |id: u32| labels(&[("meter", &id.to_string())]);
    t.family(
        "peregrine_meter_packets_total",
        Kind::Counter,
        "Packets that reached the meter.",
        stats.iter().map(|m| (meter(m.meter_id), m.packet_in_count)),
    );
    t.family(
        "peregrine_meter_bytes_total",
        Kind::Counter,
        "Bytes that reached the meter.",
        stats.iter().map(|m| (meter(m.meter_id), m.byte_in_count)),
    );
    let bands: Vec<(String, u64, u64)> = stats
        .iter()
        .flat_map(|m| {
            let config = configs.iter().find(|c| c.meter_id == m.meter_id);
            m.band_stats.iter().enumerate().map(move |(i, b)| {
                let kind = config
                    .and_then(|c| c.bands.get(i))
                    .map_or("drop", band_type);
                let l = labels(&[
                    ("meter", &m.meter_id.to_string()),
                    ("band", &i.to_string()),
                    ("type", kind),
                ]);
                (l, b.packet_band_count, b.byte_band_count)
            })
        })
        .collect();
    t.family(
        "peregrine_meter_band_packets_total",
        Kind::Counter,
        "Packets the meter band applied to (dropped by a drop band, remarked by a dscp_remark band).",
        bands.iter().map(|(l, p, _)| (l.clone(), *p)),
    );
    t.family(
        "peregrine_meter_band_bytes_total",
        Kind::Counter,
        "Bytes the meter band applied to.",
        bands.iter().map(|(l, _, b)| (l.clone(), *b)),
    );
}

/// What a request asks, as far as this endpoint is concerned (see the module comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request {
    /// `GET /metrics`, or `HEAD /metrics` (`head`: answer without the body).
    Metrics { head: bool },
    /// Another path: 404.
    NotFound,
    /// `/metrics` with another method: 405.
    MethodNotAllowed,
    /// Not an HTTP/1.x request head, or one over [`MAX_HEAD`] bytes: 400.
    BadRequest,
}

/// Decides what the bytes received so far ask: `None` while the head is incomplete and
/// may still complete within [`MAX_HEAD`] bytes. Bytes after the head are ignored.
pub fn parse_request(buf: &[u8]) -> Option<Request> {
    match head_lines(buf) {
        Some(lines) => Some(route(&lines)),
        None if buf.len() >= MAX_HEAD => Some(Request::BadRequest),
        None => None,
    }
}

/// The head's lines (request line first, line ends removed) if an empty line ends it
/// within the first [`MAX_HEAD`] bytes.
fn head_lines(buf: &[u8]) -> Option<Vec<&[u8]>> {
    let mut rest = buf.get(..MAX_HEAD).unwrap_or(buf);
    let mut lines = Vec::new();
    while let Some(i) = rest.iter().position(|&b| b == b'\n') {
        let line = rest.get(..i).unwrap_or_default();
        rest = rest.get(i + 1..).unwrap_or_default();
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        match (line.is_empty(), lines.is_empty()) {
            // Blank lines before the request line are skipped (RFC 9112 §2.2).
            (true, true) => {}
            (true, false) => return Some(lines),
            (false, _) => lines.push(line),
        }
    }
    None
}

/// RFC 9110 `tchar`: what a method or a field name is made of.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn route(lines: &[&[u8]]) -> Request {
    let Some((first, fields)) = lines.split_first() else {
        return Request::BadRequest;
    };
    let mut parts = first.split(|&b| b == b' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Request::BadRequest;
    };
    let target_ok = !target.is_empty() && target.iter().all(|&b| b.is_ascii_graphic());
    if method.is_empty()
        || !method.iter().all(|&b| is_tchar(b))
        || !target_ok
        || !matches!(version, b"HTTP/1.0" | b"HTTP/1.1")
    {
        return Request::BadRequest;
    }
    for f in fields {
        // A field is `name: value`; a line starting with white space (obsolete line
        // folding) is refused, as RFC 9112 §5.2 allows.
        let Some(colon) = f.iter().position(|&b| b == b':') else {
            return Request::BadRequest;
        };
        let (name, value) = f.split_at(colon);
        let value_ok = value
            .iter()
            .all(|&b| b == b'\t' || (b >= 0x20 && b != 0x7f));
        if name.is_empty() || !name.iter().all(|&b| is_tchar(b)) || !value_ok {
            return Request::BadRequest;
        }
    }
    let path = match path_of(target) {
        Some(p) => p,
        None if target == b"*" => return Request::NotFound,
        None => return Request::BadRequest,
    };
    if path != b"/metrics" {
        return Request::NotFound;
    }
    match method {
        b"GET" => Request::Metrics { head: false },
        b"HEAD" => Request::Metrics { head: true },
        _ => Request::MethodNotAllowed,
    }
}

/// The path of a request target in origin form (`/path?query`) or absolute form
/// (`http://host/path?query`); none for other forms.
fn path_of(target: &[u8]) -> Option<&[u8]> {
    let lower = target.to_ascii_lowercase();
    let scheme = [&b"http://"[..], b"https://"]
        .into_iter()
        .find(|s| lower.starts_with(s));
    let path = match scheme {
        Some(s) => {
            let rest = target.get(s.len()..)?;
            match rest.iter().position(|&b| b == b'/' || b == b'?') {
                Some(i) if i > 0 => rest.get(i..)?,
                None if !rest.is_empty() => &b"/"[..],
                _ => return None,
            }
        }
        None if target.first() == Some(&b'/') => target,
        None => return None,
    };
    let end = path.iter().position(|&b| b == b'?').unwrap_or(path.len());
    let path = path.get(..end)?;
    Some(if path.is_empty() { b"/" } else { path })
}

/// A whole HTTP/1.1 response: status `code`, the headers, and `body` unless `head`.
pub fn response(code: u16, content_type: &str, body: &str, head: bool) -> Vec<u8> {
    let reason = match code {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        503 => "Service Unavailable",
        _ => "Error",
    };
    let mut s = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if code == 405 {
        s.push_str("Allow: GET, HEAD\r\n");
    }
    s.push_str("\r\n");
    if !head {
        s.push_str(body);
    }
    s.into_bytes()
}

/// The response to an error `req` (everything but [`Request::Metrics`]).
fn error_response(code: u16, message: &str) -> Vec<u8> {
    response(code, "text/plain; charset=utf-8", message, false)
}

/// Serves the metrics (`GET /metrics`) on `addr` from `shell`'s I/O thread, rendering
/// them on its agent thread; returns the address bound (the port chosen when `addr`'s
/// is 0). Bind errors reach the caller.
pub fn serve_on(
    shell: &crate::shell::Shell,
    addr: std::net::SocketAddr,
) -> std::io::Result<std::net::SocketAddr> {
    let ctx =
        |e: std::io::Error| std::io::Error::new(e.kind(), format!("listening on {addr}: {e}"));
    let l = std::net::TcpListener::bind(addr).map_err(ctx)?;
    l.set_nonblocking(true).map_err(ctx)?;
    let bound = l.local_addr().map_err(ctx)?;
    let input = shell.input();
    shell.spawn_io(async move {
        match TcpListener::from_std(l) {
            Ok(l) => serve(l, input).await,
            Err(e) => eprintln!("peregrine: the metrics listener could not start: {e}"),
        }
    });
    Ok(bound)
}

/// Serves `GET /metrics` on `listener` until the runtime ends, rendering on the agent
/// thread that `input` feeds (see the module comment).
pub async fn serve(listener: TcpListener, input: Sender<Input>) {
    let limit = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok(permit) = limit.clone().acquire_owned().await else {
            return;
        };
        match listener.accept().await {
            Ok((s, _)) => {
                let input = input.clone();
                tokio::spawn(async move {
                    handle(s, input).await;
                    drop(permit);
                });
            }
            // Out of descriptors, for instance: wait rather than spin.
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// Answers one connection's request and closes it.
async fn handle(mut s: TcpStream, input: Sender<Input>) {
    let bytes = match tokio::time::timeout(READ_TIMEOUT, read_request(&mut s)).await {
        Ok(None) => return,
        Ok(Some(Request::Metrics { head })) => match ask_agent(&input).await {
            Some(text) => response(200, CONTENT_TYPE, &text, head),
            None => response(
                503,
                "text/plain; charset=utf-8",
                "the switch's agent did not answer\n",
                head,
            ),
        },
        Ok(Some(Request::NotFound)) => {
            error_response(404, "not found; the metrics are at /metrics\n")
        }
        Ok(Some(Request::MethodNotAllowed)) => {
            error_response(405, "only GET and HEAD are served\n")
        }
        Ok(Some(Request::BadRequest)) => error_response(400, "not an HTTP/1.1 request\n"),
        Err(_) => error_response(408, "no complete request in time\n"),
    };
    let _ = tokio::time::timeout(WRITE_TIMEOUT, async {
        if s.write_all(&bytes).await.is_ok() && s.shutdown().await.is_ok() {
            // Read what the client still sends until it closes, so that closing with
            // unread data (a reset) does not destroy the response in flight.
            let mut sink = [0u8; 1024];
            let mut left = 64 * 1024usize;
            while let Ok(n @ 1..) = s.read(&mut sink).await {
                left = left.saturating_sub(n);
                if left == 0 {
                    break;
                }
            }
        }
    })
    .await;
}

/// Reads until [`parse_request`] decides; none if the client closed before sending
/// anything but blank lines.
async fn read_request(s: &mut TcpStream) -> Option<Request> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        let room = MAX_HEAD.saturating_sub(buf.len()).min(chunk.len());
        // A read error ends the request as the client closing would.
        let n: usize = s
            .read(chunk.get_mut(..room).unwrap_or_default())
            .await
            .unwrap_or(0);
        if n == 0 {
            let blank = buf.iter().all(|&b| b == b'\r' || b == b'\n');
            return (!blank).then_some(Request::BadRequest);
        }
        buf.extend_from_slice(chunk.get(..n).unwrap_or_default());
        if let Some(r) = parse_request(&buf) {
            return Some(r);
        }
    }
}

/// Renders the metrics on the agent thread; none if it has stopped or does not answer
/// within [`AGENT_TIMEOUT`].
async fn ask_agent(input: &Sender<Input>) -> Option<String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job: AgentJob = Box::new(move |a, now| {
        let _ = tx.send(render(a, now));
    });
    input.send(Input::Call(job)).ok()?;
    tokio::time::timeout(AGENT_TIMEOUT, rx).await.ok()?.ok()
}
