//! Back-pressure: how much a connection may have unsent, and long replies produced as
//! the connection drains.
//!
//! A connection's **backlog** is what it has unsent: bytes queued in its protocol
//! machine plus bytes the shell took ([`Agent::poll_transmit`]) and has not yet written
//! ([`Agent::transmitted`]). At [`BACKLOG_HIGH`] the connection is held: the messages it
//! sends stay unread bytes (so the shell stops reading its socket and TCP pushes back on
//! the peer), and a long reply stops growing. Work resumes once the backlog is down to
//! [`BACKLOG_LOW`]. So one peer that sends requests and never reads costs the switch
//! about `BACKLOG_HIGH` plus what it sent, whatever it asks for.
//!
//! A flow-stats request (1.0, 1.3, 1.4) is a [`Dump`]: its reply is produced part by
//! part (`AgentConfig::dump_part` entries, by default [`DUMP_PART`]; each part of one or
//! more messages, all flagged `REPLY_MORE` but the very last) as the backlog allows,
//! the connection held until the last part is queued, so its later requests are
//! answered after it, in order. Each part lists the entries that exist when it is made,
//! after the last one sent: an entry added or removed meanwhile may or may not be
//! listed, none twice.
//!
//! A reader that keeps up with a long dump still sees its connection held for moments
//! at a time; the log is told of a connection held for [`BACKLOG_NOTICE_NS`] on end.
//!
//! A packet-out whose packets the workers cannot take yet (their queue is full) holds
//! its connection: the packets are offered again every [`STALL_RETRY_NS`] until taken,
//! and only then are the connection's later requests handled. Packet-outs are thus
//! never dropped for being too many; the peer is slowed down instead.
//!
//! Asynchronous messages are not held back: packet-ins for a connection whose backlog
//! is past [`BACKLOG_HIGH`] are dropped (and counted), flow monitors pause
//! ([`super::monitor`]), and a connection whose backlog passes [`BACKLOG_MAX`] reads
//! nothing and is closed.
//!
//! Invariant after each [`Agent::pace`]: a connection with a dump, a stalled
//! packet-out, or a backlog that reached `BACKLOG_HIGH` and has not come down to
//! `BACKLOG_LOW`, is held; a held connection's queued events wait.

use openflow::v13::multipart::{
    FlowStatsRequest, MultipartReply, MultipartReplyBody as B, MultipartRequestBody as R,
    MAX_REPLY_BODY, OFPMPF_REPLY_MORE, OFPMPF_REQ_MORE,
};
use openflow::{v10, v13, Message, OFP10_VERSION};

use super::{Agent, Notice, Out, SessionId, TransmitError};
use crate::conn::CloseReason;
use crate::flows::FlowKey;

/// Unsent bytes at which a connection is held.
pub const BACKLOG_HIGH: usize = 1 << 20;
/// Unsent bytes at or below which a held connection's work resumes.
pub const BACKLOG_LOW: usize = 256 << 10;
/// Unsent bytes past which the connection is closed: its peer reads nothing.
pub const BACKLOG_MAX: usize = 64 << 20;
/// How long a connection stays held for its backlog before the log says so: a peer
/// that reads a long dump as it comes is held for moments at a time, one that reads
/// nothing stays held.
pub const BACKLOG_NOTICE_NS: u64 = 1_000_000_000;
/// Flow entries per part of a flow-stats reply, by default.
pub const DUMP_PART: usize = 256;
/// How long after the workers refused a packet-out's packets they are offered again.
pub const STALL_RETRY_NS: u64 = 500_000;

/// A flow-stats reply under way.
pub(crate) struct Dump {
    req: FlowStatsRequest,
    xid: u32,
    /// The request's first bytes, for an error.
    head: Vec<u8>,
    /// Where the next part starts: after this entry (`None`: from the first).
    after: Option<(u8, FlowKey)>,
}

/// The 1.3 form of a flow-stats request (of a 1.3, 1.4 or 1.0 peer), if `m` is one.
fn flow_stats_request(m: &Message) -> Option<FlowStatsRequest> {
    match m {
        Message::V13(v13::Message::MultipartRequest(r)) if r.flags & OFPMPF_REQ_MORE == 0 => {
            match &r.body {
                R::Flow(f) => Some(f.clone()),
                _ => None,
            }
        }
        Message::V10(v10::Message::StatsRequest(v10::stats::StatsRequest {
            body: v10::stats::StatsRequestBody::Flow(f),
            ..
        })) => Some(crate::v10::flow_request_to_v13(f)),
        _ => None,
    }
}

impl Agent {
    /// Starts the reply to `m` as a [`Dump`] if it is a flow-stats request (then true;
    /// a request the switch refuses is answered at once).
    pub(super) fn start_dump(&mut self, id: SessionId, m: &Message, xid: u32, head: &[u8]) -> bool {
        let Some(req) = flow_stats_request(m) else { return false };
        if let Some(e) = self.flows.flows().select(&req).err() {
            self.reply(id, xid, Out::Err(e), head);
            return true;
        }
        // The counters include the kernel tier's hits so far.
        self.sync_fast_path();
        if let Some(s) = self.sessions.get_mut(&id) {
            s.dump = Some(Dump { req, xid, head: head.to_vec(), after: None });
            s.conn.hold(true);
        }
        true
    }

