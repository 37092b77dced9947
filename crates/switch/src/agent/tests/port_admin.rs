//! Ports added and removed at run time through the management requests, with a port
//! control that records what the agent asked of it.

use std::collections::BTreeSet;

use openflow::v13::Experimenter;

use super::*;

/// What the fake runner was asked, in order.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<String>>>);

/// A runner that opens any interface whose name starts with "eth", numbering it as
/// asked or with the first number not reserved (stricter than the real runner, which
/// skips a number flows name only if a port had it: here it shows what the agent says
/// is reserved).
struct Fake {
    log: Log,
    slots: BTreeSet<u16>,
    /// What a reload returns.
    plan: ReloadPlan,
}

impl PortControl for Fake {
    fn open(&mut self, req: &AddPort, reserved: &dyn Fn(u32) -> bool) -> Result<PortSpec, String> {
        if !req.name.starts_with("eth") {
            return Err(format!("{}: no such interface", req.name));
        }
        let no = req.ofport.unwrap_or_else(|| (1..).find(|n| !reserved(*n)).unwrap());
        let slot = (0..).find(|s| !self.slots.contains(s)).unwrap();
        self.slots.insert(slot);
        self.log.0.lock().unwrap().push(format!("open {} {no}", req.name));
        Ok(PortSpec {
            no,
            slot,
            name: req.name.clone(),
            hw_addr: [2, 0, 0, 0, 1, no as u8],
            speed_mbps: None,
            up: true,
            backend: None,
        })
    }
    fn attach(&mut self, no: u32) -> Result<(), String> {
        self.log.0.lock().unwrap().push(format!("attach {no}"));
        Ok(())
    }
    fn close(&mut self, no: u32, name: &str, forget: bool) -> Result<(), String> {
        self.log.0.lock().unwrap().push(format!("close {no} {name} {forget}"));
        Ok(())
    }
    fn reload(&mut self) -> Result<ReloadPlan, String> {
        Ok(self.plan.clone())
    }
    fn backend(&self, _no: u32) -> Option<String> {
        Some("afpacket".into())
    }
}

impl Rig {
    /// A rig whose ports 1-3 (slots 0-2) are open, with the fake runner.
    fn with_control(plan: ReloadPlan) -> (Rig, Log) {
        let mut r = Rig::new();
        let log = Log::default();
        r.agent.set_port_control(Box::new(Fake {
            log: log.clone(),
            slots: (0..3).collect(),
            plan,
        }));
        (r, log)
    }

    /// Sends peregrine request `exp_type` with `data` on `id`; returns the reply's JSON.
    fn ask(&mut self, id: SessionId, exp_type: u32, data: serde_json::Value) -> serde_json::Value {
        let xid = self.send13(
            id,
            v13::Message::Experimenter(Experimenter {
                experimenter: PEREGRINE_EXPERIMENTER,
                exp_type,
                data: data.to_string().into_bytes(),
            }),
            0,
        );
        let got = self.read(id);
        let reply =
            got.iter().find(|f| f.xid == xid).unwrap_or_else(|| panic!("no reply: {got:?}"));
        match &reply.message {
            Message::V13(v13::Message::Experimenter(e)) => serde_json::from_slice(&e.data).unwrap(),
            other => panic!("not a reply: {other:?}"),
        }
    }
}

