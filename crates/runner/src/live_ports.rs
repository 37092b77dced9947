//! The running switch's ports as the runner keeps them: opening and closing interfaces,
//! their OpenFlow numbers and counter slots, the workers' handles, and the ports the
//! switch keeps while their interfaces come and go.
//!
//! [`Ports`] (shared as [`SharedPorts`]) is used at start to open the configured ports,
//! then by the agent through [`Control`] (its [`PortControl`]) for ports added and
//! removed at run time, and by the link monitor ([`Ports::on_link`]).
//!
//! Numbers: a port asked for with a number gets it (or an error if another port has
//! it); otherwise the number it last had (a port that went and came back keeps its
//! number), else the first number that no port has and that is not remembered for
//! another interface; a number some port had earlier in this run is not given again
//! while a flow names it. A number that flows name but no port ever had is free: a
//! controller that provisions ports before they exist gets them under its numbers.
//! Slots: the lowest one free.
//!
//! Kept ports: the configured ones and those added at run time. When a kept port's
//! interface is deleted (or leaves the namespace), the port is deleted (controllers see `OFPT_PORT_STATUS`
//! DELETE) but stays kept; when an interface of that name appears again it is added
//! back under its number. `del-port` (and a reload that drops a port from the file)
//! stops keeping it. A tap is the exception: the switch's descriptor keeps the device,
//! which goes on carrying frames wherever it went, so its port stays (link down).
//!
//! Lock order: the agent's thread holds the lock while it opens or closes a port;
//! nothing holding it waits for the agent's thread.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use datapath::action::port as ofport;
use datapath::normal::MacTable;
use datapath::port::PortIo;
use datapath::runtime::PortChanger;
use ports::{LinkEvent, PortCounters};
use serde::{Deserialize, Serialize};
use switch::agent::{AddPort, PortControl, ReloadPlan};
use switch::ports::{BackendStats, PortSpec};
use xdp::program::FastPath;

use crate::config::{BackendName, PortConfig, RunConfig, RunFlags};

/// How many deleted interfaces' numbers are remembered.
const RETIRED: usize = 1024;

/// The ports, shared by the agent's thread, the link monitor and the runner.
pub type SharedPorts = Arc<Mutex<Ports>>;

/// Locks the shared ports (a panic elsewhere does not stop the switch's port handling).
pub fn lock(p: &SharedPorts) -> std::sync::MutexGuard<'_, Ports> {
    p.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One open port.
pub struct Opened {
    pub no: u32,
    pub slot: u16,
    pub name: String,
    pub ifindex: u32,
    pub backend: BackendName,
    pub counters: Vec<Arc<PortCounters>>,
    /// The link state last reported: "up", "down" or "removed".
    state: &'static str,
}

/// A port the switch keeps (see the module comment).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kept {
    pub name: String,
    /// As configured or asked for (`auto` is resolved at each opening).
    pub backend: BackendName,
    /// The number asked for, if one was.
    pub ofport: Option<u32>,
    /// The number it had last.
    pub no: Option<u32>,
    /// It comes from the configuration file (not from `add-port`).
    pub from_file: bool,
}

/// What the link monitor's event means for the agent.
#[derive(Debug, PartialEq, Eq)]
pub enum LinkAction {
    /// Port `no`'s link went up or down.
    Link { no: u32, up: bool },
    /// Port `no`'s interface was deleted: delete the port, keep it.
    Gone { no: u32 },
    /// A kept port's interface appeared: add it.
    Back(AddPort),
}

/// Where a reload reads the configuration from.
pub struct ReloadSource {
    pub flags: RunFlags,
    pub cpus_online: usize,
}