    /// Queues the next part of connection `id`'s dump; the dump ends with its last part.
    fn dump_part(&mut self, id: SessionId, now: u64) {
        let Some(s) = self.sessions.get_mut(&id) else { return };
        let Some(d) = s.dump.take() else { return };
        let v = s.conn.version().unwrap_or(openflow::OFP13_VERSION);
        let after = d.after.as_ref().map(|(t, k)| (*t, k));
        let (mut stats, next) =
            match self.flows.flow_stats_part(&d.req, after, self.cfg.dump_part, now) {
                Ok(part) => part,
                Err(e) => {
                    self.reply(id, d.xid, Out::Err(e), &d.head);
                    return;
                }
            };
        if v != OFP10_VERSION {
            crate::v10::show_flow_stats_to_v13(&mut stats);
        }
        let parts = B::Flow(stats).split(v, MAX_REPLY_BODY);
        let n = parts.len();
        for (i, body) in parts.into_iter().enumerate() {
            let more = next.is_some() || i + 1 < n;
            let flags = if more { OFPMPF_REPLY_MORE } else { 0 };
            let m = v13::Message::MultipartReply(MultipartReply { flags, body });
            self.reply(id, d.xid, Out::Msg(m), &d.head);
        }
        if let (Some(next), Some(s)) = (next, self.sessions.get_mut(&id)) {
            s.dump = Some(Dump { after: Some(next), ..d });
        }
    }

    /// Gives connection `id` the packet-outs of its request that the workers could not
    /// take, and holds it until they do.
    pub(super) fn stall(&mut self, id: SessionId, now: u64) {
        if self.stalled.is_empty() {
            return;
        }
        let mut all = datapath::pipeline::Outputs::new();
        for mut o in self.stalled.drain(..) {
            all.tx.append(&mut o.tx);
            all.normal.append(&mut o.normal);
        }
        let Some(s) = self.sessions.get_mut(&id) else { return };
        match &mut s.stalled {
            Some(o) => {
                o.tx.append(&mut all.tx);
                o.normal.append(&mut all.normal);
            }
            None => s.stalled = Some(all),
        }
        s.conn.hold(true);
        let at = now.saturating_add(STALL_RETRY_NS);
        self.stall_retry_at = Some(self.stall_retry_at.map_or(at, |t| t.min(at)));
    }

    /// Offers connection `id`'s stalled packet-outs to the workers again.
    pub(super) fn retry_stalled(&mut self, id: SessionId, now: u64) {
        let Some(s) = self.sessions.get_mut(&id) else { return };
        let Some(mut out) = s.stalled.take() else { return };
        match self.tx.transmit(&mut out) {
            Ok(()) => {}
            Err(TransmitError::Busy) => {
                s.stalled = Some(out);
                let at = now.saturating_add(STALL_RETRY_NS);
                self.stall_retry_at = Some(self.stall_retry_at.map_or(at, |t| t.min(at)));
            }
            Err(TransmitError::Failed(why)) => {
                self.counters.packet_out_drops += 1;
                self.notices.push(Notice::PacketOutLost { why }, now);
            }
        }
    }

    /// Moves connection `id`'s work on as far as its backlog allows: its dump's parts,
    /// then the requests it sent, one at a time; holds it when its backlog is high or a
    /// dump is under way (see the module comment).
    pub(super) fn pace(&mut self, id: SessionId, now: u64) {
        loop {
            let Some(s) = self.sessions.get_mut(&id) else { return };
            if s.conn.is_closed() {
                // Only what ended it is left to read.
                self.drain_events(id, now);
                return;
            }
            let backlog = s.backlog();
            if backlog > BACKLOG_MAX {
                s.conn.abort(CloseReason::Backlog { unsent: backlog });
                continue;
            }
            if backlog >= BACKLOG_HIGH && !s.pressed {
                s.pressed = true;
                s.pressed_at = now;
                s.conn.hold(true);
            }
            if s.pressed {
                if backlog > BACKLOG_LOW {
                    if !s.backlog_noticed && now >= s.pressed_at + BACKLOG_NOTICE_NS {
                        s.backlog_noticed = true;
                        let peer = s.peer.clone();
                        self.notices.push(Notice::Backlogged { peer, unsent: backlog }, now);
                    }
                    return;
                }
                s.pressed = false;
            }
            if s.monitor_pause.is_some() && backlog <= BACKLOG_LOW {
                self.resume_monitors(id);
                continue;
            }
            if s.dump.is_some() {
                self.dump_part(id, now);
                continue;
            }
            if s.stalled.is_some() {
                return;
            }
            s.conn.hold(false);
            let Some(ev) = s.conn.poll_event() else { return };
            self.event(id, ev, now);
        }
    }
}
