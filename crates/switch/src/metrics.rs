//! The switch's statistics for Prometheus: [`render`] writes them in the Prometheus text
//! exposition format (version 0.0.4), and [`serve`] answers `GET /metrics` with them
//! over HTTP/1.1 (the `hyper` crate's server on the I/O thread's tokio runtime).
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
//! [`serve`] answers `GET` or `HEAD /metrics` (a query is ignored; absolute-form
//! targets are accepted) with 200 and `Content-Type: text/plain; version=0.0.4;
//! charset=utf-8` (for `HEAD` without the body); another path with 404; another method
//! on `/metrics` with 405 and `Allow: GET, HEAD`. A request that is not HTTP/1.0 or 1.1
//! is answered 400 by hyper, one whose head is over [`MAX_HEAD`] bytes 431, and the
//! connection is closed. The rendering runs on the agent thread (an [`Input::Call`]);
//! if the agent does not answer within [`AGENT_TIMEOUT`] the answer is 503.
//!
//! Connections stay open between requests as HTTP/1.1 has it (`Connection: close` and
//! HTTP/1.0 close after the response). A connection is closed when no complete request
//! head arrives within [`READ_TIMEOUT`] of the server waiting for one (so also after
//! that long idle), and when a response makes no progress being written for
//! [`WRITE_TIMEOUT`] (a client that does not read). Every connection is a task of its
//! own; at most [`MAX_CONNECTIONS`] are served at once, more wait in the listen backlog.

#[cfg(test)]
mod tests;

use std::convert::Infallible;
use std::fmt::Write as _;
use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use datapath::counters::Misc;
use datapath::parse::ParseError;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use openflow::action::{port as ofport, OFPG_ALL};
use openflow::v13::meter_mod::{MeterBand, OFPM_ALL};
use openflow::v13::port::port_state;
use openflow::v13::role::ControllerRole;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

pub use crate::agent::stats::DROP_REASONS;
use crate::agent::{Agent, SessionKind};
use crate::shell::{AgentJob, Input};

