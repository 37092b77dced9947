//! The I/O shell around the sans-IO [`Agent`]: controller channels, the management
//! socket, and the thread that owns the agent.
//!
//! Threads:
//! - the **agent thread** owns the [`Agent`]. It takes [`Input`]s from one channel in
//!   order (bytes from connections, hang-ups, packet-ins, link changes, calls), runs the
//!   agent's timers when due, and after each input hands every connection's queued bytes
//!   to that connection's writer. A barrier therefore blocks only this thread while the
//!   datapath publishes;
//! - an **I/O thread** runs a single-threaded tokio runtime: listeners (`ptcp:`, the
//!   management unix socket), active connections (`tcp:`) that reconnect with backoff
//!   (1 s doubling to 8 s), and one task per connection moving bytes both ways; and,
//!   tasks started later ([`Shell::spawn_io`]: the Prometheus endpoint);
//!
//! Back-pressure ([`Gate`]): a connection's task reads its socket only while the agent
//! wants its input ([`Agent::wants_input`]: it is not held for its backlog) and while
//! less than [`INBOUND_MAX`] of what it read waits for the agent thread; it tells the
//! agent what it wrote ([`Agent::transmitted`]). A peer that sends without reading thus
//! meets TCP's flow control, and costs a bounded amount of memory. A connection the
//! agent closed gets [`CLOSE_GRACE`] to take what was queued for it, then is dropped.
//! - a **packet-in thread** moves the datapath's packet-in records onto the agent's
//!   channel.
//!
//! Targets are written as Open vSwitch writes them: `tcp:IP[:PORT]`, `ssl:IP[:PORT]`,
//! `ptcp:[PORT][:IP]`, `pssl:[PORT][:IP]`, `unix:PATH`, `punix:PATH`; the default port is
//! 6653. `ssl:`/`pssl:` use TLS with mutual authentication ([`crate::tls`]). The management socket is a
//! `punix:` listener created with mode 0600 (root only) whose connections are
//! [`SessionKind::Management`].

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use datapath::pipeline::PacketIn as DpPacketIn;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

use tokio_rustls::TlsAcceptor;

use crate::agent::{Agent, Notice, SessionId, SessionKind};
use crate::tls::Tls;

/// The default OpenFlow port.
pub const DEFAULT_PORT: u16 = 6653;
/// Longest wait between reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(8);
/// Longest a TLS handshake may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Bytes read from one connection that may wait for the agent thread before its task
/// stops reading.
pub const INBOUND_MAX: usize = 1 << 20;
/// How long a connection the agent closed has to take what was queued for it.
pub const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// What a connection's task and the agent thread share to pace its reading.
pub struct Gate {
    /// Bytes read and handed to the agent thread, not yet fed to the agent.
    unread: AtomicUsize,
    /// Whether the agent wants more of its input.
    open: AtomicBool,
    /// Wakes the task's reader when either changes.
    wake: tokio::sync::Notify,
    /// Tells the task that the agent closed the connection.
    closed: tokio::sync::Notify,
}

impl Gate {
    fn new() -> Gate {
        Gate {
            unread: AtomicUsize::new(0),
            open: AtomicBool::new(true),
            wake: tokio::sync::Notify::new(),
            closed: tokio::sync::Notify::new(),
        }
    }

    fn lets_in(&self) -> bool {
        self.open.load(Ordering::Acquire) && self.unread.load(Ordering::Acquire) < INBOUND_MAX
    }

    /// Waits until the reader may read.
    async fn wait(&self) {
        loop {
            // Made before the test: a wake-up in between leaves a permit.
            let woken = self.wake.notified();
            if self.lets_in() {
                return;
            }
            woken.await;
        }
    }
}

/// Where to connect or listen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// `tcp:IP[:PORT]`: connect to a controller.
    Tcp(SocketAddr),
    /// `ssl:IP[:PORT]`: connect to a controller over TLS.
    Ssl(SocketAddr),
    /// `unix:PATH`: connect to a controller on a unix socket.
    Unix(PathBuf),
    /// `ptcp:[PORT][:IP]`: listen for controllers.
    PTcp(SocketAddr),
    /// `pssl:[PORT][:IP]`: listen for controllers over TLS.
    PSsl(SocketAddr),
    /// `punix:PATH`: listen on a unix socket.
    PUnix(PathBuf),
}