/// The switch's ports (see the module comment).
pub struct Ports {
    workers: usize,
    fast: Option<Arc<FastPath>>,
    macs: MacTable,
    /// The workers' port changer, once they run (before: attached ports wait in
    /// `pending` for the workers' specs).
    changer: Option<PortChanger>,
    open: BTreeMap<u32, Opened>,
    /// Handles of opened ports the workers do not have yet, one per worker.
    pending: HashMap<u32, Vec<Box<dyn PortIo>>>,
    kept: BTreeMap<String, Kept>,
    /// Every number a port had in this run.
    used: std::collections::BTreeSet<u32>,
    /// Interfaces no longer kept (deleted with `del-port`) and the number each had, the
    /// latest last, at most [`RETIRED`]: one added again gets its number back, and no
    /// other interface is given it meanwhile.
    retired: std::collections::VecDeque<(String, u32)>,
    /// Kept interfaces that appeared and are being added back (so that the events of
    /// one appearance add it once).
    coming: std::collections::BTreeSet<String>,
    reload: Option<ReloadSource>,
}

impl Ports {
    pub fn new(
        workers: usize,
        fast: Option<Arc<FastPath>>,
        macs: MacTable,
        reload: Option<ReloadSource>,
    ) -> Ports {
        Ports {
            workers,
            fast,
            macs,
            changer: None,
            open: BTreeMap::new(),
            pending: HashMap::new(),
            kept: BTreeMap::new(),
            used: Default::default(),
            retired: Default::default(),
            coming: Default::default(),
            reload,
        }
    }

    /// Keeps `k` (replacing what was kept under its name).
    pub fn keep(&mut self, k: Kept) {
        self.kept.insert(k.name.clone(), k);
    }

    /// The ports kept that came from `add-port` (saved across restarts).
    pub fn added(&self) -> Vec<Kept> {
        self.kept.values().filter(|k| !k.from_file).cloned().collect()
    }

    /// The open ports, by number.
    pub fn open_ports(&self) -> impl Iterator<Item = &Opened> {
        self.open.values()
    }

    /// Whether interface `name` is open as a port.
    pub fn is_open(&self, name: &str) -> bool {
        self.open.values().any(|o| o.name == name)
    }

    /// The number for a port on `name`: `asked`, else the one it had, else the first
    /// free one (see the module comment). `reserved`: numbers flows name (kept from
    /// another interface only if one had it in this run).
    pub fn choose_no(
        &self,
        name: &str,
        asked: Option<u32>,
        reserved: &dyn Fn(u32) -> bool,
    ) -> Result<u32, String> {
        let taken = |n: u32| self.open.contains_key(&n);
        if let Some(n) = asked {
            return if taken(n) {
                Err(format!("ofport {n} is taken by another port"))
            } else {
                Ok(n)
            };
        }
        let others: Vec<u32> = self
            .kept
            .values()
            .filter(|k| k.name != name)
            .flat_map(|k| k.no.into_iter().chain(k.ofport))
            .chain(self.retired.iter().filter(|r| r.0 != name).map(|r| r.1))
            .collect();
        let mine = self
            .kept
            .get(name)
            .and_then(|k| k.ofport.or(k.no))
            .or_else(|| self.retired.iter().rev().find(|r| r.0 == name).map(|r| r.1))
            .filter(|n| !others.contains(n));
        if let Some(n) = mine.filter(|n| !taken(*n)) {
            return Ok(n);
        }
        (1..ofport::MAX)
            .find(|n| {
                // A number a port had stays out of reach while flows name it.
                let held = self.used.contains(n) && reserved(*n);
                !taken(*n) && !others.contains(n) && !held
            })
            .ok_or_else(|| "no OpenFlow port number is free".to_string())
    }

    /// Opens interface `name` as port `no` with `backend` (`auto` resolved here, with
    /// the reason said; an AF_XDP port chosen that way falls back to AF_PACKET if
    /// AF_XDP fails). The workers do not have it yet ([`Ports::attach`]).
    pub fn open(&mut self, name: &str, backend: BackendName, no: u32) -> Result<PortSpec, String> {
        match backend {
            BackendName::Auto => {
                let b = crate::run::choose_backend(no, name, self.workers);
                self.open_resolved(name, b, true, no)
            }
            b => self.open_resolved(name, b, false, no),
        }
    }