/// Most bytes of a request head (request line and header fields).
pub const MAX_HEAD: usize = 8192;
/// How long a connection waits for a complete request head.
pub const READ_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the agent thread has to render the metrics.
pub const AGENT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a response's writing may make no progress before the connection is closed.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(5);
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
            (labels(&[("worker", &w.index.to_string()), ("thread", thread)]), w.get(m))
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
        DROP_REASONS.iter().map(|(m, r)| (labels(&[("reason", r)]), dp.read_misc(*m))),
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
            let n = parse.iter().filter(|(e, _)| e == k).map(|(_, n)| n).sum::<u64>();
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
    for (kind, kname) in
        [(SessionKind::Controller, "controller"), (SessionKind::Management, "management")]
    {
        for role in ["equal", "master", "slave"] {
            let n =
                sessions.iter().filter(|(_, k, _, r)| *k == kind && role_name(*r) == role).count()
                    as u64;
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
    let stats = agent.ports().stats(dp, ofport::ANY, now).unwrap_or_default();
    let rows: Vec<_> = agent
        .ports()
        .desc()
        .into_iter()
        .map(|d| {
            let s = stats.iter().find(|s| s.port_no == d.port_no).cloned().unwrap_or_default();
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
        t.family(name, Kind::Counter, help, rows.iter().map(|(l, s, _)| (l.clone(), pick(s))));
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
        rows.iter().map(|(l, s)| (l.clone(), u64::from(s.active_count))),
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

/// Two counter families of `rows` (labels, packets, bytes): the packets under the first
/// (name, help), the bytes under the second.
fn packets_and_bytes(
    t: &mut Text,
    families: [(&str, &str); 2],
    rows: impl Iterator<Item = (String, u64, u64)>,
) {
    let rows: Vec<(String, u64, u64)> = rows.collect();
    let [(packets, packets_help), (bytes, bytes_help)] = families;
    t.family(packets, Kind::Counter, packets_help, rows.iter().map(|(l, p, _)| (l.clone(), *p)));
    t.family(bytes, Kind::Counter, bytes_help, rows.iter().map(|(l, _, b)| (l.clone(), *b)));
}

fn groups(t: &mut Text, agent: &Agent, now: u64) {
    let stats = agent.groups().stats(agent.flows().datapath(), OFPG_ALL, now, |_| 0);
    let totals = stats.iter().map(|g| {
        let l = labels(&[("group", &g.group_id.to_string())]);
        (l, g.packet_count, g.byte_count)
    });
    packets_and_bytes(
        t,
        [
            ("peregrine_group_packets_total", "Packets the group processed."),
            ("peregrine_group_bytes_total", "Bytes the group processed."),
        ],
        totals,
    );
    let buckets = stats.iter().flat_map(|g| {
        g.bucket_stats.iter().enumerate().map(|(i, b)| {
            let l = labels(&[("group", &g.group_id.to_string()), ("bucket", &i.to_string())]);
            (l, b.packet_count, b.byte_count)
        })
    });
    packets_and_bytes(
        t,
        [
            ("peregrine_group_bucket_packets_total", "Packets the group bucket processed."),
            ("peregrine_group_bucket_bytes_total", "Bytes the group bucket processed."),
        ],
        buckets,
    );
}

fn meters(t: &mut Text, agent: &Agent, now: u64) {
    let dp = agent.flows().datapath();
    let stats = agent.meters().stats(dp, OFPM_ALL, now, |_| 0);
    let configs = agent.meters().config(OFPM_ALL);
    let totals = stats.iter().map(|m| {
        let l = labels(&[("meter", &m.meter_id.to_string())]);
        (l, m.packet_in_count, m.byte_in_count)
    });
    packets_and_bytes(
        t,
        [
            ("peregrine_meter_packets_total", "Packets that reached the meter."),
            ("peregrine_meter_bytes_total", "Bytes that reached the meter."),
        ],
        totals,
    );
    let bands = stats.iter().flat_map(|m| {
        let config = configs.iter().find(|c| c.meter_id == m.meter_id);
        m.band_stats.iter().enumerate().map(move |(i, b)| {
            let kind = config.and_then(|c| c.bands.get(i)).map_or("drop", band_type);
            let l = labels(&[
                ("meter", &m.meter_id.to_string()),
                ("band", &i.to_string()),
                ("type", kind),
            ]);
            (l, b.packet_band_count, b.byte_band_count)
        })
    });
    packets_and_bytes(
        t,
        [
            (
                "peregrine_meter_band_packets_total",
                "Packets the meter band applied to (dropped by a drop band, remarked by a dscp_remark band).",
            ),
            (
                "peregrine_meter_band_bytes_total",
                "Bytes the meter band applied to.",
            ),
        ],
        bands,
    );
}

/// The answer to one request (see the module comment).
async fn answer(req: &Request<Incoming>, input: &Sender<Input>) -> Response<String> {
    if req.uri().path() != "/metrics" {
        return plain(StatusCode::NOT_FOUND, "not found; the metrics are at /metrics\n");
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD are served\n");
        r.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    match ask_agent(input).await {
        Some(text) => {
            let mut r = Response::new(text);
            r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE));
            r
        }
        None => plain(StatusCode::SERVICE_UNAVAILABLE, "the switch's agent did not answer\n"),
    }
}

/// A plain-text response with `status`.
fn plain(status: StatusCode, body: &str) -> Response<String> {
    let mut r = Response::new(body.to_string());
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    r
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
/// thread that `input` feeds (see the module comment). Must run on a tokio runtime with
/// its timer enabled.
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
                    connection(s, input).await;
                    drop(permit);
                });
            }
            // Out of descriptors, for instance: wait rather than spin.
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// Serves one connection's requests until the client closes it, it idles or stalls
/// past a timeout, or it sends something that is not HTTP/1.
async fn connection(stream: TcpStream, input: Sender<Input>) {
    let service = service_fn(move |req| {
        let input = input.clone();
        async move { Ok::<_, Infallible>(answer(&req, &input).await) }
    });
    // Errors (a client gone, a timeout, a malformed request, answered 400 by hyper)
    // end this connection only.
    let _ = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(READ_TIMEOUT)
        .max_header_size(MAX_HEAD)
        // `Content-Type`, not `content-type`: as this endpoint always wrote them.
        .title_case_headers(true)
        // A client may shut down its sending side after its request and still get
        // the response.
        .half_close(true)
        .serve_connection(TokioIo::new(WriteDeadline::new(stream)), service)
        .await;
}

/// A TCP stream whose writing fails once it has made no progress for
/// [`WRITE_TIMEOUT`]: a client that stops reading cannot keep its connection (and
/// its place among [`MAX_CONNECTIONS`]).
struct WriteDeadline {
    stream: TcpStream,
    /// Started when a write could not proceed; cleared when one does.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl WriteDeadline {
    fn new(stream: TcpStream) -> WriteDeadline {
        WriteDeadline { stream, stalled: None }
    }

    /// Runs one write-side poll of the stream under the deadline.
    fn poll_write_side<T>(
        &mut self,
        cx: &mut Context<'_>,
        op: impl FnOnce(Pin<&mut TcpStream>, &mut Context<'_>) -> Poll<std::io::Result<T>>,
    ) -> Poll<std::io::Result<T>> {
        match op(Pin::new(&mut self.stream), cx) {
            Poll::Pending => {
                let stalled =
                    self.stalled.get_or_insert_with(|| Box::pin(tokio::time::sleep(WRITE_TIMEOUT)));
                match stalled.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Err(std::io::ErrorKind::TimedOut.into())),
                    Poll::Pending => Poll::Pending,
                }
            }
            done => {
                self.stalled = None;
                done
            }
        }
    }
}

impl AsyncRead for WriteDeadline {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for WriteDeadline {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.poll_write_side(cx, |s, cx| s.poll_write(cx, buf))
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        self.poll_write_side(cx, |s, cx| s.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.poll_write_side(cx, |s, cx| s.poll_flush(cx))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.poll_write_side(cx, |s, cx| s.poll_shutdown(cx))
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