impl Target {
    /// Parses a target in Open vSwitch's syntax.
    pub fn parse(s: &str) -> Result<Target, String> {
        let (kind, rest) = s.split_once(':').ok_or_else(|| {
            format!("{s:?}: expected tcp:IP[:PORT], ssl:IP[:PORT], ptcp:[PORT][:IP], pssl:[PORT][:IP], unix:PATH or punix:PATH")
        })?;
        match kind {
            "tcp" | "ssl" => {
                let (ip, port) = match rest.rsplit_once(':') {
                    Some((ip, p)) if !ip.contains(':') || ip.starts_with('[') => (ip, Some(p)),
                    _ => (rest, None),
                };
                let ip = parse_ip(ip).map_err(|e| format!("{s:?}: {e}"))?;
                let a = SocketAddr::new(ip, parse_port(port, s)?);
                Ok(if kind == "tcp" { Target::Tcp(a) } else { Target::Ssl(a) })
            }
            "ptcp" | "pssl" => {
                let (port, ip) = match rest.split_once(':') {
                    Some((p, ip)) => (p, Some(ip)),
                    None => (rest, None),
                };
                let port = parse_port((!port.is_empty()).then_some(port), s)?;
                let ip = match ip {
                    Some(ip) => parse_ip(ip).map_err(|e| format!("{s:?}: {e}"))?,
                    None => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
                };
                let a = SocketAddr::new(ip, port);
                Ok(if kind == "ptcp" { Target::PTcp(a) } else { Target::PSsl(a) })
            }
            "unix" | "punix" if rest.is_empty() => {
                Err(format!("{s:?}: the socket path is missing"))
            }
            "unix" => Ok(Target::Unix(PathBuf::from(rest))),
            "punix" => Ok(Target::PUnix(PathBuf::from(rest))),
            _ => Err(format!(
                "{s:?}: unknown connection type {kind:?} (tcp, ssl, ptcp, pssl, unix, punix)"
            )),
        }
    }

    fn is_passive(&self) -> bool {
        matches!(self, Target::PTcp(_) | Target::PSsl(_) | Target::PUnix(_))
    }

    /// Whether the target uses TLS (and so needs the TLS files).
    pub fn is_tls(&self) -> bool {
        matches!(self, Target::Ssl(_) | Target::PSsl(_))
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Tcp(a) => write!(f, "tcp:{a}"),
            Target::Ssl(a) => write!(f, "ssl:{a}"),
            Target::PSsl(a) => write!(f, "pssl:{}:{}", a.port(), a.ip()),
            Target::Unix(p) => write!(f, "unix:{}", p.display()),
            Target::PTcp(a) => write!(f, "ptcp:{}:{}", a.port(), a.ip()),
            Target::PUnix(p) => write!(f, "punix:{}", p.display()),
        }
    }
}

fn parse_ip(s: &str) -> Result<IpAddr, String> {
    s.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .map_err(|_| format!("{s:?} is not an IP address"))
}

fn parse_port(p: Option<&str>, whole: &str) -> Result<u16, String> {
    match p {
        None => Ok(DEFAULT_PORT),
        Some(p) => {
            p.parse().map_err(|_| format!("{whole:?}: {p:?} is not a port number (0-65535)"))
        }
    }
}

/// A closure run on the agent thread with the agent and the time.
pub type AgentJob = Box<dyn FnOnce(&mut Agent, u64) + Send>;

/// What the agent thread acts on.
pub enum Input {
    /// A connection with `peer` (who it is, for the log) opened.
    Open {
        key: u64,
        kind: SessionKind,
        peer: String,
        out: UnboundedSender<Vec<u8>>,
        gate: Arc<Gate>,
    },
    Bytes {
        key: u64,
        data: Vec<u8>,
    },
    /// A connection's task wrote `bytes` of what it was given.
    Written {
        key: u64,
        bytes: usize,
    },
    Hangup {
        key: u64,
    },
    PacketIn(Box<DpPacketIn>),
    Link {
        no: u32,
        up: bool,
    },
    /// Runs a closure on the agent (statistics, management requests).
    Call(AgentJob),
    /// A line for the log about a connection the agent does not see.
    Notice(Notice),
    Stop,
}

