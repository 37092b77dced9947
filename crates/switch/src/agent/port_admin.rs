//! Ports added and removed while the switch runs: the agent's half.
//!
//! The agent owns the switch's port table and the datapath's config; opening an
//! interface, handing it to the workers and closing it are the runner's ([`PortControl`]).
//! Adding a port ([`Agent::add_port`]):
//! 1. the runner opens the interface and chooses its number and slot
//!    ([`PortControl::open`], told which numbers flows name);
//! 2. the port joins the port table and the datapath's config, published (the kernel
//!    tier, if any, flushes with that publish);
//! 3. the runner gives it to the workers ([`PortControl::attach`]);
//! 4. controllers get `OFPT_PORT_STATUS` ADD.
//!
//! Removing one ([`Agent::del_port`]) runs the other way: out of the table and config
//! (flows that output to it stop doing so with that publish), the workers drop it and
//! the runner closes it ([`PortControl::close`]), then `OFPT_PORT_STATUS` DELETE. Both
//! complete before they return, so a reply sent after them describes the switch as it
//! forwards.
//!
//! The management requests `ADD_PORT`, `DEL_PORT`, `LIST_PORTS` and `RELOAD`
//! ([`super::exp_type`]) call these; only management connections may make the ones that
//! change the switch.

use openflow::action::port as ofport;
use openflow::instruction::Instruction;
use openflow::oxm::Oxm;
use openflow::v13;
use openflow::v13::port::Port;
use openflow::v13::port_status::{PortReason, PortStatus};
use serde::{Deserialize, Serialize};

use super::{Agent, AsyncKind, SessionId};
use crate::ports::PortSpec;

/// A port to add: the interface, and optionally its backend and OpenFlow number.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AddPort {
    pub name: String,
    /// The backend's name as the configuration writes it; none: the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// The OpenFlow port number asked for; none: the runner chooses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ofport: Option<u32>,
}

/// What a configuration reload asks for: ports to add, interfaces to remove.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReloadPlan {
    pub add: Vec<AddPort>,
    pub remove: Vec<String>,
}

/// What a reload did: the ports added, the ports removed, and what could not be done.
#[derive(Clone, Debug, Default)]
pub struct Reloaded {
    pub added: Vec<Port>,
    pub removed: Vec<Port>,
    pub errors: Vec<String>,
}

/// The runner's side of port changes (see the module comment). Called on the agent's
/// thread, so each call may block (opening an AF_XDP socket takes milliseconds).
pub trait PortControl: Send {
    /// Opens `req`'s interface as a port of the switch: its number (the one asked for,
    /// or one the runner chooses; `reserved` says which numbers flows name, so that a
    /// number a deleted port had is not given to another interface while they do) and
    /// a free counter slot. The workers do not have it yet.
    fn open(&mut self, req: &AddPort, reserved: &dyn Fn(u32) -> bool) -> Result<PortSpec, String>;
    /// Gives opened port `no` to the workers.
    fn attach(&mut self, no: u32) -> Result<(), String>;
    /// Takes port `no` (interface `name`) from the workers and closes it. With `forget`
    /// the runner also stops counting it among the ports to keep (a user's removal);
    /// without, it stays configured (its interface went away and may come back).
    fn close(&mut self, no: u32, name: &str, forget: bool) -> Result<(), String>;
    /// Re-reads the configuration and says what changed in its ports.
    fn reload(&mut self) -> Result<ReloadPlan, String>;
    /// A port's backend as opened, for listings.
    fn backend(&self, no: u32) -> Option<String>;
}

/// Which port a removal names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PortRef {
    Name(String),
    No(u32),
}

impl Agent {
    /// Gives the agent the runner's port control (without one, ports cannot be added or
    /// removed at run time).
    pub fn set_port_control(&mut self, c: Box<dyn PortControl>) {
        self.port_control = Some(c);
    }

    /// The port numbers flows name (match as `in_port` or output to): one scan of the
    /// tables.
    pub fn ports_flows_name(&self) -> std::collections::BTreeSet<u32> {
        let mut named = std::collections::BTreeSet::new();
        for (_, k, e) in self.flows.flows().iter() {
            if let Some(Oxm::InPort(p)) = e.match_(k).get(openflow::oxm::OxmField::InPort) {
                named.insert(*p);
            }
            for i in e.instructions.iter() {
                if let Instruction::ApplyActions(a) | Instruction::WriteActions(a) = i {
                    for a in a {
                        if let openflow::action::Action::Output { port, .. } = a {
                            named.insert(*port);
                        }
                    }
                }
            }
        }
        named
    }

