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
//!   (1 s doubling to 8 s), and one task per connection moving bytes both ways;
//! - a **packet-in thread** moves the datapath's packet-in records onto the agent's
//!   channel.
//!
//! Targets are written as Open vSwitch writes them: `tcp:IP[:PORT]`, `ptcp:[PORT][:IP]`,
//! `unix:PATH`, `punix:PATH`; the default port is 6653. The management socket is a
//! `punix:` listener created with mode 0600 (root only) whose connections are
//! [`SessionKind::Management`].

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use datapath::pipeline::PacketIn as DpPacketIn;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

use crate::agent::{Agent, SessionId, SessionKind};

/// The default OpenFlow port.
pub const DEFAULT_PORT: u16 = 6653;
/// Longest wait between reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(8);

/// Where to connect or listen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// `tcp:IP[:PORT]`: connect to a controller.
    Tcp(SocketAddr),
    /// `unix:PATH`: connect to a controller on a unix socket.
    Unix(PathBuf),
    /// `ptcp:[PORT][:IP]`: listen for controllers.
    PTcp(SocketAddr),
    /// `punix:PATH`: listen on a unix socket.
    PUnix(PathBuf),
}

impl Target {
    /// Parses a target in Open vSwitch's syntax.
    pub fn parse(s: &str) -> Result<Target, String> {
        let (kind, rest) = s.split_once(':').ok_or_else(|| {
            format!("{s:?}: expected tcp:IP[:PORT], ptcp:[PORT][:IP], unix:PATH or punix:PATH")
        })?;
        match kind {
            "tcp" => {
                let (ip, port) = match rest.rsplit_once(':') {
                    Some((ip, p)) if !ip.contains(':') || ip.starts_with('[') => (ip, Some(p)),
                    _ => (rest, None),
                };
                let ip = parse_ip(ip).map_err(|e| format!("{s:?}: {e}"))?;
                let port = parse_port(port, s)?;
                Ok(Target::Tcp(SocketAddr::new(ip, port)))
            }
            "ptcp" => {
                let (port, ip) = match rest.split_once(':') {
                    Some((p, ip)) => (p, Some(ip)),
                    None => (rest, None),
                };
                let port = parse_port((!port.is_empty()).then_some(port), s)?;
                let ip = match ip {
                    Some(ip) => parse_ip(ip).map_err(|e| format!("{s:?}: {e}"))?,
                    None => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
                };
                Ok(Target::PTcp(SocketAddr::new(ip, port)))
            }
            "unix" | "punix" if rest.is_empty() => Err(format!("{s:?}: the socket path is missing")),
            "unix" => Ok(Target::Unix(PathBuf::from(rest))),
            "punix" => Ok(Target::PUnix(PathBuf::from(rest))),
            "ssl" | "pssl" => Err(format!(
                "{s:?}: SSL channels are not supported by this build; use tcp:/ptcp: (for example over a VPN or ssh tunnel)"
            )),
            _ => Err(format!(
                "{s:?}: unknown connection type {kind:?} (tcp, ptcp, unix, punix)"
            )),
        }
    }

    fn is_passive(&self) -> bool {
        matches!(self, Target::PTcp(_) | Target::PUnix(_))
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Tcp(a) => write!(f, "tcp:{a}"),
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
        Some(p) => p
            .parse()
            .map_err(|_| format!("{whole:?}: {p:?} is not a port number (0-65535)")),
    }
}

/// A closure run on the agent thread with the agent and the time.
pub type AgentJob = Box<dyn FnOnce(&mut Agent, u64) + Send>;