/// The running shell.
pub struct Shell {
    input: Sender<Input>,
    agent: Option<JoinHandle<()>>,
    io: Option<JoinHandle<()>>,
    io_stop: Option<tokio::sync::oneshot::Sender<()>>,
    /// The I/O thread's runtime, for tasks started after [`Shell::start`].
    io_rt: tokio::runtime::Handle,
    mgmt: Option<PathBuf>,
}

impl Shell {
    /// Starts the agent thread, the packet-in thread and the I/O thread serving
    /// `targets` (controllers and listeners, TLS ones with `tls`) and the management
    /// socket `mgmt`. `clock` is the time origin shared with the datapath workers.
    pub fn start(
        agent: Agent,
        targets: Vec<Target>,
        tls: Option<Tls>,
        mgmt: Option<PathBuf>,
        packet_ins: Receiver<DpPacketIn>,
        clock: Instant,
    ) -> io::Result<Shell> {
        let (input, inputs) = std::sync::mpsc::channel::<Input>();
        if tls.is_none() {
            if let Some(t) = targets.iter().find(|t| t.is_tls()) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{t} needs a private key, a certificate and a CA certificate"),
                ));
            }
        }
        // Bind listeners here, so that errors reach the caller.
        let mut listeners = Vec::new();
        for t in targets.iter().filter(|t| t.is_passive()) {
            listeners.push((bind(t)?, SessionKind::Controller, t.to_string()));
        }
        if let Some(p) = &mgmt {
            let label = format!("the management socket {}", p.display());
            listeners.push((bind_unix(p, 0o600)?, SessionKind::Management, label));
        }
        let agent = std::thread::Builder::new()
            .name("agent".into())
            .spawn(move || agent_loop(agent, inputs, clock))?;
        {
            let input = input.clone();
            std::thread::Builder::new().name("packet-in".into()).spawn(move || {
                while let Ok(pi) = packet_ins.recv() {
                    if input.send(Input::PacketIn(Box::new(pi))).is_err() {
                        break;
                    }
                }
            })?;
        }
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel();
        let io_rt = rt.handle().clone();
        let io_input = input.clone();
        let active: Vec<Target> = targets.into_iter().filter(|t| !t.is_passive()).collect();
        let io = std::thread::Builder::new().name("openflow-io".into()).spawn(move || {
            rt.block_on(async move {
                let keys = Arc::new(AtomicU64::new(1));
                for (l, kind, label) in listeners {
                    match l.into_tokio(tls.as_ref()) {
                        Ok(l) => {
                            let (input, keys) = (io_input.clone(), keys.clone());
                            tokio::spawn(accept_loop(l, kind, label, input, keys));
                        }
                        Err(e) => eprintln!("peregrine: a listener could not start: {e}"),
                    }
                }
                for t in active {
                    let client = tls.as_ref().map(|t| t.client.clone());
                    tokio::spawn(connect_loop(t, client, io_input.clone(), keys.clone()));
                }
                let _ = stop_rx.await;
            });
        })?;
        Ok(Shell { input, agent: Some(agent), io: Some(io), io_stop: Some(stop_tx), io_rt, mgmt })
    }

    /// Runs `task` on the I/O thread's runtime (a server started after
    /// [`Shell::start`], such as the metrics endpoint, `crate::metrics::serve_on`).
    pub fn spawn_io(&self, task: impl std::future::Future<Output = ()> + Send + 'static) {
        self.io_rt.spawn(task);
    }

    /// A sender of inputs to the agent thread (link changes, calls).
    pub fn input(&self) -> Sender<Input> {
        self.input.clone()
    }

    /// Runs `f` on the agent thread and returns its result (None if the agent stopped).
    pub fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Agent, u64) -> R + Send + 'static,
    ) -> Option<R> {
        let (tx, rx) = std::sync::mpsc::channel();
        let job: AgentJob = Box::new(move |a, now| {
            let _ = tx.send(f(a, now));
        });
        self.input.send(Input::Call(job)).ok()?;
        rx.recv().ok()
    }

    /// Stops every thread; connections are closed.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        if let Some(s) = self.io_stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.io.take() {
            let _ = t.join();
        }
        let _ = self.input.send(Input::Stop);
        if let Some(t) = self.agent.take() {
            let _ = t.join();
        }
        if let Some(p) = self.mgmt.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