    /// [`Ports::open`] with `backend` already chosen; `auto`: it was chosen for a port
    /// configured as `auto` (AF_XDP then falls back to AF_PACKET).
    pub fn open_resolved(
        &mut self,
        name: &str,
        mut backend: BackendName,
        auto: bool,
        no: u32,
    ) -> Result<PortSpec, String> {
        if self.open.contains_key(&no) {
            return Err(format!("ofport {no} is taken by another port"));
        }
        let steering = self
            .fast
            .as_ref()
            .map(|fp| xdp::steering::PortSteering { fp: fp.clone(), of_port: no });
        let open = |backend: BackendName| {
            ports::open_steered(
                name,
                crate::run::backend_of(backend),
                self.workers,
                steering.as_ref().map(|s| s as &dyn ports::afxdp::Steering),
            )
        };
        let port = match open(backend) {
            Err(e) if auto && backend != BackendName::Afpacket => {
                eprintln!(
                    "peregrine: port {} ({name}): AF_XDP failed ({e}); afpacket instead",
                    crate::run::label(no)
                );
                backend = BackendName::Afpacket;
                open(backend)
            }
            other => other,
        };
        let what = format!("port {} ({name}, {})", crate::run::label(no), backend.as_str());
        let port = port.map_err(|e| format!("{what}: {e}"))?;
        // Every worker must be able to send on every port.
        if port.handles.len() < self.workers {
            return Err(format!(
                "{what}: {} queue(s) for {} workers; give the interface at least as many queues as workers (a veth: `ip link add … numrxqueues N numtxqueues N`) or use fewer workers",
                port.handles.len(),
                self.workers
            ));
        }
        let slot = (0..datapath::pipeline::MAX_PORT_SLOTS as u16)
            .find(|s| !self.open.values().any(|o| o.slot == *s))
            .ok_or("every port slot is in use")?;
        let counters = port.counters.clone();
        let fp = self.fast.clone();
        let spec = PortSpec {
            no,
            slot,
            name: name.to_string(),
            hw_addr: port.info.mac,
            speed_mbps: port.info.speed_mbps,
            up: port.info.is_up(),
            backend: Some(Arc::new(move || {
                let mut b = BackendStats::default();
                for c in &counters {
                    let s = c.snapshot();
                    b.rx_dropped += s.rx_dropped;
                    b.tx_dropped += s.tx_dropped;
                    b.rx_errors += s.rx_errors;
                    b.tx_errors += s.tx_errors;
                }
                // What the kernel dropped after the fast path sent it here.
                if let Some(Ok(n)) = fp.as_ref().map(|f| f.lost_of(no)) {
                    b.tx_dropped += n;
                }
                b
            })),
        };
        self.open.insert(
            no,
            Opened {
                no,
                slot,
                name: name.to_string(),
                ifindex: port.info.ifindex,
                backend,
                counters: port.counters,
                state: if port.info.is_up() { "up" } else { "down" },
            },
        );
        self.pending.insert(no, port.handles);
        self.used.insert(no);
        if let Some(k) = self.kept.get_mut(name) {
            k.no = Some(no);
        }
        Ok(spec)
    }

    /// Gives opened port `no` to the workers (before they run: to the specs
    /// [`Ports::take_pending`] builds), and to the learning switch's flood set.
    pub fn attach(&mut self, no: u32) -> Result<(), String> {
        if let Some(ch) = &self.changer {
            let handles =
                self.pending.remove(&no).ok_or_else(|| format!("port {no} was not opened"))?;
            ch.add(no, handles).map_err(|e| format!("port {no}: {e}"))?;
        }
        self.set_flood_ports();
        Ok(())
    }

    /// The handles of every port opened before the workers run, by number.
    pub fn take_pending(&mut self) -> Vec<(u32, Vec<Box<dyn PortIo>>)> {
        let mut v: Vec<_> = self.pending.drain().collect();
        v.sort_by_key(|(no, _)| *no);
        v
    }

    /// The workers run: later ports reach them through `changer`.
    pub fn set_changer(&mut self, changer: PortChanger) {
        self.changer = Some(changer);
    }

