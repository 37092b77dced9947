//! What the end-to-end tests of `peregrine run` share: the switch as a child process,
//! namespace hosts on its ports, ping, and the lines a child process prints.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use bench::topo::{Host, Topology};

pub mod fastpath;
pub mod osken;

/// The switch process; killed (SIGKILL, by PID) on drop if still running.
pub struct SwitchProc {
    child: Option<Child>,
    stderr: mpsc::Receiver<String>,
}

impl SwitchProc {
    /// Starts `peregrine run` with `args` and waits until it says it is switching.
    /// Without `--mgmt` in `args` the switch gets no management socket (tests run in
    /// parallel and would share the default one), and without `--state-dir` no state
    /// directory.
    pub fn start(args: &[&str]) -> SwitchProc {
        Self::start_banner(args).0
    }

    /// [`SwitchProc::start`], also returning the line that says the switch is switching
    /// (its ports, workers, fail mode and fast path).
    pub fn start_banner(args: &[&str]) -> (SwitchProc, String) {
        let (p, mut lines) = Self::start_lines(args);
        let banner = lines.pop().unwrap_or_default();
        (p, banner)
    }

    /// [`SwitchProc::start`], also returning what the switch said on stderr up to and
    /// including the line that says it is switching.
    pub fn start_lines(args: &[&str]) -> (SwitchProc, Vec<String>) {
        Self::start_lines_in(None, args)
    }

    /// [`SwitchProc::start`] inside network namespace `ns` (`ip netns exec` replaces
    /// itself with the switch, so the PID is the switch's).
    pub fn start_in(ns: &str, args: &[&str]) -> SwitchProc {
        Self::start_lines_in(Some(ns), args).0
    }

    fn start_lines_in(ns: Option<&str>, args: &[&str]) -> (SwitchProc, Vec<String>) {
        let mgmt: &[&str] = if args.contains(&"--mgmt") { &[] } else { &["--mgmt", "none"] };
        // Nor state (it would be shared, and restored by the next test).
        let state: &[&str] =
            if args.contains(&"--state-dir") { &[] } else { &["--state-dir", "none"] };
        let mut cmd = match ns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, env!("CARGO_BIN_EXE_peregrine")]);
                c
            }
            None => Command::new(env!("CARGO_BIN_EXE_peregrine")),
        };
        let mut child = cmd
            .arg("run")
            .args(args)
            .args(mgmt)
            .args(state)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start peregrine");
        let stderr = read_lines(child.stderr.take().unwrap());
        let mut p = SwitchProc { child: Some(child), stderr };
        let lines = p.wait_lines("switching between", Duration::from_secs(10));
        (p, lines)
    }

    /// Waits for a stderr line containing `what`.
    pub fn wait_line(&mut self, what: &str, limit: Duration) -> String {
        self.wait_lines(what, limit).pop().unwrap_or_default()
    }

    /// Waits for a stderr line containing `what`: the lines read, that one last.
    pub fn wait_lines(&mut self, what: &str, limit: Duration) -> Vec<String> {
        wait_for_line(&self.stderr, what, limit).unwrap_or_else(|seen| {
            panic!("no line with {what:?} from the switch; it said: {seen:?}")
        })
    }

    pub fn pid(&self) -> i32 {
        self.child.as_ref().unwrap().id() as i32
    }

    /// CPU seconds (user + system) the process has used.
    pub fn cpu_seconds(&self) -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap();
        // Fields after the parenthesised command name; utime and stime are 14 and 15.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
        ticks / 100.0
    }

    pub fn alive(&mut self) -> bool {
        matches!(self.child.as_mut().unwrap().try_wait(), Ok(None))
    }

    /// Sends SIGTERM, waits for the exit and returns its stdout (the stats table).
    pub fn stop(mut self) -> String {
        let mut child = self.child.take().unwrap();
        let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
        let t = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if t.elapsed() > Duration::from_secs(10) {
                let _ = child.kill();
                panic!("the switch did not stop on SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut out = String::new();
        child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
        assert!(status.success(), "exit {status:?}; stdout {out}");
        out
    }
}

impl Drop for SwitchProc {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Starts `cmd` with no input and its errors discarded; `what` names it in the panic if
/// it cannot start. Returns it with the lines of its standard output ([`read_lines`]).
pub fn spawn_with_lines(cmd: &mut Command, what: &str) -> (Child, mpsc::Receiver<String>) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("start {what}: {e}"));
    let lines = read_lines(child.stdout.take().unwrap());
    (child, lines)
}