impl Drop for Shell {
    fn drop(&mut self) {
        self.halt();
    }
}

fn now_ns(clock: Instant) -> u64 {
    clock.elapsed().as_nanos().min(u64::MAX as u128) as u64
}

/// A connection as the agent thread holds it.
struct Conn {
    id: SessionId,
    out: UnboundedSender<Vec<u8>>,
    gate: Arc<Gate>,
}

/// The agent thread: inputs in order, timers when due, bytes out after each step.
fn agent_loop(mut agent: Agent, inputs: Receiver<Input>, clock: Instant) {
    let mut conns: HashMap<u64, Conn> = HashMap::new();
    loop {
        let now = now_ns(clock);
        let wait = agent
            .next_timeout()
            .map_or(Duration::from_secs(1), |t| Duration::from_nanos(t.saturating_sub(now)));
        let input = match inputs.recv_timeout(wait.min(Duration::from_secs(1))) {
            Ok(i) => Some(i),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => return,
        };
        let now = now_ns(clock);
        match input {
            None => {}
            Some(Input::Stop) => return,
            Some(Input::Open { key, kind, peer, out, gate }) => {
                let id = agent.open(kind, &peer, now);
                conns.insert(key, Conn { id, out, gate });
            }
            Some(Input::Bytes { key, data }) => {
                if let Some(c) = conns.get(&key) {
                    c.gate.unread.fetch_sub(data.len(), Ordering::AcqRel);
                    agent.receive(c.id, &data, now);
                }
            }
            Some(Input::Written { key, bytes }) => {
                if let Some(c) = conns.get(&key) {
                    agent.transmitted(c.id, bytes, now);
                }
            }
            Some(Input::Hangup { key }) => {
                if let Some(c) = conns.remove(&key) {
                    agent.remove(c.id, now);
                }
            }
            Some(Input::PacketIn(pi)) => agent.packet_in(*pi, now),
            Some(Input::Link { no, up }) => agent.link(no, up),
            Some(Input::Call(f)) => f(&mut agent, now),
            Some(Input::Notice(n)) => agent.notice(n, now),
        }
        if agent.next_timeout().is_some_and(|t| t <= now) {
            agent.handle_timeout(now);
        }
        // Hand out what every connection has queued, open or close its reading, and
        // close the finished ones.
        let mut done = Vec::new();
        for (key, c) in &conns {
            while let Some(bytes) = agent.poll_transmit(c.id) {
                let _ = c.out.send(bytes);
            }
            let open = agent.wants_input(c.id);
            c.gate.open.store(open, Ordering::Release);
            if open {
                c.gate.wake.notify_one();
            }
            if agent.is_closed(c.id) {
                done.push(*key);
            }
        }
        for key in done {
            if let Some(c) = conns.remove(&key) {
                c.gate.closed.notify_one();
                agent.remove(c.id, now);
            }
        }
        while let Some(n) = agent.poll_notice() {
            eprintln!("peregrine: {n}");
        }
    }
}

/// A bound listening socket, made a tokio one inside the I/O thread's runtime.
enum StdListener {
    Tcp(std::net::TcpListener),
    Tls(std::net::TcpListener),
    Unix(std::os::unix::net::UnixListener),
}

enum Listener {
    Tcp(tokio::net::TcpListener),
    Tls(tokio::net::TcpListener, TlsAcceptor),
    Unix(tokio::net::UnixListener),
}

