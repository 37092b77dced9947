//! Open vSwitch's userspace (netdev) datapath as a device under test, with daemons of
//! its own: never the system's ovsdb or vswitchd.
//!
//! Every file (database, sockets, pidfiles, logs) lives in a fresh directory under the
//! temp dir, and both daemons run inside the device's namespace ([`DutNs`], holding the
//! hosts' root-side ends), so the `ovs-netdev` tap and bridge port of the netdev
//! datapath never meet another OVS on the box. Both are pinned with `taskset` to the
//! device CPU when one is given (and so is the PMD thread, by `pmd-cpu-mask`). The bridge
//! is `fail-mode=secure` with the setup's meters installed one by one with `ovs-ofctl
//! add-meter` (it has no command taking a file of meters), its groups with `ovs-ofctl
//! add-groups` and then its flows (by default every input to the sink and the sink back
//! to input 1) with `ovs-ofctl add-flows`, all on its management socket (OpenFlow 1.3
//! when there are meters or groups); `flow-limit` is left at its default. On drop
//! both daemons are ended by the PIDs in their pidfiles (only processes this driver
//! started) and the directory is removed.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{have, DutNs, Setup};
use crate::topo::Topology;

/// The message when Open vSwitch is missing.
pub const NOT_INSTALLED: &str = "Open vSwitch is not installed: apt-get install openvswitch-switch";

/// Where Debian's package puts the database schema.
const SCHEMA: &str = "/usr/share/openvswitch/vswitch.ovsschema";

/// How OVS opens the two ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortType {
    /// `type=system`: AF_PACKET sockets, served by the main thread.
    Afpacket,
    /// `type=afxdp`: AF_XDP sockets, served by a PMD thread.
    Afxdp,
}

impl PortType {
    /// The suffix in DUT names.
    pub fn name(self) -> &'static str {
        match self {
            PortType::Afpacket => "afpacket",
            PortType::Afxdp => "afxdp",
        }
    }
}

/// A running private Open vSwitch.
#[derive(Debug)]
pub struct Ovs {
    dir: PathBuf,
    // Dropped after the daemons are stopped (fields drop after `Drop::drop`).
    ns: DutNs,
}

/// The `ovs-vsctl` arguments (after the database option) creating bridge `br` with
/// ports `ports` as OpenFlow ports 1, 2, … in order; AF_XDP ports read `queues` receive
/// queues each (`options:n_rxq`, given when above 1).
pub fn vsctl_bridge_args(
    br: &str,
    ports: &[String],
    ty: PortType,
    cpu: Option<usize>,
    queues: u32,
) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    let mut push = |s: &[&str]| v.extend(s.iter().map(|x| x.to_string()));
    if let Some(c) = cpu {
        push(&[
            "set",
            "Open_vSwitch",
            ".",
            &format!("other_config:pmd-cpu-mask={:x}", 1u128 << c.min(127)),
            "--",
        ]);
    }
    push(&["add-br", br, "--", "set", "bridge", br, "datapath_type=netdev", "fail-mode=secure"]);
    for (i, p) in ports.iter().enumerate() {
        push(&["--", "add-port", br, p, "--", "set", "interface", p]);
        let ofport = format!("ofport_request={}", i + 1);
        push(&[&ofport]);
        if ty == PortType::Afxdp {
            push(&["type=afxdp"]);
            if queues > 1 {
                push(&[&format!("options:n_rxq={queues}")]);
            }
        }
    }
    v
}

/// The `ovs-ofctl` arguments of `command` (`add-meter` with one meter, `add-groups` or
/// `add-flows` with a file) with `arg` against `target`: OpenFlow 1.3 when `of13` (the
/// bridge is to hold meters or groups, which ovs-ofctl's default, OpenFlow 1.0, lacks),
/// its default otherwise.
pub fn ofctl_args<'a>(command: &'a str, target: &'a str, arg: &'a str, of13: bool) -> Vec<&'a str> {
    let mut v = Vec::new();
    if of13 {
        v.extend(["-O", "OpenFlow13"]);
    }
    v.extend([command, target, arg]);
    v
}