/// The lines `from` gives (a child's stdout or stderr), read by a thread of their own
/// until it ends or the receiver is dropped.
pub fn read_lines(from: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits at most `limit` for a line of `lines` containing `what`: the lines read, that
/// one last; where none comes, an error with the lines read.
pub fn wait_for_line(
    lines: &mpsc::Receiver<String>,
    what: &str,
    limit: Duration,
) -> Result<Vec<String>, Vec<String>> {
    let t = Instant::now();
    let mut seen = Vec::new();
    while let Some(left) = limit.checked_sub(t.elapsed()) {
        match lines.recv_timeout(left) {
            Ok(l) if l.contains(what) => {
                seen.push(l);
                return Ok(seen);
            }
            Ok(l) => seen.push(l),
            Err(_) => break,
        }
    }
    Err(seen)
}

/// `peregrine run` arguments for secure mode with a flow each way between ports 1 and 2.
pub const SECURE_1_TO_2_AND_BACK: [&str; 6] = [
    "--fail-mode",
    "secure",
    "--flow",
    "in_port=1,actions=output:2",
    "--flow",
    "in_port=2,actions=output:1",
];

/// A topology with namespace hosts 1..=`n`.
pub fn hosts(n: u8) -> (Topology, Vec<Host>) {
    let mut topo = Topology::new();
    let h: Vec<Host> = (1..=n).map(|i| topo.add_host(i).unwrap()).collect();
    (topo, h)
}

/// `n` namespace hosts and a switch on their ports (numbered 1..=n) with `extra`
/// arguments. Bind the result as `let (topo, h, sw) = …` so that the switch is ended
/// before the namespaces are removed.
pub fn hosts_on_switch(n: u8, extra: &[&str]) -> (Topology, Vec<Host>, SwitchProc) {
    let (topo, h) = hosts(n);
    let mut args: Vec<&str> = h.iter().flat_map(|h| ["--port", h.port.as_str()]).collect();
    args.extend_from_slice(extra);
    let sw = SwitchProc::start(&args);
    (topo, h, sw)
}

pub fn ping(topo: &Topology, from: &Host, to: &str, count: u32) -> bool {
    topo.in_ns(&from.ns, "ping", &["-c", &count.to_string(), "-i", "0.1", "-W", "2", to]).is_ok()
}

/// Pings until one gets through (the first may wait for ARP and learning), at most 5 s.
pub fn ping_until_ok(topo: &Topology, from: &Host, to: &str) {
    let t = Instant::now();
    while !ping(topo, from, to, 1) {
        assert!(t.elapsed() < Duration::from_secs(5), "{} cannot reach {to}", from.ns);
    }
}

/// Runs `peregrine ctl ARGS…`; (success, stdout, stderr).
pub fn ctl(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_peregrine")).arg("ctl").args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A unique management socket path under /tmp (`what` names the test file), removed on
/// drop (the switch removes it when it stops cleanly, not when it is killed).
pub struct MgmtPath(std::path::PathBuf);

impl MgmtPath {
    pub fn new(what: &str) -> MgmtPath {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        MgmtPath(std::path::PathBuf::from(format!(
            "/tmp/peregrine-{what}-{}-{}.mgmt",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        )))
    }

    pub fn as_str(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for MgmtPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A fresh directory under the system's temporary one (`what` names the test), unique
/// to the run, removed on drop unless the test failed: then it is kept for its logs (a
/// failure message should give [`RunDir::path`]).
pub struct RunDir(std::path::PathBuf);

impl RunDir {
    pub fn new(what: &str) -> RunDir {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("peregrine-{what}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create the run's directory");
        RunDir(dir)
    }

    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