impl StdListener {
    /// Must run inside a tokio runtime.
    fn into_tokio(self, tls: Option<&Tls>) -> io::Result<Listener> {
        Ok(match self {
            StdListener::Tcp(l) => Listener::Tcp(tokio::net::TcpListener::from_std(l)?),
            StdListener::Tls(l) => {
                let tls = tls.ok_or_else(|| io::Error::other("TLS listener without TLS files"))?;
                Listener::Tls(
                    tokio::net::TcpListener::from_std(l)?,
                    TlsAcceptor::from(tls.server.clone()),
                )
            }
            StdListener::Unix(l) => Listener::Unix(tokio::net::UnixListener::from_std(l)?),
        })
    }
}

fn bind(t: &Target) -> io::Result<StdListener> {
    match t {
        Target::PTcp(a) | Target::PSsl(a) => {
            let l = std::net::TcpListener::bind(a)
                .map_err(|e| io::Error::new(e.kind(), format!("listening on {t}: {e}")))?;
            l.set_nonblocking(true)?;
            Ok(if t.is_tls() { StdListener::Tls(l) } else { StdListener::Tcp(l) })
        }
        Target::PUnix(p) => bind_unix(p, 0o600),
        _ => Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{t} is not a listener"))),
    }
}

/// Binds a unix listener at `path` with permissions `mode`, replacing a stale socket
/// (one nobody accepts on); a live one is an error.
///
/// The socket never exists at `path` with other permissions, whatever the umask: it is
/// bound inside a fresh directory beside `path` that only the owner may enter (mode
/// 0700), given `mode` there, and then renamed to `path`, which is atomic. A parent
/// directory that has to be made gets mode 0755, so that nobody else can put a file in
/// it.
fn bind_unix(path: &Path, mode: u32) -> io::Result<StdListener> {
    let ctx =
        |e: io::Error| io::Error::new(e.kind(), format!("listening on {}: {e}", path.display()));
    if path.exists() {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(ctx(io::Error::new(
                io::ErrorKind::AddrInUse,
                "another process serves this socket",
            )));
        }
        std::fs::remove_file(path).map_err(ctx)?;
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::DirBuilder::new().recursive(true).mode(0o755).create(dir).map_err(ctx)?;
    let private = dir.join(format!(".bind-{}", std::process::id()));
    // Left over by a process of this number that died mid-bind: nothing else is in it.
    let _ = std::fs::remove_file(private.join("s"));
    let _ = std::fs::remove_dir(&private);
    std::fs::DirBuilder::new().mode(0o700).create(&private).map_err(ctx)?;
    let inside = private.join("s");
    let bound = std::os::unix::net::UnixListener::bind(&inside).and_then(|l| {
        std::fs::set_permissions(&inside, std::fs::Permissions::from_mode(mode))?;
        std::fs::rename(&inside, path)?;
        Ok(l)
    });
    let _ = std::fs::remove_file(&inside);
    let _ = std::fs::remove_dir(&private);
    let l = bound.map_err(ctx)?;
    l.set_nonblocking(true).map_err(ctx)?;
    Ok(StdListener::Unix(l))
}

/// A connection's byte stream, whatever carries it.
trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}

impl<T: AsyncRead + AsyncWrite + Unpin + Send> Stream for T {}

fn tcp_stream(s: tokio::net::TcpStream) -> Box<dyn Stream> {
    let _ = s.set_nodelay(true);
    Box::new(s)
}

/// Accepts connections for ever; each is served by a task of its own (after its TLS
/// handshake, for a TLS listener: one that fails or takes too long closes, and the log
/// says why). A unix socket's peers are named by `label`.
async fn accept_loop(
    l: Listener,
    kind: SessionKind,
    label: String,
    input: Sender<Input>,
    keys: Arc<AtomicU64>,
) {
    loop {
        let conn = match &l {
            Listener::Tcp(t) => {
                t.accept().await.map(|(s, a)| (tcp_stream(s), None, format!("tcp:{a}")))
            }
            Listener::Tls(t, acc) => t
                .accept()
                .await
                .map(|(s, a)| (tcp_stream(s), Some(acc.clone()), format!("ssl:{a}"))),
            Listener::Unix(u) => {
                u.accept().await.map(|(s, _)| (Box::new(s) as Box<dyn Stream>, None, label.clone()))
            }
        };
        let Ok((s, tls, peer)) = conn else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let (input, keys) = (input.clone(), keys.clone());
        tokio::spawn(async move {
            let s = match tls {
                None => s,
                Some(a) => match tokio::time::timeout(HANDSHAKE_TIMEOUT, a.accept(s)).await {
                    Ok(Ok(s)) => Box::new(s),
                    Ok(Err(e)) => {
                        let why = format!("TLS handshake failed: {e}");
                        let _ = input.send(Input::Notice(Notice::Refused { peer, why }));
                        return;
                    }
                    Err(_) => {
                        let why =
                            format!("no TLS handshake within {} s", HANDSHAKE_TIMEOUT.as_secs());
                        let _ = input.send(Input::Notice(Notice::Refused { peer, why }));
                        return;
                    }
                },
            };
            serve(s, kind, peer, input, &keys).await;
        });
    }
}