impl Ovs {
    /// Starts ovsdb-server and ovs-vswitchd in a namespace holding the setup's hosts'
    /// root-side ends, creates the bridge and installs the setup's flows.
    pub fn start(topo: &mut Topology, ty: PortType, setup: &Setup) -> Result<Ovs, String> {
        for p in ["ovs-vswitchd", "ovsdb-server", "ovsdb-tool", "ovs-vsctl", "ovs-ofctl"] {
            if !have(p) {
                return Err(NOT_INSTALLED.into());
            }
        }
        if !Path::new(SCHEMA).exists() {
            return Err(format!("{SCHEMA} is missing; {NOT_INSTALLED}"));
        }
        let dir = std::env::temp_dir().join(format!("{}-ovs", topo.prefix()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let ns = DutNs::new(topo, &setup.hosts()).inspect_err(|_| {
            let _ = std::fs::remove_dir_all(&dir);
        })?;
        let ovs = Ovs { dir, ns };
        ovs.setup(ty, setup)?;
        Ok(ovs)
    }

    /// The bridge's OpenFlow management socket, as `unix:PATH` (reachable from any
    /// namespace: it is a file).
    pub fn openflow_target(&self) -> String {
        format!("unix:{}", self.path("br0.mgmt"))
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    /// Starts OVS daemon `prog` with `args` ([`Self::cmd`]), detached, its pid file,
    /// control socket and log named `name` (`.pid`, `.ctl`, `.log`) in our directory.
    fn daemon(
        &self,
        cpu: Option<usize>,
        prog: &str,
        name: &str,
        args: &[&str],
    ) -> Result<String, String> {
        let pidfile = format!("--pidfile={}", self.path(&format!("{name}.pid")));
        let unixctl = format!("--unixctl={}", self.path(&format!("{name}.ctl")));
        let log_file = format!("--log-file={}", self.path(&format!("{name}.log")));
        let mut all = args.to_vec();
        all.extend([
            pidfile.as_str(),
            unixctl.as_str(),
            log_file.as_str(),
            "--no-chdir",
            "--detach",
        ]);
        self.cmd(cpu, prog, &all)
    }

    /// Runs an OVS command with every OVS directory pointing at ours, inside the
    /// namespace, pinned to `cpu` if given.
    fn cmd(&self, cpu: Option<usize>, prog: &str, args: &[&str]) -> Result<String, String> {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns.name]);
        if let Some(cpu) = cpu {
            c.args(["taskset", "-c", &cpu.to_string()]);
        }
        let d = self.dir.display().to_string();
        for v in ["OVS_RUNDIR", "OVS_LOGDIR", "OVS_DBDIR", "OVS_SYSCONFDIR"] {
            c.env(v, &d);
        }
        let out = c
            .arg(prog)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("{prog}: {e}"))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(format!(
                "`{prog} {}` failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }

    fn setup(&self, ty: PortType, setup: &Setup) -> Result<(), String> {
        let cpu = setup.cpu;
        let db = self.path("conf.db");
        let sock = format!("unix:{}", self.path("db.sock"));
        self.cmd(None, "ovsdb-tool", &["create", &db, SCHEMA])?;
        self.daemon(cpu, "ovsdb-server", "ovsdb", &[&db, &format!("--remote=p{sock}")])?;
        let vsctl = |args: &[String]| {
            let mut all = vec![format!("--db={sock}"), "--timeout=20".to_string()];
            all.extend_from_slice(args);
            let all: Vec<&str> = all.iter().map(String::as_str).collect();
            self.cmd(None, "ovs-vsctl", &all)
        };
        vsctl(&["--no-wait".into(), "init".into()])?;
        self.daemon(cpu, "ovs-vswitchd", "vs", &[&sock])?;
        vsctl(&vsctl_bridge_args("br0", &self.ns.ports, ty, cpu, setup.queues))?;
        for p in &self.ns.ports {
            let err = vsctl(&["get".into(), "interface".into(), p.clone(), "error".into()])?;
            let err = err.trim();
            if !err.is_empty() && err != "[]" {
                return Err(format!("OVS could not open {p}: {err}"));
            }
        }
        let target = self.openflow_target();
        let of13 = setup.needs_openflow13();
        for meter in &setup.meters {
            self.cmd(None, "ovs-ofctl", &ofctl_args("add-meter", &target, meter, of13))?;
        }
        for (what, lines) in [("add-groups", &setup.groups), ("add-flows", &setup.openflow())] {
            if lines.is_empty() {
                continue;
            }
            let file = self.path(&format!("{what}.txt"));
            let mut text = lines.join("\n");
            text.push('\n');
            std::fs::write(&file, text).map_err(|e| format!("{file}: {e}"))?;
            self.cmd(None, "ovs-ofctl", &ofctl_args(what, &target, &file, of13))?;
        }
        Ok(())
    }

    /// The daemons' PIDs (those whose pidfiles are there).
    pub fn pids(&self) -> Vec<u32> {
        ["vs.pid", "ovsdb.pid"].iter().filter_map(|f| read_pid(&self.dir.join(f))).collect()
    }

    /// ovs-vswitchd's PID (if its pidfile is there).
    pub fn vswitchd_pid(&self) -> Option<u32> {
        read_pid(&self.dir.join("vs.pid"))
    }

    /// The device's namespace.
    pub fn namespace(&self) -> &str {
        &self.ns.name
    }

    /// The daemons' log files (for diagnosis when a trial fails).
    pub fn logs(&self) -> [PathBuf; 2] {
        [self.dir.join("ovsdb.log"), self.dir.join("vs.log")]
    }
}

/// Reads a pidfile; `None` if absent or not a number.
pub fn read_pid(path: &Path) -> Option<u32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Ends process `pid` (TERM, then KILL after 3 s), waiting at most 4 s in all.
fn stop(pid: u32) {
    // A daemon that exited stays a zombie until its parent (init, after `--detach`)
    // reaps it: that counts as ended.
    let alive = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit_once(')').map(|(_, rest)| rest.trim_start().starts_with('Z')))
            .is_some_and(|zombie| !zombie)
    };
    let kill = |sig: &str| {
        let _ = Command::new("kill").args([sig, &pid.to_string()]).stderr(Stdio::null()).status();
    };
    kill("-TERM");
    let t = Instant::now();
    while alive() && t.elapsed() < Duration::from_secs(4) {
        if t.elapsed() > Duration::from_secs(3) {
            kill("-KILL");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl Drop for Ovs {
    fn drop(&mut self) {
        for f in ["vs.pid", "ovsdb.pid"] {
            if let Some(pid) = read_pid(&self.dir.join(f)) {
                stop(pid);
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bridge_command() {
        let ports = ["a".to_string(), "b".to_string()];
        assert_eq!(
            vsctl_bridge_args("br0", &ports, PortType::Afpacket, None, 2).join(" "),
            "add-br br0 -- set bridge br0 datapath_type=netdev fail-mode=secure \
             -- add-port br0 a -- set interface a ofport_request=1 \
             -- add-port br0 b -- set interface b ofport_request=2"
        );
        let x = vsctl_bridge_args("br0", &ports, PortType::Afxdp, Some(3), 1).join(" ");
        assert!(x.starts_with("set Open_vSwitch . other_config:pmd-cpu-mask=8 -- add-br"), "{x}");
        assert!(x.ends_with("set interface b ofport_request=2 type=afxdp"), "{x}");
        // Two queues: AF_XDP ports read both.
        let x = vsctl_bridge_args("br0", &ports, PortType::Afxdp, None, 2).join(" ");
        assert!(x.ends_with("set interface b ofport_request=2 type=afxdp options:n_rxq=2"), "{x}");
    }

    #[test]
    fn meters_and_groups_go_over_openflow_13() {
        assert_eq!(
            ofctl_args("add-groups", "unix:m", "g.txt", true),
            ["-O", "OpenFlow13", "add-groups", "unix:m", "g.txt"]
        );
        assert_eq!(
            ofctl_args("add-flows", "unix:m", "f.txt", true),
            ["-O", "OpenFlow13", "add-flows", "unix:m", "f.txt"]
        );
        assert_eq!(
            ofctl_args("add-flows", "unix:m", "f.txt", false),
            ["add-flows", "unix:m", "f.txt"]
        );
        let meter = "meter=1,pktps,burst,bands=type=drop,rate=10,burst_size=1";
        assert_eq!(
            ofctl_args("add-meter", "unix:m", meter, true),
            ["-O", "OpenFlow13", "add-meter", "unix:m", meter]
        );
        let (a, b) = (host(1), host(2));
        let mut setup = Setup::pair(&a, &b);
        assert!(!setup.needs_openflow13());
        setup.meters = vec![meter.into()];
        assert!(setup.needs_openflow13());
        setup.meters.clear();
        setup.groups = vec!["group_id=1,type=select,bucket=output:2".into()];
        assert!(setup.needs_openflow13());
    }

    fn host(i: u8) -> crate::topo::Host {
        crate::topo::Host {
            ns: format!("h{i}"),
            port: format!("p{i}"),
            ip: format!("10.9.0.{i}"),
            mac: format!("02:00:00:00:00:0{i}"),
        }
    }

    #[test]
    fn pidfiles() {
        let d = std::env::temp_dir().join(format!("pg-ovs-pid-test-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let f = d.join("x.pid");
        std::fs::write(&f, "1234\n").unwrap();
        assert_eq!(read_pid(&f), Some(1234));
        std::fs::write(&f, "junk").unwrap();
        assert_eq!(read_pid(&f), None);
        assert_eq!(read_pid(&d.join("absent.pid")), None);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
