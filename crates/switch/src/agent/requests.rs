//! The agent's answers to the requests that change or query the switch: flow, group,
//! meter, port and table mods, packet-outs, roles, queue configuration, and OpenFlow 1.0
//! requests by way of their 1.3 meaning ([`compat10`](super::compat10)).

use crate::agent::Notice;
use datapath::action::{port as dport, Action as DpAction};
use datapath::packet::Packet;
use datapath::pipeline::Outputs;
use openflow::action::{port, Action, OFPG_ANY};
use openflow::instruction::Instruction;
use openflow::v13::flow_mod::{FlowMod, OFP_NO_BUFFER};
use openflow::v13::packet_out::PacketOut;
use openflow::v13::port_status::PortMod;
use openflow::v13::role::{ControllerRole, Role};
use openflow::v13::switch_config::TableMod;
use openflow::{v10, v13, ErrorKind, OfpError};

use super::extension::PEREGRINE_EXPERIMENTER;
use super::{compat10, session::Session, Agent, Out, SessionId, TransmitError};
use crate::translate::actions_to_datapath;
use crate::translate::prereq;

impl Agent {
    /// Refuses instructions that name a group or meter the switch lacks.
    pub(super) fn check_refs(&self, insts: &[Instruction]) -> Result<(), OfpError> {
        for i in insts {
            match i {
                Instruction::Meter(m) if !self.meters.contains(*m) => {
                    return Err(OfpError::new(
                        ErrorKind::METER_MOD_FAILED_UNKNOWN_METER,
                        format!("meter {m} does not exist"),
                    ))
                }
                Instruction::ApplyActions(a) | Instruction::WriteActions(a) => {
                    self.check_actions(a)?
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn check_actions(&self, actions: &[Action]) -> Result<(), OfpError> {
        for a in actions {
            if let Action::Group(g) = a {
                if !self.groups.contains(*g) {
                    return Err(OfpError::new(
                        ErrorKind::BAD_ACTION_BAD_OUT_GROUP,
                        format!("group {g} does not exist"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Refuses an add or modify that sends packets to a group with a bucket whose
    /// set-field's prerequisites the flow's match, with the actions before the group,
    /// does not meet (`OFPBAC_MATCH_INCONSISTENT`; see [`prereq`]). The flow's own
    /// action lists are checked with the rest of its translation, and a match that does
    /// not validate is left to it (its own error comes first).
    pub(super) fn check_group_prereqs(&self, fm: &FlowMod) -> Result<(), OfpError> {
        use v13::flow_mod::FlowModCommand as C;
        let installs = matches!(fm.command, C::Add | C::Modify | C::ModifyStrict);
        if !installs || !sends_to_group(&fm.instructions) || fm.match_.validate().is_err() {
            return Ok(());
        }
        let lookup = |g: u32| self.groups.buckets(g);
        match prereq::check_instructions(&fm.match_, &fm.instructions, &lookup) {
            Err(e) if e.in_group => Err(e.error),
            _ => Ok(()),
        }
    }

    /// Refuses a group modify whose new buckets would not meet their set-fields'
    /// prerequisites for some flow that sends packets to the group, directly or through
    /// other groups (`OFPBAC_MATCH_INCONSISTENT`): the flows that lead to a group are
    /// what its buckets are checked against. An added group has no such flow yet.
    fn check_modified_group(&self, gm: &v13::group_mod::GroupMod) -> Result<(), OfpError> {
        if gm.command != v13::group_mod::GroupModCommand::Modify
            || !self.groups.contains(gm.group_id)
        {
            return Ok(());
        }
        let lookup = |g: u32| {
            if g == gm.group_id {
                Some(gm.buckets.as_slice())
            } else {
                self.groups.buckets(g)
            }
        };
        for (table, k, e) in self.flows.flows().iter() {
            if !sends_to_group(&e.instructions) {
                continue;
            }
            if let Err(x) = prereq::check_instructions(&e.match_(k), &e.instructions, &lookup) {
                let mut error = x.error;
                error.detail = format!(
                    "group {} would not suit the flow in table {table} at priority {}: {}",
                    gm.group_id, e.priority, error.detail
                );
                return Err(error);
            }
        }
        Ok(())
    }

    /// The wire version connection `id` negotiated (1.3 until it has).
    pub(super) fn version_of(&self, id: SessionId) -> u8 {
        self.sessions.get(&id).and_then(|s| s.conn.version()).unwrap_or(openflow::OFP13_VERSION)
    }

    fn is_slave(&self, id: SessionId) -> bool {
        self.sessions.get(&id).is_some_and(Session::is_slave)
    }

    /// Handles a 1.3 request; returns the replies and errors, in order.
    pub(super) fn request13(&mut self, id: SessionId, m: v13::Message, now: u64) -> Vec<Out> {
        use v13::Message as M;
        let modifies = matches!(
            m,
            M::FlowMod(_)
                | M::GroupMod(_)
                | M::MeterMod(_)
                | M::PortMod(_)
                | M::TableMod(_)
                | M::PacketOut(_)
        );
        if modifies && self.is_slave(id) {
            return vec![Out::Err(OfpError::new(
                ErrorKind::BAD_REQUEST_IS_SLAVE,
                "a slave controller may not change the switch".to_string(),
            ))];
        }
        let r: Result<Vec<v13::Message>, OfpError> = match m {
            M::FlowMod(fm) => return self.flow_mod_request(&fm, now),
            M::GroupMod(gm) => self.group_mod(&gm, now).map(|()| vec![]),
            M::MeterMod(mm) => self.meter_mod(&mm, now).map(|()| vec![]),
            M::PortMod(pm) => self.port_mod(&pm).map(|()| vec![]),
            M::TableMod(tm) => table_mod(&tm).map(|()| vec![]),
            M::PacketOut(po) => self.packet_out(&po, now).map(|()| vec![]),
            M::MultipartRequest(req) => self.multipart(id, &req, self.version_of(id), now),
            M::BarrierRequest => {
                self.flows.barrier();
                self.dirty = false;
                Ok(vec![M::BarrierReply])
            }
            M::RoleRequest(r) => self.role_request(id, r, now).map(|r| vec![M::RoleReply(r)]),
            M::GetAsyncRequest => Ok(self
                .sessions
                .get(&id)
                .map(|s| vec![M::GetAsyncReply(s.async_cfg.clone())])
                .unwrap_or_default()),
            M::SetAsync(c) => {
                let version = self.version_of(id);
                if let Some(s) = self.sessions.get_mut(&id) {
                    c.apply_to(version, &mut s.async_cfg);
                }
                Ok(vec![])
            }
            M::SetConfig(c) => {
                self.set_config(c);
                Ok(vec![])
            }
            M::QueueGetConfigRequest(p) => self.queue_config(p),
            // The peer's errors and replies to our echo need no answer.
            M::Error(_) | M::EchoReply(_) => Ok(vec![]),
            M::Experimenter(e) if e.experimenter == PEREGRINE_EXPERIMENTER => {
                let admin = self
                    .sessions
                    .get(&id)
                    .is_some_and(|s| s.kind == super::SessionKind::Management);
                self.extension(&e, admin, now)
            }
            M::Experimenter(e) => Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_EXPERIMENTER,
                format!("experimenter {:#x} is not supported", e.experimenter),
            )),
            other => Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_TYPE,
                format!("{} is not a request a switch serves", msg_name(&other)),
            )),
        };
        match r {
            Ok(ms) => ms.into_iter().map(Out::Msg).collect(),
            Err(e) => vec![Out::Err(e)],
        }
    }

    /// A flow-mod from a connection: applied, then its buffered packet (if any) runs
    /// through the tables as a packet-out to `OFPP_TABLE` would.
    pub(super) fn flow_mod_request(&mut self, fm: &FlowMod, now: u64) -> Vec<Out> {
        self.counters.flow_mods += 1;
        self.apply_flow_mod(fm, now)
    }

    /// [`Agent::flow_mod_request`] without counting the request.
    fn apply_flow_mod(&mut self, fm: &FlowMod, now: u64) -> Vec<Out> {
        if let Err(e) =
            self.check_refs(&fm.instructions).and_then(|()| self.check_group_prereqs(fm))
        {
            return vec![Out::Err(e)];
        }
        match self.flows.handle_flow_mod(fm, now) {
            Ok(removed) => {
                self.dirty = true;
                self.broadcast_flow_removed(removed);
            }
            Err(e) => return vec![Out::Err(e)],
        }
        let adds = matches!(
            fm.command,
            v13::flow_mod::FlowModCommand::Add
                | v13::flow_mod::FlowModCommand::Modify
                | v13::flow_mod::FlowModCommand::ModifyStrict
        );
        if fm.buffer_id == OFP_NO_BUFFER || !adds {
            return vec![];
        }
        let r = self.buffers.take(fm.buffer_id, now).and_then(|b| {
            self.publish();
            self.run_packet_out(b.data, b.in_port, &[DpAction::Output(dport::TABLE)], now)
        });
        match r {
            Ok(()) => vec![],
            Err(e) => vec![Out::Err(e)],
        }
    }

    pub(super) fn group_mod(
        &mut self,
        gm: &v13::group_mod::GroupMod,
        now: u64,
    ) -> Result<(), OfpError> {
        self.check_modified_group(gm)?;
        let ch = self.groups.apply(gm, self.flows.writer(), now)?;
        self.dirty = true;
        for g in ch.deleted {
            let removed = self.flows.delete_where(
                |e| e.outputs_to_group(g),
                v13::packet_in::FlowRemovedReason::GroupDelete,
                now,
            );
            self.broadcast_flow_removed(removed);
        }
        Ok(())
    }

    pub(super) fn meter_mod(
        &mut self,
        mm: &v13::meter_mod::MeterMod,
        now: u64,
    ) -> Result<(), OfpError> {
        let ch = self.meters.apply(mm, self.flows.writer(), now)?;
        self.dirty = true;
        for m in ch.deleted {
            let removed = self.flows.delete_where(
                |e| e.instructions.contains(&Instruction::Meter(m)),
                v13::packet_in::FlowRemovedReason::MeterDelete,
                now,
            );
            self.broadcast_flow_removed(removed);
        }
        Ok(())
    }

    fn port_mod(&mut self, pm: &PortMod) -> Result<(), OfpError> {
        if let Some(ch) = self.ports.port_mod(pm)? {
            self.port_changed(ch);
        }
        Ok(())
    }

    fn packet_out(&mut self, po: &PacketOut, now: u64) -> Result<(), OfpError> {
        self.counters.packet_outs += 1;
        let valid_in = po.in_port == port::CONTROLLER
            || po.in_port == port::ANY
            || po.in_port == port::LOCAL
            || self.ports.contains(po.in_port);
        if !valid_in {
            return Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_PORT,
                format!("in_port {} is not a port of the switch", po.in_port),
            ));
        }
        self.check_actions(&po.actions)?;
        let actions =
            actions_to_datapath(&po.actions).map_err(|e| OfpError::new(e.kind(), e.to_string()))?;
        let data = if po.buffer_id != OFP_NO_BUFFER {
            self.buffers.take(po.buffer_id, now)?.data
        } else {
            po.data.clone()
        };
        // The packet-out sees every earlier change (OFPP_TABLE, groups).
        self.publish();
        self.run_packet_out(data, po.in_port, &actions, now)
    }

    fn run_packet_out(
        &mut self,
        data: Vec<u8>,
        in_port: u32,
        actions: &[DpAction],
        now: u64,
    ) -> Result<(), OfpError> {
        let mut out = Outputs::new();
        {
            let dp = self.flows.datapath().clone();
            let mut b = dp.batch(&mut self.worker, now);
            b.packet_out(Packet::from_slice(&data), in_port, actions, &mut out);
        }
        if out.tx.is_empty() && out.normal.is_empty() {
            return Ok(());
        }
        match self.tx.transmit(&mut out) {
            Ok(()) => {}
            // The request's connection waits until the workers take them ([`pace`]).
            Err(TransmitError::Busy) => self.stalled.push(out),
            Err(TransmitError::Failed(why)) => {
                self.counters.packet_out_drops += 1;
                self.notices.push(Notice::PacketOutLost { why }, now);
            }
        }
        Ok(())
    }

    /// OpenFlow 1.3.5 §6.3.5.
    fn role_request(&mut self, id: SessionId, r: Role, now: u64) -> Result<Role, OfpError> {
        let current = |a: &Agent| Role {
            role: a.sessions.get(&id).map_or(ControllerRole::Equal, |s| s.role),
            generation_id: a.generation.unwrap_or(0),
        };
        match r.role {
            ControllerRole::NoChange => return Ok(current(self)),
            ControllerRole::Equal => {}
            ControllerRole::Master | ControllerRole::Slave => {
                if let Some(g) = self.generation {
                    if (r.generation_id.wrapping_sub(g) as i64) < 0 {
                        return Err(OfpError::new(
                            ErrorKind::ROLE_REQUEST_FAILED_STALE,
                            format!("generation id {} is older than {g}", r.generation_id),
                        ));
                    }
                }
                self.generation = Some(r.generation_id);
            }
            ControllerRole::Unknown(n) => {
                return Err(OfpError::new(
                    ErrorKind::ROLE_REQUEST_FAILED_BAD_ROLE,
                    format!("role {n} does not exist"),
                ))
            }
        }
        let me = self.sessions.get(&id).map(|s| s.peer.clone()).unwrap_or_default();
        let mut demoted = Vec::new();
        if r.role == ControllerRole::Master {
            for (other, s) in self.sessions.iter_mut() {
                if *other != id && s.role == ControllerRole::Master {
                    s.role = ControllerRole::Slave;
                    demoted.push(*other);
                    let n = Notice::Role {
                        peer: s.peer.clone(),
                        role: s.role,
                        demoted_by: Some(me.clone()),
                    };
                    self.notices.push(n, now);
                }
            }
        }
        if let Some(s) = self.sessions.get_mut(&id) {
            if s.role != r.role {
                s.role = r.role;
                self.notices.push(Notice::Role { peer: me, role: r.role, demoted_by: None }, now);
            }
        }
        // 1.4 tells each demoted controller (OFPT_ROLE_STATUS).
        let status = v13::RoleStatus {
            role: ControllerRole::Slave,
            reason: v13::ControllerRoleReason::MasterRequest,
            generation_id: self.generation.unwrap_or(0),
            properties: Vec::new(),
        };
        for other in demoted {
            let reason = status.reason.to_u8();
            let m = v13::Message::RoleStatus(status.clone());
            self.send_async(other, super::AsyncKind::RoleStatus, reason, m);
        }
        Ok(current(self))
    }

    fn queue_config(&self, p: u32) -> Result<Vec<v13::Message>, OfpError> {
        if p != port::ANY && !self.ports.contains(p) {
            return Err(OfpError::new(
                ErrorKind::QUEUE_OP_FAILED_BAD_PORT,
                format!("port {p} does not exist"),
            ));
        }
        Ok(vec![v13::Message::QueueGetConfigReply(v13::queue_config::QueueGetConfigReply {
            port: p,
            queues: Vec::new(),
        })])
    }

    /// Handles a 1.0 request by translating it to 1.3.
    pub(super) fn request10(&mut self, id: SessionId, m: v10::Message, now: u64) -> Vec<Out> {
        match compat10::request_to_v13(m) {
            Ok(compat10::Request10::Plain(m13)) => self.request13(id, m13, now),
            Ok(compat10::Request10::FlowMod(t)) => {
                if self.is_slave(id) {
                    return self.request13(id, v13::Message::FlowMod(t.flow_mod), now);
                }
                match &t.add_if_unmatched {
                    Some(add) => self.modify10(&t, add, now),
                    None => self.flow_mod_request(&t.flow_mod, now),
                }
            }
            Ok(compat10::Request10::Aggregate(req)) => self.stats10(Some(&req), now),
            Ok(compat10::Request10::TableStats) => self.stats10(None, now),
            Ok(compat10::Request10::None) => vec![],
            Err(e) => vec![Out::Err(e)],
        }
    }

    /// The 1.3 reply (for the 1.0 connection's translation) to a 1.0 aggregate request
    /// selecting `aggregate`, or with `None` to a 1.0 table stats request: both count the
    /// entries the 1.0 flow dump lists, not every entry.
    fn stats10(
        &mut self,
        aggregate: Option<&v13::multipart::FlowStatsRequest>,
        now: u64,
    ) -> Vec<Out> {
        use v13::multipart::{MultipartReply, MultipartReplyBody as B};
        self.sync_fast_path();
        let all = v13::multipart::FlowStatsRequest::default();
        let req = aggregate.unwrap_or(&all);
        let mut sum = v13::multipart::AggregateStats::default();
        let mut tables = self.flows.table_stats();
        tables.iter_mut().for_each(|t| t.active_count = 0);
        // Part by part, so that a million entries are never all listed at once.
        let mut after = None;
        loop {
            let at = after.as_ref().map(|(t, k)| (*t, k));
            let (part, next) = match self.flows.flow_stats_part(req, at, self.cfg.dump_part, now) {
                Ok(p) => p,
                Err(e) => return vec![Out::Err(e)],
            };
            match aggregate {
                Some(_) => crate::v10::add_to_v10_aggregate(&mut sum, &part),
                None => crate::v10::count_v10_flows(&mut tables, &part),
            }
            match next {
                Some(n) => after = Some(n),
                None => break,
            }
        }
        let body = match aggregate {
            Some(_) => B::Aggregate(sum),
            None => B::Table(tables),
        };
        vec![Out::Msg(v13::Message::MultipartReply(MultipartReply { flags: 0, body }))]
    }

    /// A 1.0 modify (for every table): applied to each table it selects entries in, in
    /// table order, or the add `add` when it selects none (1.0 §4.6). The buffered packet,
    /// if any, runs once, after the last table. The translation's errors (the actions)
    /// do not depend on the table, so a refused modify is refused at its first table,
    /// before any change.
    fn modify10(&mut self, t: &crate::v10::FlowModV13, add: &FlowMod, now: u64) -> Vec<Out> {
        let tables = self.modify_tables(&t.flow_mod);
        let Some(&last) = tables.last() else {
            return self.flow_mod_request(add, now);
        };
        self.counters.flow_mods += 1;
        for table in tables {
            let mut fm = t.per_table(table);
            if table != last {
                fm.buffer_id = OFP_NO_BUFFER;
            }
            let out = self.apply_flow_mod(&fm, now);
            if !out.is_empty() {
                return out;
            }
        }
        vec![]
    }

    /// The tables in which a modify flow-mod (of any table id, `OFPTT_ALL` included)
    /// selects at least one entry, in order: for MODIFY_STRICT an entry of identical match
    /// and priority, for MODIFY one whose match the flow-mod's covers; both filtered by
    /// cookie.
    fn modify_tables(&self, fm: &FlowMod) -> Vec<u8> {
        let strict = (fm.command == v13::flow_mod::FlowModCommand::ModifyStrict).then(|| {
            crate::flows::FlowKey::new(crate::flows::NormMatch::new(&fm.match_).view(), fm.priority)
        });
        let req = v13::multipart::FlowStatsRequest {
            table_id: fm.table_id,
            out_port: port::ANY,
            out_group: OFPG_ANY,
            cookie: fm.cookie,
            cookie_mask: fm.cookie_mask,
            match_: fm.match_.clone(),
        };
        let mut tables = Vec::new();
        if let Ok(it) = self.flows.flows().select(&req) {
            for (table, key, _) in it {
                if strict.as_ref().is_none_or(|k| k == key) && tables.last() != Some(&table) {
                    tables.push(table);
                }
            }
        }
        tables
    }
}

/// Table-mod (1.3.5 §7.3.3): tables take no configuration in 1.3 but the deprecated
/// miss bits, which are accepted and have no effect.
fn table_mod(tm: &TableMod) -> Result<(), OfpError> {
    const DEPRECATED_MASK: u32 = 3;
    if tm.table_id != v13::flow_mod::OFPTT_ALL && tm.table_id as usize >= crate::flows::NUM_TABLES {
        return Err(OfpError::new(
            ErrorKind::TABLE_MOD_FAILED_BAD_TABLE,
            format!("table {} does not exist", tm.table_id),
        ));
    }
    if tm.config & !DEPRECATED_MASK != 0 {
        return Err(OfpError::new(
            ErrorKind::TABLE_MOD_FAILED_BAD_CONFIG,
            format!("table config {:#x} is not supported", tm.config),
        ));
    }
    Ok(())
}

fn msg_name(m: &v13::Message) -> String {
    let s = format!("{m:?}");
    s.split(['(', ' ', '{']).next().unwrap_or("message").to_string()
}

/// Whether an instruction set holds a group action.
fn sends_to_group(insts: &[Instruction]) -> bool {
    insts.iter().any(|i| match i {
        Instruction::ApplyActions(a) | Instruction::WriteActions(a) => {
            a.iter().any(|a| matches!(a, Action::Group(_)))
        }
        _ => false,
    })
}