/// Connects to an active target (`tcp:`, `ssl:` with `tls`, `unix:`), or says why not.
async fn dial(
    t: &Target,
    tls: Option<&Arc<rustls::ClientConfig>>,
) -> Result<Box<dyn Stream>, String> {
    let text = |e: io::Error| e.to_string();
    match t {
        Target::Tcp(a) => Ok(tcp_stream(tokio::net::TcpStream::connect(a).await.map_err(text)?)),
        Target::Ssl(a) => {
            let s = tcp_stream(tokio::net::TcpStream::connect(a).await.map_err(text)?);
            let name = rustls_pki_types::ServerName::IpAddress(a.ip().into());
            let tls = tls.ok_or("no TLS configuration")?;
            let hs = tokio_rustls::TlsConnector::from(tls.clone()).connect(name, s);
            match tokio::time::timeout(HANDSHAKE_TIMEOUT, hs).await {
                Ok(Ok(s)) => Ok(Box::new(s)),
                Ok(Err(e)) => Err(format!("TLS handshake failed: {e}")),
                Err(_) => Err(format!("no TLS handshake within {} s", HANDSHAKE_TIMEOUT.as_secs())),
            }
        }
        Target::Unix(p) => Ok(Box::new(tokio::net::UnixStream::connect(p).await.map_err(text)?)),
        Target::PTcp(_) | Target::PSsl(_) | Target::PUnix(_) => Err("a listener".into()),
    }
}