    /// Takes port `no` from the workers and closes it; `forget`: stop keeping
    /// interface `name`.
    pub fn close(&mut self, no: u32, name: &str, forget: bool) -> Result<(), String> {
        let removed = match &self.changer {
            Some(ch) => ch.remove(no).map_err(|e| format!("port {no}: {e}")),
            None => Ok(()),
        };
        self.pending.remove(&no);
        self.open.remove(&no);
        self.macs.forget_port(no);
        self.set_flood_ports();
        if forget {
            self.kept.remove(name);
            self.retired.retain(|r| r.0 != name);
            if self.retired.len() == RETIRED {
                self.retired.pop_front();
            }
            self.retired.push_back((name.to_string(), no));
        }
        removed
    }

    fn set_flood_ports(&self) {
        let nos: Vec<u32> = self.open.keys().copied().collect();
        self.macs.set_ports(&nos);
    }

    /// What a link event means (None: nothing for the agent).
    pub fn on_link(&mut self, ev: &LinkEvent) -> Option<LinkAction> {
        if let Some(o) = self.open.values_mut().find(|o| o.ifindex == ev.ifindex) {
            let live = ev.up && !ev.removed;
            let state = if ev.removed {
                "removed"
            } else if live {
                "up"
            } else {
                "down"
            };
            if state == o.state {
                return None;
            }
            o.state = state;
            eprintln!("peregrine: port {} ({}) link {state}", crate::run::label(o.no), o.name);
            // A tap's descriptor keeps its device, wherever it went (another namespace):
            // the port stays, its link reported down.
            if ev.removed && o.backend != BackendName::Tap {
                return Some(LinkAction::Gone { no: o.no });
            }
            if !live {
                self.macs.forget_port(o.no);
            }
            return Some(LinkAction::Link { no: o.no, up: live });
        }
        if ev.removed {
            return None;
        }
        let name = ev.name.as_deref()?;
        let k = self.kept.get(name)?;
        if self.is_open(name) || !self.coming.insert(name.to_string()) {
            return None;
        }
        Some(LinkAction::Back(AddPort {
            name: k.name.clone(),
            backend: Some(k.backend.as_str().to_string()),
            ofport: k.ofport.or(k.no),
        }))
    }

    /// The agent has handled the appearance of kept interface `name` (added it back or
    /// not): its next appearance is acted on again.
    pub fn settled(&mut self, name: &str) {
        self.coming.remove(name);
    }

    /// Port `no`'s backend.
    pub fn backend(&self, no: u32) -> Option<BackendName> {
        self.open.get(&no).map(|o| o.backend)
    }

    /// Reads the configuration again: the file's ports that are new or changed are to
    /// be added, those gone or changed removed (ports added with `add-port` stay).
    fn reload_plan(&mut self) -> Result<ReloadPlan, String> {
        let src = self
            .reload
            .as_ref()
            .ok_or("the switch was started without a configuration to reload")?;
        let cfg = RunConfig::load(&src.flags, src.cpus_online).map_err(|e| e.to_string())?;
        let numbers = cfg.port_numbers();
        let was: Vec<Kept> = self.kept.values().filter(|k| k.from_file).cloned().collect();
        let now: Vec<Kept> =
            cfg.ports.iter().zip(&numbers).map(|(p, &no)| file_kept(p, no)).collect();
        let same = |a: &Kept, b: &Kept| {
            a.name == b.name && a.backend == b.backend && a.ofport.or(a.no) == b.ofport.or(b.no)
        };
        let mut plan = ReloadPlan::default();
        for k in &was {
            if !now.iter().any(|n| same(n, k)) {
                plan.remove.push(k.name.clone());
                self.kept.remove(&k.name);
            }
        }
        for n in now {
            if !was.iter().any(|k| same(k, &n)) && self.is_open(&n.name) {
                // Added at run time, now in the file: it stays as it is, kept as the
                // file's.
                if let Some(k) = self.kept.get_mut(&n.name) {
                    k.from_file = true;
                }
                continue;
            }
            if !was.iter().any(|k| same(k, &n)) {
                plan.add.push(AddPort {
                    name: n.name.clone(),
                    backend: Some(n.backend.as_str().to_string()),
                    ofport: n.ofport,
                });
                self.keep(n);
            }
        }
        Ok(plan)
    }
}

/// How a configured port (numbered `no`) is kept.
pub fn file_kept(p: &PortConfig, no: u32) -> Kept {
    Kept {
        name: p.name.clone(),
        backend: p.backend,
        ofport: Some(no),
        no: Some(no),
        from_file: true,
    }
}