/// What the agent thread acts on.
pub enum Input {
    Open {
        key: u64,
        kind: SessionKind,
        out: UnboundedSender<Vec<u8>>,
    },
    Bytes {
        key: u64,
        data: Vec<u8>,
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
    Stop,
}

/// The running shell.
pub struct Shell {
    input: Sender<Input>,
    agent: Option<JoinHandle<()>>,
    io: Option<JoinHandle<()>>,
    io_stop: Option<tokio::sync::oneshot::Sender<()>>,
    mgmt: Option<PathBuf>,
}

impl Shell {
    /// Starts the agent thread, the packet-in thread and the I/O thread serving
    /// `targets` (controllers and listeners) and the management socket `mgmt`.
    /// `clock` is the time origin shared with the datapath workers.
    pub fn start(
        agent: Agent,
        targets: Vec<Target>,
        mgmt: Option<PathBuf>,
        packet_ins: Receiver<DpPacketIn>,
        clock: Instant,
    ) -> io::Result<Shell> {
        let (input, inputs) = std::sync::mpsc::channel::<Input>();
        // Bind listeners here, so that errors reach the caller.
        let mut listeners = Vec::new();
        for t in targets.iter().filter(|t| t.is_passive()) {
            listeners.push((bind(t)?, SessionKind::Controller));
        }
        if let Some(p) = &mgmt {
            listeners.push((bind_unix(p, 0o600)?, SessionKind::Management));
        }
        let agent = std::thread::Builder::new()
            .name("agent".into())
            .spawn(move || agent_loop(agent, inputs, clock))?;
        {
            let input = input.clone();
            std::thread::Builder::new()
                .name("packet-in".into())
                .spawn(move || {
                    while let Ok(pi) = packet_ins.recv() {
                        if input.send(Input::PacketIn(Box::new(pi))).is_err() {
                            break;
                        }
                    }
                })?;
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel();
        let io_input = input.clone();
        let active: Vec<Target> = targets.into_iter().filter(|t| !t.is_passive()).collect();
        let io = std::thread::Builder::new()
            .name("openflow-io".into())
            .spawn(move || {
                rt.block_on(async move {
                    let keys = Arc::new(AtomicU64::new(1));
                    for (l, kind) in listeners {
                        match l.into_tokio() {
                            Ok(l) => {
                                tokio::spawn(accept_loop(l, kind, io_input.clone(), keys.clone()));
                            }
                            Err(e) => eprintln!("peregrine: a listener could not start: {e}"),
                        }
                    }
                    for t in active {
                        tokio::spawn(connect_loop(t, io_input.clone(), keys.clone()));
                    }
                    let _ = stop_rx.await;
                });
            })?;
        Ok(Shell {
            input,
            agent: Some(agent),
            io: Some(io),
            io_stop: Some(stop_tx),
            mgmt,
        })
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

/// The agent thread: inputs in order, timers when due, bytes out after each step.
fn agent_loop(mut agent: Agent, inputs: Receiver<Input>, clock: Instant) {
    let mut conns: HashMap<u64, (SessionId, UnboundedSender<Vec<u8>>)> = HashMap::new();
    loop {
        let now = now_ns(clock);
        let wait = agent.next_timeout().map_or(Duration::from_secs(1), |t| {
            Duration::from_nanos(t.saturating_sub(now))
        });
        let input = match inputs.recv_timeout(wait.min(Duration::from_secs(1))) {
            Ok(i) => Some(i),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => return,
        };
        let now = now_ns(clock);
        match input {
            None => {}
            Some(Input::Stop) => return,
            Some(Input::Open { key, kind, out }) => {
                let id = agent.open(kind, now);
                conns.insert(key, (id, out));
            }
            Some(Input::Bytes { key, data }) => {
                if let Some((id, _)) = conns.get(&key) {
                    agent.receive(*id, &data, now);
                }
            }
            Some(Input::Hangup { key }) => {
                if let Some((id, _)) = conns.remove(&key) {
                    agent.remove(id);
                }
            }
            Some(Input::PacketIn(pi)) => agent.packet_in(*pi, now),
            Some(Input::Link { no, up }) => agent.link(no, up),
            Some(Input::Call(f)) => f(&mut agent, now),
        }
        if agent.next_timeout().is_some_and(|t| t <= now) {
            agent.handle_timeout(now);
        }
        // Hand out what every connection has queued; close the finished ones.
        let mut done = Vec::new();
        for (key, (id, out)) in &conns {
            while let Some(bytes) = agent.poll_transmit(*id) {
                let _ = out.send(bytes);
            }
            if agent.is_closed(*id) {
                done.push(*key);
            }
        }
        for key in done {
            if let Some((id, _out)) = conns.remove(&key) {
                agent.remove(id);
            }
        }
    }
}

/// A bound listening socket, made a tokio one inside the I/O thread's runtime.
enum StdListener {
    Tcp(std::net::TcpListener),
    Unix(std::os::unix::net::UnixListener),
}

enum Listener {
    Tcp(tokio::net::TcpListener),
    Unix(tokio::net::UnixListener),
}

impl StdListener {
    /// Must run inside a tokio runtime.
    fn into_tokio(self) -> io::Result<Listener> {
        Ok(match self {
            StdListener::Tcp(l) => Listener::Tcp(tokio::net::TcpListener::from_std(l)?),
            StdListener::Unix(l) => Listener::Unix(tokio::net::UnixListener::from_std(l)?),
        })
    }
}

fn bind(t: &Target) -> io::Result<StdListener> {
    match t {
        Target::PTcp(a) => {
            let l = std::net::TcpListener::bind(a)
                .map_err(|e| io::Error::new(e.kind(), format!("listening on {t}: {e}")))?;
            l.set_nonblocking(true)?;
            Ok(StdListener::Tcp(l))
        }
        Target::PUnix(p) => bind_unix(p, 0o600),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{t} is not a listener"),
        )),
    }
}

/// Binds a unix listener at `path` with permissions `mode`, replacing a stale socket
/// (one nobody accepts on); a live one is an error.
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
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(ctx)?;
    }
    let l = std::os::unix::net::UnixListener::bind(path).map_err(ctx)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(ctx)?;
    l.set_nonblocking(true).map_err(ctx)?;
    Ok(StdListener::Unix(l))
}