/// Keeps a connection to an active target: serves it while it lasts, then reconnects,
/// waiting 1 s after a connection that was up and doubling up to [`MAX_BACKOFF`] while
/// attempts fail.
async fn connect_loop(
    t: Target,
    tls: Option<Arc<rustls::ClientConfig>>,
    input: Sender<Input>,
    keys: Arc<AtomicU64>,
) {
    let mut backoff = Duration::from_secs(1);
    // The log hears of the first failed attempt of each outage only.
    let mut told = false;
    loop {
        match dial(&t, tls.as_ref()).await {
            Ok(s) => {
                serve(s, SessionKind::Controller, t.to_string(), input.clone(), &keys).await;
                told = false;
                backoff = Duration::from_secs(1);
                tokio::time::sleep(backoff).await;
            }
            Err(why) => {
                if !told {
                    let _ =
                        input.send(Input::Notice(Notice::Unreachable { peer: t.to_string(), why }));
                    told = true;
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

/// Moves bytes between one socket and the agent until either side ends, reading only
/// while its [`Gate`] lets it and reporting what it wrote.
async fn serve(
    s: Box<dyn Stream>,
    kind: SessionKind,
    peer: String,
    input: Sender<Input>,
    keys: &AtomicU64,
) {
    let key = keys.fetch_add(1, Ordering::Relaxed);
    let (out_tx, mut out_rx) = unbounded_channel::<Vec<u8>>();
    let gate = Arc::new(Gate::new());
    if input.send(Input::Open { key, kind, peer, out: out_tx, gate: gate.clone() }).is_err() {
        return;
    }
    let (mut rd, mut wr) = tokio::io::split(s);
    let reader = async {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            gate.wait().await;
            match rd.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let data = buf.get(..n).unwrap_or_default().to_vec();
                    gate.unread.fetch_add(n, Ordering::AcqRel);
                    if input.send(Input::Bytes { key, data }).is_err() {
                        break;
                    }
                }
            }
        }
    };
    let writer = async {
        while let Some(bytes) = out_rx.recv().await {
            let mut written = bytes.len();
            if wr.write_all(&bytes).await.is_err() {
                return;
            }
            // What else is queued goes out before the agent hears of it.
            while let Ok(more) = out_rx.try_recv() {
                written += more.len();
                if wr.write_all(&more).await.is_err() {
                    return;
                }
            }
            if input.send(Input::Written { key, bytes: written }).is_err() {
                return;
            }
        }
        let _ = wr.shutdown().await;
    };
    let closed = async {
        gate.closed.notified().await;
        tokio::time::sleep(CLOSE_GRACE).await;
    };
    tokio::select! {
        _ = reader => {}
        _ = writer => {}
        _ = closed => {}
    }
    let _ = input.send(Input::Hangup { key });
    // This thread freed what the agent sent this connection: what the allocator keeps
    // of it cached here goes back (a connection that installed a million flows leaves
    // some of their pages pinned otherwise).
    datapath::reap::trim_this_thread();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory under the system's temporary one, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let p = std::env::temp_dir().join(format!("pg-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir(&p).unwrap();
            Scratch(p)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn a_unix_socket_appears_with_its_final_mode_and_leaves_nothing_beside_it() {
        use std::os::unix::fs::FileTypeExt;
        let dir = Scratch::new("bind");
        let path = dir.0.join("made/by/bind/s.mgmt");
        let l = bind_unix(&path, 0o600).unwrap();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        assert!(meta.file_type().is_socket());
        assert_eq!(meta.permissions().mode() & 0o7777, 0o600);
        let made = std::fs::metadata(path.parent().unwrap()).unwrap();
        assert_eq!(made.permissions().mode() & 0o022, 0, "nobody else may write the directory");
        let names: Vec<String> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["s.mgmt"], "the private directory is gone");
        // It is the listener's socket: a client reaches it at the final path.
        assert!(std::os::unix::net::UnixStream::connect(&path).is_ok());
        // A live socket is not taken over; a stale one is replaced.
        let e = bind_unix(&path, 0o600).err().expect("refused");
        assert_eq!(e.kind(), io::ErrorKind::AddrInUse);
        drop(l);
        bind_unix(&path, 0o640).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o640);
    }

    #[test]
    fn targets_parse_as_open_vswitch_writes_them() {
        let a = |s: &str| s.parse::<SocketAddr>().unwrap();
        for (text, want) in [
            ("tcp:192.0.2.1", Target::Tcp(a("192.0.2.1:6653"))),
            ("tcp:192.0.2.1:6633", Target::Tcp(a("192.0.2.1:6633"))),
            ("ssl:[2001:db8::1]:7", Target::Ssl(a("[2001:db8::1]:7"))),
            ("tcp:2001:db8::1", Target::Tcp(a("[2001:db8::1]:6653"))),
            ("ptcp:", Target::PTcp(a("0.0.0.0:6653"))),
            ("ptcp:6633:127.0.0.1", Target::PTcp(a("127.0.0.1:6633"))),
            ("pssl:6634", Target::PSsl(a("0.0.0.0:6634"))),
            ("punix:/run/x.sock", Target::PUnix("/run/x.sock".into())),
        ] {
            assert_eq!(Target::parse(text), Ok(want), "{text}");
        }
        for (text, error) in [
            ("tcp:", "not an IP address"),
            ("tcp:1.2.3.4:99999", "not a port number"),
            ("udp:1.2.3.4", "unknown connection type"),
            ("punix:", "path is missing"),
            ("6653", "expected tcp:"),
        ] {
            let e = Target::parse(text).unwrap_err();
            assert!(e.contains(error), "{text}: {e}");
        }
        for t in ["tcp:192.0.2.1:6633", "pssl:6634:10.0.0.1", "punix:/a/b"] {
            let p = Target::parse(t).unwrap();
            assert_eq!(Target::parse(&p.to_string()), Ok(p), "{t}");
        }
    }
}