/// The agent's handle on the ports.
pub struct Control(pub SharedPorts);

impl PortControl for Control {
    fn open(&mut self, req: &AddPort, reserved: &dyn Fn(u32) -> bool) -> Result<PortSpec, String> {
        let backend = match &req.backend {
            Some(b) => BackendName::parse(b)?,
            None => BackendName::Auto,
        };
        let mut p = lock(&self.0);
        let no = p.choose_no(&req.name, req.ofport, reserved)?;
        let from_file = p.kept.get(&req.name).is_some_and(|k| k.from_file);
        let spec = p.open(&req.name, backend, no)?;
        p.keep(Kept {
            name: req.name.clone(),
            backend,
            ofport: req.ofport,
            no: Some(no),
            from_file,
        });
        Ok(spec)
    }

    fn attach(&mut self, no: u32) -> Result<(), String> {
        lock(&self.0).attach(no)
    }

    fn close(&mut self, no: u32, name: &str, forget: bool) -> Result<(), String> {
        lock(&self.0).close(no, name, forget)
    }

    fn reload(&mut self) -> Result<ReloadPlan, String> {
        lock(&self.0).reload_plan()
    }

    fn backend(&self, no: u32) -> Option<String> {
        lock(&self.0).backend(no).map(|b| b.as_str().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datapath::normal::MacTableConfig;

    fn ports() -> Ports {
        Ports::new(1, None, MacTable::new(MacTableConfig::default()), None)
    }

    fn kept(name: &str, no: u32, from_file: bool) -> Kept {
        Kept {
            name: name.into(),
            backend: BackendName::Afpacket,
            ofport: None,
            no: Some(no),
            from_file,
        }
    }

    #[test]
    fn numbers_are_asked_remembered_or_the_first_free_one() {
        let mut p = ports();
        let none = |_: u32| false;
        assert_eq!(p.choose_no("a", None, &none), Ok(1));
        assert_eq!(p.choose_no("a", Some(7), &none), Ok(7));
        // Flows name 1 and 2, which no port had: a controller provisioned them, and
        // the first free number is 1.
        assert_eq!(p.choose_no("a", None, &|n| n <= 2), Ok(1));
        // A number a port had earlier is not given again while a flow names it.
        p.used.insert(1);
        assert_eq!(p.choose_no("a", None, &|n| n <= 2), Ok(2));
        assert_eq!(p.choose_no("a", None, &none), Ok(1));
        p.used.clear();
        // A number remembered for another interface is not given away; one's own is
        // given back.
        p.keep(kept("b", 1, false));
        p.keep(kept("c", 4, true));
        assert_eq!(p.choose_no("a", None, &none), Ok(2));
        assert_eq!(p.choose_no("c", None, &none), Ok(4));
        assert_eq!(p.choose_no("b", None, &|n| n == 1), Ok(1), "its own");
        // A deleted interface's number is its own when it comes back, even though a
        // flow names it, and nobody else's meanwhile.
        p.close(6, "d", true).unwrap();
        assert_eq!(p.choose_no("e", None, &none), Ok(2));
        assert_eq!(p.choose_no("d", None, &|n| n == 6), Ok(6));
        p.close(2, "e", true).unwrap();
        assert_eq!(p.choose_no("f", None, &none), Ok(3));
    }

    #[test]
    fn a_kept_ports_interface_coming_back_is_added_under_its_number() {
        let mut p = ports();
        p.keep(kept("v1", 5, false));
        let ev = |name: &str, removed: bool| LinkEvent {
            ifindex: 99,
            name: Some(name.into()),
            up: !removed,
            removed,
        };
        assert_eq!(
            p.on_link(&ev("v1", false)),
            Some(LinkAction::Back(AddPort {
                name: "v1".into(),
                backend: Some("afpacket".into()),
                ofport: Some(5),
            }))
        );
        // Interfaces the switch does not keep, and removals of unknown ones, are not
        // its business.
        assert_eq!(p.on_link(&ev("v2", false)), None);
        assert_eq!(p.on_link(&ev("v1", true)), None);
    }
}