    /// Adds the port `req` describes (see the module comment); returns its description.
    pub fn add_port(&mut self, req: &AddPort, now: u64) -> Result<Port, String> {
        if let Some(no) = self.ports.by_name(&req.name) {
            return Err(format!("{} is already port {no}", req.name));
        }
        if let Some(no) = req.ofport {
            if no == 0 || no > ofport::MAX {
                return Err(format!(
                    "ofport {no}: a port number is 1 to {} (0xffffff00)",
                    ofport::MAX
                ));
            }
            if self.ports.contains(no) {
                return Err(format!("ofport {no} is taken by another port"));
            }
        }
        let mut control =
            self.port_control.take().ok_or("this switch cannot add ports while it runs")?;
        let spec = {
            let named = self.ports_flows_name();
            let ports = &self.ports;
            let reserved = |n: u32| ports.contains(n) || named.contains(&n);
            control.open(req, &reserved)
        };
        let r = spec.and_then(|spec| self.join(&mut *control, spec, now));
        self.port_control = Some(control);
        r
    }

    /// Steps 2 to 4 of an add, for a port the runner opened.
    fn join(
        &mut self,
        control: &mut dyn PortControl,
        spec: PortSpec,
        now: u64,
    ) -> Result<Port, String> {
        let (no, slot, name) = (spec.no, spec.slot, spec.name.clone());
        let base = self.flows.datapath().read_port(slot);
        if !self.ports.add(spec, now, base) {
            let _ = control.close(no, &name, false);
            return Err(format!(
                "port {no} or its slot {slot} is taken (the runner chose a number in use)"
            ));
        }
        let live =
            self.ports.get(no).is_some_and(|p| p.state & v13::port::port_state::LINK_DOWN == 0);
        self.flows.datapath().set_port_live(slot, live);
        self.republish_ports();
        if let Err(e) = control.attach(no) {
            self.ports.remove(no);
            self.republish_ports();
            let _ = control.close(no, &name, true);
            return Err(e);
        }
        let port = self.ports.get(no).ok_or("the port vanished")?;
        self.port_status(PortReason::Add, port.clone());
        Ok(port)
    }

    /// Removes a port (see the module comment); `forget`: a user's removal (the runner
    /// stops keeping it), not an interface that went away. Returns its last description.
    pub fn del_port(&mut self, which: &PortRef, forget: bool) -> Result<Port, String> {
        let no = match which {
            PortRef::No(n) if self.ports.contains(*n) => *n,
            PortRef::No(n) => return Err(format!("port {n} does not exist")),
            PortRef::Name(name) => self
                .ports
                .by_name(name)
                .ok_or_else(|| format!("{name} is not a port of this switch"))?,
        };
        if no == ofport::LOCAL {
            return Err("the LOCAL port stays while the switch runs".into());
        }
        let mut control =
            self.port_control.take().ok_or("this switch cannot remove ports while it runs")?;
        let (port, spec) = self.ports.remove(no).ok_or("the port vanished")?;
        self.republish_ports();
        self.flows.datapath().set_port_live(spec.slot, false);
        let closed = control.close(no, &spec.name, forget);
        self.port_control = Some(control);
        self.port_status(PortReason::Delete, port.clone());
        closed.map(|()| port)
    }

    /// Applies what a reload of the configuration changed in its ports: each error is
    /// said, and the rest still done.
    pub fn reload(&mut self, now: u64) -> Result<Reloaded, String> {
        let plan = self
            .port_control
            .as_mut()
            .ok_or("this switch has no configuration to reload")?
            .reload()?;
        let mut r = Reloaded::default();
        for name in &plan.remove {
            match self.del_port(&PortRef::Name(name.clone()), true) {
                Ok(p) => r.removed.push(p),
                Err(e) => r.errors.push(format!("removing {name}: {e}")),
            }
        }
        for req in &plan.add {
            match self.add_port(req, now) {
                Ok(p) => r.added.push(p),
                Err(e) => r.errors.push(format!("adding {}: {e}", req.name)),
            }
        }
        Ok(r)
    }

    /// The ports with their backends, for `list-ports`.
    pub fn list_ports(&self) -> Vec<(Port, Option<String>)> {
        self.ports
            .desc()
            .into_iter()
            .map(|p| {
                let b = self.port_control.as_ref().and_then(|c| c.backend(p.port_no));
                (p, b)
            })
            .collect()
    }

    /// Publishes the port table's ports as the datapath's (and the learning switch's
    /// flood set follows in the runner); returns once the workers use them.
    fn republish_ports(&mut self) {
        let mut cfg = self.flows.writer().pending().config().clone();
        cfg.ports = self.ports.datapath_ports();
        self.flows.writer().set_config(cfg);
        self.dirty = true;
        self.publish();
    }

    /// Sends `OFPT_PORT_STATUS` with `reason` for `port` to every connection that wants it.
    fn port_status(&mut self, reason: PortReason, port: Port) {
        let st = PortStatus { reason, port };
        let ids: Vec<SessionId> = self.sessions.keys().copied().collect();
        for id in ids {
            self.send_async(
                id,
                AsyncKind::PortStatus,
                reason.to_u8(),
                v13::Message::PortStatus(st.clone()),
            );
        }
    }
}