async fn accept_loop(l: Listener, kind: SessionKind, input: Sender<Input>, keys: Arc<AtomicU64>) {
    loop {
        match &l {
            Listener::Tcp(t) => match t.accept().await {
                Ok((s, _)) => {
                    let _ = s.set_nodelay(true);
                    tokio::spawn(serve(
                        s,
                        kind,
                        input.clone(),
                        keys.fetch_add(1, Ordering::Relaxed),
                    ));
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            },
            Listener::Unix(u) => match u.accept().await {
                Ok((s, _)) => {
                    tokio::spawn(serve(
                        s,
                        kind,
                        input.clone(),
                        keys.fetch_add(1, Ordering::Relaxed),
                    ));
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            },
        }
    }
}

async fn connect_loop(t: Target, input: Sender<Input>, keys: Arc<AtomicU64>) {
    let mut backoff = Duration::from_secs(1);
    loop {
        let served = match &t {
            Target::Tcp(a) => match tokio::net::TcpStream::connect(a).await {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    serve(
                        s,
                        SessionKind::Controller,
                        input.clone(),
                        keys.fetch_add(1, Ordering::Relaxed),
                    )
                    .await;
                    true
                }
                Err(_) => false,
            },
            Target::Unix(p) => match tokio::net::UnixStream::connect(p).await {
                Ok(s) => {
                    serve(
                        s,
                        SessionKind::Controller,
                        input.clone(),
                        keys.fetch_add(1, Ordering::Relaxed),
                    )
                    .await;
                    true
                }
                Err(_) => false,
            },
            _ => return,
        };
        if served {
            backoff = Duration::from_secs(1);
        }
        tokio::time::sleep(backoff).await;
        if !served {
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }
}

/// Moves bytes between one socket and the agent until either side ends.
async fn serve<S: AsyncRead + AsyncWrite + Unpin>(
    s: S,
    kind: SessionKind,
    input: Sender<Input>,
    key: u64,
) {
    let (out_tx, mut out_rx) = unbounded_channel::<Vec<u8>>();
    if input
        .send(Input::Open {
            key,
            kind,
            out: out_tx,
        })
        .is_err()
    {
        return;
    }
    let (mut rd, mut wr) = tokio::io::split(s);
    let reader = async {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match rd.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let data = buf.get(..n).unwrap_or_default().to_vec();
                    if input.send(Input::Bytes { key, data }).is_err() {
                        break;
                    }
                }
            }
        }
    };
    let writer = async {
        while let Some(bytes) = out_rx.recv().await {
            if wr.write_all(&bytes).await.is_err() {
                break;
            }
        }
        let _ = wr.shutdown().await;
    };
    tokio::select! {
        _ = reader => {}
        _ = writer => {}
    }
    let _ = input.send(Input::Hangup { key });
}