/// The port statuses among `frames`: (reason, port number, name).
fn statuses(frames: &[Frame]) -> Vec<(PortReason, u32, String)> {
    frames
        .iter()
        .filter_map(|f| match &f.message {
            Message::V13(v13::Message::PortStatus(s)) => {
                Some((s.reason, s.port.port_no, s.port.name.clone()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn an_added_port_forwards_and_is_announced_and_a_deleted_one_stops() {
    let (mut r, log) = Rig::with_control(ReloadPlan::default());
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    let m = r.connect(SessionKind::Management, OFP13_VERSION);
    // Flows name ports 4 and 5 before they exist: the runner is told so (this one
    // then skips them).
    r.flow(c, "in_port=1,actions=output:4", FlowModCommand::Add);
    r.flow(c, "in_port=2,actions=output:5", FlowModCommand::Add);
    assert!(r.packet(1, SEC).is_empty(), "no port 4 yet");
    let got = r.ask(m, exp_type::ADD_PORT, serde_json::json!({"name": "eth9"}));
    assert_eq!(got["port"]["ofport"], 6, "{got}");
    assert_eq!(got["port"]["backend"], "afpacket");
    assert_eq!(got["port"]["link"], "up");
    let got = r.ask(m, exp_type::ADD_PORT, serde_json::json!({"name": "eth4", "ofport": 4}));
    assert_eq!(got["port"]["ofport"], 4, "{got}");
    assert_eq!(r.packet(1, SEC), vec![4], "the flow outputs to the new port");
    assert_eq!(
        statuses(&r.read(c)),
        vec![(PortReason::Add, 6, "eth9".to_string()), (PortReason::Add, 4, "eth4".to_string())]
    );
    // The port description lists them.
    let ports = r.ask(m, exp_type::LIST_PORTS, serde_json::json!({}));
    let nos: Vec<u64> =
        ports["ports"].as_array().unwrap().iter().map(|p| p["ofport"].as_u64().unwrap()).collect();
    assert_eq!(nos, vec![1, 2, 3, 4, 6]);
    // Mistakes are said and change nothing.
    for (req, says) in [
        (serde_json::json!({"name": "eth4"}), "already port 4"),
        (serde_json::json!({"name": "eth7", "ofport": 2}), "taken"),
        (serde_json::json!({"name": "eth7", "ofport": 0}), "1 to"),
        (serde_json::json!({"name": "wlan0"}), "no such interface"),
    ] {
        let got = r.ask(m, exp_type::ADD_PORT, req.clone());
        assert!(got["error"].as_str().is_some_and(|e| e.contains(says)), "{req}: {got}");
    }
    // Deleted: announced, and the flow outputs to it no more.
    let got = r.ask(m, exp_type::DEL_PORT, serde_json::json!({"name": "eth4"}));
    assert_eq!(got["port"]["ofport"], 4, "{got}");
    assert!(r.packet(1, SEC).is_empty());
    assert_eq!(statuses(&r.read(c)), vec![(PortReason::Delete, 4, "eth4".to_string())]);
    let got = r.ask(m, exp_type::DEL_PORT, serde_json::json!({"ofport": 4}));
    assert_eq!(got["error"], "port 4 does not exist");
    assert_eq!(
        *log.0.lock().unwrap(),
        ["open eth9 6", "attach 6", "open eth4 4", "attach 4", "close 4 eth4 true"]
    );
    // Re-added, the port forwards again.
    let got = r.ask(m, exp_type::ADD_PORT, serde_json::json!({"name": "eth4", "ofport": 4}));
    assert_eq!(got["port"]["ofport"], 4, "{got}");
    assert_eq!(r.packet(1, SEC), vec![4]);
}

#[test]
fn only_the_management_socket_changes_ports() {
    let (mut r, _) = Rig::with_control(ReloadPlan::default());
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    for t in [exp_type::ADD_PORT, exp_type::DEL_PORT, exp_type::RELOAD] {
        let e = r.error_of(
            c,
            v13::Message::Experimenter(Experimenter {
                experimenter: PEREGRINE_EXPERIMENTER,
                exp_type: t,
                data: br#"{"name": "eth1"}"#.to_vec(),
            }),
        );
        assert_eq!(e, ErrorKind::BAD_REQUEST_EPERM, "type {t}");
    }
    // Listing is for anyone.
    assert_eq!(
        r.ask(c, exp_type::LIST_PORTS, serde_json::json!({}))["ports"].as_array().unwrap().len(),
        3
    );
    // Bad request data is an error that names the problem; the connection lives on.
    let m = r.connect(SessionKind::Management, OFP13_VERSION);
    let e = r.error_of(
        m,
        v13::Message::Experimenter(Experimenter {
            experimenter: PEREGRINE_EXPERIMENTER,
            exp_type: exp_type::ADD_PORT,
            data: br#"{"nmae": "eth1"}"#.to_vec(),
        }),
    );
    assert_eq!(e, ErrorKind::BAD_REQUEST_BAD_LEN);
    assert_eq!(r.ask(m, exp_type::LIST_PORTS, serde_json::json!({}))["ports"][0]["ofport"], 1);
}

#[test]
fn a_reload_removes_and_adds_what_the_file_changed() {
    let plan = ReloadPlan {
        add: vec![
            AddPort { name: "eth7".into(), ofport: Some(7), backend: None },
            AddPort { name: "bad0".into(), ..AddPort::default() },
        ],
        remove: vec!["eth2".into()],
    };
    let (mut r, log) = Rig::with_control(plan);
    let c = r.connect(SessionKind::Controller, OFP13_VERSION);
    let m = r.connect(SessionKind::Management, OFP13_VERSION);
    let got = r.ask(m, exp_type::RELOAD, serde_json::json!({}));
    assert_eq!(got["added"][0]["ofport"], 7, "{got}");
    assert_eq!(got["removed"][0]["name"], "eth2", "{got}");
    assert!(got["errors"][0].as_str().unwrap().contains("bad0"), "{got}");
    assert_eq!(
        statuses(&r.read(c)),
        vec![(PortReason::Delete, 2, "eth2".to_string()), (PortReason::Add, 7, "eth7".to_string())]
    );
    assert_eq!(*log.0.lock().unwrap(), ["close 2 eth2 true", "open eth7 7", "attach 7"]);
    // An interface that went away is deleted but stays configured.
    r.agent.del_port(&PortRef::Name("eth7".into()), false).unwrap();
    assert_eq!(log.0.lock().unwrap().last().unwrap(), "close 7 eth7 false");
}
