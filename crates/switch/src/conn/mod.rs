//! The per-connection OpenFlow protocol state machine of the agent, sans-IO in the style
//! of quinn-proto: no sockets and no clock. The caller feeds received bytes
//! ([`Connection::receive`]) and the time ([`Connection::handle_timeout`], nanoseconds on
//! its own monotonic clock), drains bytes to write ([`Connection::poll_transmit`]) and
//! events to act on ([`Connection::poll_event`]), and answers requests with
//! [`Connection::send`] / [`Connection::send_error`].
//!
//! What the machine handles itself, for OpenFlow 1.3 and 1.0 peers alike:
//! - Version negotiation (1.3.5 §6.3.1, [`openflow::versions`]): a HELLO offering the
//!   versions of [`ConnConfig::versions`] (a version bitmap; a plain 1.0 HELLO when 1.0
//!   is the only one) is queued at construction. The peer's HELLO picks the highest
//!   common version (from its bitmap if it carries one, else the lower of the two header
//!   versions, which must then be one we allow). No common version, or a first message that is not
//!   a HELLO, is answered with `OFPET_HELLO_FAILED`/`OFPHFC_INCOMPATIBLE` carrying an
//!   ASCII reason, and the connection closes ([`Event::Closed`]).
//! - Framing over arbitrary splits ([`Framer`]). A header length below 8 (or above the
//!   maximum) leaves the stream unusable: `OFPBRC_BAD_LEN` with the bad header's bytes is
//!   queued, then the connection closes. A whole message whose header version is not the
//!   negotiated one is answered with `OFPBRC_BAD_VERSION` and the connection goes on.
//! - Malformed requests ([`Frame::decode_validated`] fails): `OFPT_ERROR` with the
//!   error's type/code, the request's xid and its first 64 bytes; the connection goes on.
//! - ECHO_REQUEST is answered with an ECHO_REPLY of the same xid and data. Liveness:
//!   after `idle_probe_ns` with nothing received an ECHO_REQUEST is sent; if still
//!   nothing arrives by `dead_after_ns` after the last receipt, the connection closes with
//!   [`CloseReason::Dead`]. Before negotiation only the death deadline applies.
//! - FEATURES_REQUEST and GET_CONFIG_REQUEST are answered from [`SwitchFacts`] and the
//!   switch config held here; SET_CONFIG updates that config and is also reported.
//!
//! Everything else the peer sends arrives as [`Event::Request`] in arrival order.
//!
//! Barrier ordering contract: a BARRIER_REQUEST is reported as an event, and the machine
//! then processes nothing further the peer sent (the bytes stay buffered, and still count
//! for liveness) until the agent calls `send(BarrierReply, xid)` with that request's xid.
//! The agent therefore must act on the events before the barrier, in order, queue their
//! replies and errors, and only then send the barrier reply; messages after the barrier
//! (including those the machine answers itself) are processed only after it.
//!
//! Invariants: once closed, nothing more is processed or queued except what was queued
//! before (the caller drains [`Connection::poll_transmit`], then closes its socket);
//! every queued message is a whole, encoded OpenFlow message; nothing here panics on
//! input from the wire.

use std::collections::VecDeque;

use openflow::framing::Framer;
use openflow::header::{OFPT_ERROR, OFPT_HELLO};
use openflow::model::FeaturesReply;
use openflow::v13::switch_config::OFP_DEFAULT_MISS_SEND_LEN;
use openflow::{error_reply, v10, v13, ErrorKind, Frame, Message, OfpError};
use openflow::{Versions, OFP10_VERSION, OFP13_VERSION};

#[cfg(test)]
mod tests;

/// One second in the nanoseconds the machine's clock arguments use.
pub const NS_PER_SEC: u64 = 1_000_000_000;

/// Facts about the switch that FEATURES_REPLY reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchFacts {
    pub datapath_id: u64,
    pub n_buffers: u32,
    pub n_tables: u8,
    /// In the one numbering of every version ([`openflow::model::cap`]); a 1.0 reply
    /// carries those 1.0 defines.
    pub capabilities: u32,
    /// 1.0 only: bit `n` set when 1.0 action type `n` is supported.
    pub v10_actions: u32,
    /// 1.0 only: the ports listed in the features reply.
    pub v10_ports: Vec<openflow::model::Port>,
}

impl Default for SwitchFacts {
    /// Datapath id 0, no buffers, 254 tables, flow/table/port (and for 1.3 group)
    /// statistics, every 1.0 action type (0..=11), no 1.0 ports.
    fn default() -> Self {
        use openflow::model::cap;
        SwitchFacts {
            datapath_id: 0,
            n_buffers: 0,
            n_tables: 254,
            capabilities: cap::FLOW_STATS | cap::TABLE_STATS | cap::PORT_STATS | cap::GROUP_STATS,
            v10_actions: 0xfff,
            v10_ports: Vec::new(),
        }
    }
}

/// The versions a connection offers, and its liveness timing. Invariant kept by
/// [`Connection::new`]: `idle_probe_ns <= dead_after_ns` (a larger probe interval is
/// clamped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnConfig {
    /// The OpenFlow versions offered and accepted (default: every one peregrine speaks).
    pub versions: Versions,
    /// Silence after which an ECHO_REQUEST is sent (default 5 s).
    pub idle_probe_ns: u64,
    /// Silence after which the peer is declared dead (default 15 s, counted from the
    /// last receipt, so it includes the probe interval).
    pub dead_after_ns: u64,
}

impl Default for ConnConfig {
    fn default() -> Self {
        ConnConfig {
            versions: Versions::default(),
            idle_probe_ns: 5 * NS_PER_SEC,
            dead_after_ns: 15 * NS_PER_SEC,
        }
    }
}

/// Why a connection closed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CloseReason {
    /// The peer's HELLO shared no version with ours (`peer` lists what it offered; only
    /// its header version when it sent no bitmap). An `OFPHFC_INCOMPATIBLE` was queued.
    Incompatible { peer: Vec<u8> },
    /// The peer's first message was not a HELLO (its type is given). An
    /// `OFPHFC_INCOMPATIBLE` was queued, unless that message was itself an `OFPT_ERROR`.
    NoHello { msg_type: u8 },
    /// The byte stream could not be split into messages; an `OFPBRC_BAD_LEN` was queued.
    Framing(OfpError),
    /// Nothing was received for `dead_after_ns`.
    Dead,
    /// The peer left `unsent` bytes unread (the agent gave up on it).
    Backlog { unsent: usize },
}

/// What the agent must act on, in arrival order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// Negotiation finished: every later message uses `version`.
    Connected { version: u8 },
    /// A decoded, validated message the machine does not answer itself (flow, group,
    /// meter, port and table mods, packet-outs, multipart/stats, set-config, barrier,
    /// role and async requests, queue config, experimenter and error messages, ...).
    /// `frame` holds its version and xid; `head` is its first 64 bytes, for
    /// [`Connection::send_error`].
    Request { frame: Frame, head: Vec<u8> },
    /// The connection is over; the caller drains `poll_transmit` and closes the socket.
    Closed(CloseReason),
}

/// Why [`Connection::send`] refused a message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    #[error("the connection has not negotiated a version or is closed")]
    NotConnected,
    #[error("message is for OpenFlow version {message}, the connection negotiated {negotiated}")]
    WrongVersion { negotiated: u8, message: u8 },
    #[error("message cannot be encoded: {0}")]
    Encode(OfpError),
}

/// What the machine has counted since construction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnCounters {
    /// Whole messages received (framed), good or bad.
    pub rx_msgs: u64,
    /// Messages queued for transmission.
    pub tx_msgs: u64,
    /// Received messages refused with an `OFPT_ERROR` (malformed, bad version, ...).
    pub rx_errors: u64,
    /// `OFPT_ERROR`s queued for the peer, whoever made them (the machine or the agent).
    pub tx_errors: u64,
    /// Messages ignored (a HELLO after negotiation, anything after closing).
    pub rx_ignored: u64,
    /// ECHO_REQUESTs sent as liveness probes.
    pub probes_sent: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum State {
    AwaitHello,
    Connected(u8),
    Closed,
}

/// One OpenFlow connection's protocol state (see the module documentation).
#[derive(Debug)]
pub struct Connection {
    facts: SwitchFacts,
    timing: ConnConfig,
    state: State,
    framer: Framer,
    outbox: VecDeque<Vec<u8>>,
    /// The bytes in `outbox`.
    outbox_bytes: usize,
    /// Whether the agent holds back the peer's messages ([`Connection::hold`]).
    held: bool,
    events: VecDeque<Event>,
    /// `flags` and `miss_send_len`, the same layout in 1.0 and 1.3.
    switch_config: v13::SwitchConfig,
    last_rx_ns: u64,
    probe_outstanding: bool,
    /// The xid of a BARRIER_REQUEST reported and not yet answered; processing stops.
    barrier_pending: Option<u32>,
    next_xid: u32,
    close_reason: Option<CloseReason>,
    counters: ConnCounters,
    /// What was wrong with the last message refused as malformed, until taken.
    refused: Option<String>,
}

impl Connection {
    /// A connection just opened at `now_ns`; its HELLO is already queued.
    pub fn new(facts: SwitchFacts, timing: ConnConfig, now_ns: u64) -> Self {
        let timing =
            ConnConfig { idle_probe_ns: timing.idle_probe_ns.min(timing.dead_after_ns), ..timing };
        let mut c = Connection {
            facts,
            timing,
            state: State::AwaitHello,
            framer: Framer::new(),
            outbox: VecDeque::new(),
            outbox_bytes: 0,
            held: false,
            events: VecDeque::new(),
            switch_config: v13::SwitchConfig { flags: 0, miss_send_len: OFP_DEFAULT_MISS_SEND_LEN },
            last_rx_ns: now_ns,
            probe_outstanding: false,
            barrier_pending: None,
            next_xid: 1,
            close_reason: None,
            counters: ConnCounters::default(),
            refused: None,
        };
        let xid = c.alloc_xid();
        c.queue_frame(&timing.versions.hello(xid));
        c
    }

    /// The negotiated version, once the HELLO exchange has succeeded (and until close).
    pub fn version(&self) -> Option<u8> {
        match self.state {
            State::Connected(v) => Some(v),
            _ => None,
        }
    }

    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }

    pub fn close_reason(&self) -> Option<&CloseReason> {
        self.close_reason.as_ref()
    }

    /// The switch config (`flags`, `miss_send_len`) as last set by the peer.
    pub fn switch_config(&self) -> v13::SwitchConfig {
        self.switch_config
    }

    pub fn counters(&self) -> ConnCounters {
        self.counters
    }

    /// The facts FEATURES_REPLY reports; the agent may update them (e.g. 1.0 ports).
    pub fn facts_mut(&mut self) -> &mut SwitchFacts {
        &mut self.facts
    }

    /// What was wrong with the last message refused as malformed (undecodable, of the
    /// wrong version, unframable) since the last call, for the log.
    pub fn take_refused(&mut self) -> Option<String> {
        self.refused.take()
    }

    /// The xid of the BARRIER_REQUEST awaiting the agent's reply, if any.
    pub fn barrier_pending(&self) -> Option<u32> {
        self.barrier_pending
    }

    /// Feeds bytes read from the socket at `now_ns`.
    pub fn receive(&mut self, bytes: &[u8], now_ns: u64) {
        if self.is_closed() {
            return;
        }
        if !bytes.is_empty() {
            self.last_rx_ns = self.last_rx_ns.max(now_ns);
            self.probe_outstanding = false;
        }
        self.framer.push(bytes);
        self.process();
    }

    /// The next whole message to write to the socket.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        let m = self.outbox.pop_front()?;
        self.outbox_bytes -= m.len();
        Some(m)
    }

    /// The bytes queued and not yet taken by [`Connection::poll_transmit`].
    pub fn outbox_bytes(&self) -> usize {
        self.outbox_bytes
    }

    /// The bytes received and not yet taken as messages (held back, or part of one).
    pub fn unread_bytes(&self) -> usize {
        self.framer.pending()
    }

    /// Holds back (`true`) or lets through the peer's messages: while held, bytes are
    /// buffered and nothing more is taken from them (nor answered, not even an echo), as
    /// while a barrier is pending; letting them through takes what is buffered at once.
    pub fn hold(&mut self, held: bool) {
        let resume = self.held && !held;
        self.held = held;
        if resume {
            self.process();
        }
    }

    /// Whether the peer's messages are held back ([`Connection::hold`]).
    pub fn is_held(&self) -> bool {
        self.held
    }

    /// The next event for the agent.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// When [`Connection::handle_timeout`] should next be called; `None` once closed.
    pub fn next_timeout(&self) -> Option<u64> {
        match self.state {
            State::Closed => None,
            State::AwaitHello => Some(self.dead_deadline()),
            State::Connected(_) if self.probe_outstanding => Some(self.dead_deadline()),
            State::Connected(_) => Some(self.last_rx_ns.saturating_add(self.timing.idle_probe_ns)),
        }
    }

    /// Runs the liveness timers at `now_ns`: sends the echo probe or declares the peer
    /// dead when their deadlines have passed. Early calls do nothing.
    pub fn handle_timeout(&mut self, now_ns: u64) {
        if self.is_closed() {
            return;
        }
        if now_ns >= self.dead_deadline() {
            self.close(CloseReason::Dead);
            return;
        }
        if let State::Connected(v) = self.state {
            let probe_at = self.last_rx_ns.saturating_add(self.timing.idle_probe_ns);
            if !self.probe_outstanding && now_ns >= probe_at {
                let xid = self.alloc_xid();
                let msg = match v {
                    OFP10_VERSION => Message::V10(v10::Message::EchoRequest(Vec::new())),
                    _ => Message::V13(v13::Message::EchoRequest(Vec::new())),
                };
                self.queue_frame(&Frame { version: v, xid, message: msg });
                self.probe_outstanding = true;
                self.counters.probes_sent += 1;
            }
        }
    }

    /// Queues a reply (or any message) of the negotiated version with `xid`. Sending the
    /// BARRIER_REPLY for the pending barrier resumes processing of what followed it.
    pub fn send(&mut self, message: Message, xid: u32) -> Result<(), SendError> {
        let State::Connected(v) = self.state else {
            return Err(SendError::NotConnected);
        };
        // The 1.3 message model carries 1.4 too.
        let (mv, is_barrier_reply) = match &message {
            Message::V13(m) => (v.max(OFP13_VERSION), *m == v13::Message::BarrierReply),
            Message::V10(m) => (OFP10_VERSION, *m == v10::Message::BarrierReply),
        };
        if mv != v {
            return Err(SendError::WrongVersion { negotiated: v, message: mv });
        }
        let bytes = Frame { version: v, xid, message }.encode().map_err(SendError::Encode)?;
        self.queue_bytes(bytes);
        if is_barrier_reply && self.barrier_pending == Some(xid) {
            self.barrier_pending = None;
            self.process();
        }
        Ok(())
    }

    /// Queues a message the switch originates (packet-in, port status, flow removed)
    /// with a fresh xid, which is returned.
    pub fn send_async(&mut self, message: Message) -> Result<u32, SendError> {
        let xid = self.alloc_xid();
        self.send(message, xid).map(|()| xid)
    }

    /// Queues the `OFPT_ERROR` answering a request the agent refused: `head` is the
    /// request's [`Event::Request::head`]; the error keeps its xid.
    pub fn send_error(&mut self, err: &OfpError, head: &[u8]) -> Result<(), SendError> {
        let State::Connected(v) = self.state else {
            return Err(SendError::NotConnected);
        };
        self.queue_error(error_reply(v, err, head));
        Ok(())
    }

    /// Closes the connection for `reason` (a decision of the agent's); what is queued
    /// stays for the caller to drain or drop.
    pub fn abort(&mut self, reason: CloseReason) {
        if !self.is_closed() {
            self.close(reason);
        }
    }

    fn dead_deadline(&self) -> u64 {
        self.last_rx_ns.saturating_add(self.timing.dead_after_ns)
    }

    fn alloc_xid(&mut self) -> u32 {
        let x = self.next_xid;
        self.next_xid = self.next_xid.wrapping_add(1);
        x
    }

    fn queue_error(&mut self, bytes: Vec<u8>) {
        self.counters.tx_errors += 1;
        self.queue_bytes(bytes);
    }

    fn queue_bytes(&mut self, bytes: Vec<u8>) {
        self.counters.tx_msgs += 1;
        self.outbox_bytes += bytes.len();
        self.outbox.push_back(bytes);
    }

    /// Queues a frame the machine built itself. Every such frame is far below 64 KiB
    /// except a 1.0 features reply with more than ~1300 ports, which is then dropped
    /// (and not counted as sent).
    fn queue_frame(&mut self, frame: &Frame) {
        if let Ok(bytes) = frame.encode() {
            self.queue_bytes(bytes);
        }
    }

    fn close(&mut self, reason: CloseReason) {
        self.state = State::Closed;
        self.close_reason = Some(reason.clone());
        self.events.push_back(Event::Closed(reason));
    }

    /// Takes whole messages from the framer until it needs more bytes, the connection
    /// closes, a barrier is pending, or the agent holds the messages back.
    fn process(&mut self) {
        while !self.is_closed() && self.barrier_pending.is_none() && !self.held {
            let msg = match self.framer.next_message() {
                Ok(Some(m)) => m.to_vec(),
                Ok(None) => break,
                Err(e) => {
                    let head = self.framer.head().to_vec();
                    let v = match self.state {
                        State::Connected(v) => v,
                        _ => head.first().copied().unwrap_or(OFP13_VERSION),
                    };
                    self.counters.rx_errors += 1;
                    self.refused = Some(e.to_string());
                    self.queue_error(error_reply(v, &e, &head));
                    self.close(CloseReason::Framing(e));
                    break;
                }
            };
            self.counters.rx_msgs += 1;
            self.handle_message(&msg);
        }
    }

    /// `msg` is one whole message (at least 8 bytes, its header length equal to its size).
    fn handle_message(&mut self, msg: &[u8]) {
        let (hdr_version, msg_type) = (msg[0], msg[1]);
        match self.state {
            State::Closed => self.counters.rx_ignored += 1,
            State::AwaitHello if msg_type == OFPT_HELLO => self.negotiate(msg),
            State::AwaitHello => {
                if msg_type != OFPT_ERROR {
                    let reason =
                        format!("expected OFPT_HELLO first, received message type {msg_type}");
                    self.queue_error(hello_failed(hdr_version, xid_of(msg), &reason));
                }
                self.counters.rx_errors += 1;
                self.close(CloseReason::NoHello { msg_type });
            }
            State::Connected(_) if msg_type == OFPT_HELLO => self.counters.rx_ignored += 1,
            State::Connected(v) if hdr_version != v => {
                let e = OfpError::new(
                    ErrorKind::BAD_REQUEST_BAD_VERSION,
                    format!("message of version {hdr_version} on a version {v} connection"),
                );
                self.refuse(v, &e, msg);
            }
            State::Connected(v) => match Frame::decode_validated(msg) {
                Ok(frame) => self.dispatch(frame, msg),
                Err(e) => self.refuse(v, &e, msg),
            },
        }
    }

    fn refuse(&mut self, version: u8, err: &OfpError, msg: &[u8]) {
        self.counters.rx_errors += 1;
        self.refused = Some(format!("message type {}: {err}", msg[1]));
        // A peer's error is never answered with an error, so two peers cannot bounce
        // errors back and forth.
        if msg[1] != OFPT_ERROR {
            self.queue_error(error_reply(version, err, msg));
        }
    }

    fn negotiate(&mut self, msg: &[u8]) {
        let hdr_version = msg[0];
        // Elements we cannot parse are ignored (§7.5.1): negotiation then falls back to
        // the header version.
        let hello = Frame::decode(msg).unwrap_or(Frame {
            version: hdr_version,
            xid: xid_of(msg),
            message: Message::V13(v13::Message::Hello(v13::Hello::default())),
        });
        match self.timing.versions.negotiate(&hello) {
            Ok(v) => {
                self.state = State::Connected(v);
                self.events.push_back(Event::Connected { version: v });
            }
            Err(e) => {
                let reason = format!("no common OpenFlow version: {}", e.sides());
                self.counters.rx_errors += 1;
                self.queue_error(hello_failed(hdr_version, xid_of(msg), &reason));
                self.close(CloseReason::Incompatible { peer: e.theirs });
            }
        }
    }

    /// The features reply, with the 1.0 action types and ports when `v10`.
    fn features_reply(&self, v10: bool) -> FeaturesReply {
        let f = &self.facts;
        FeaturesReply {
            datapath_id: f.datapath_id,
            n_buffers: f.n_buffers,
            n_tables: f.n_tables,
            capabilities: f.capabilities,
            actions: if v10 { f.v10_actions } else { 0 },
            ports: if v10 { f.v10_ports.clone() } else { Vec::new() },
            ..FeaturesReply::default()
        }
    }

    fn dispatch(&mut self, frame: Frame, raw: &[u8]) {
        let (v, xid) = (frame.version, frame.xid);
        let reply = match &frame.message {
            Message::V13(v13::Message::EchoRequest(d)) => {
                Some(Message::V13(v13::Message::EchoReply(d.clone())))
            }
            Message::V10(v10::Message::EchoRequest(d)) => {
                Some(Message::V10(v10::Message::EchoReply(d.clone())))
            }
            Message::V13(v13::Message::EchoReply(_)) | Message::V10(v10::Message::EchoReply(_)) => {
                return;
            }
            Message::V13(v13::Message::FeaturesRequest) => {
                Some(Message::V13(v13::Message::FeaturesReply(self.features_reply(false))))
            }
            Message::V10(v10::Message::FeaturesRequest) => {
                Some(Message::V10(v10::Message::FeaturesReply(self.features_reply(true))))
            }
            Message::V13(v13::Message::GetConfigRequest) => {
                Some(Message::V13(v13::Message::GetConfigReply(self.switch_config)))
            }
            Message::V10(v10::Message::GetConfigRequest) => {
                Some(Message::V10(v10::Message::GetConfigReply(v10::SwitchConfig {
                    flags: self.switch_config.flags,
                    miss_send_len: self.switch_config.miss_send_len,
                })))
            }
            Message::V13(v13::Message::SetConfig(v13::SwitchConfig { flags, .. }))
            | Message::V10(v10::Message::SetConfig(v10::SwitchConfig { flags, .. }))
                if *flags != 0 =>
            {
                // Fragments are forwarded as they are (OFPC_FRAG_NORMAL) only.
                let e = OfpError::new(
                    ErrorKind::SWITCH_CONFIG_FAILED_BAD_FLAGS,
                    format!("fragment handling {flags:#x}: only OFPC_FRAG_NORMAL is supported"),
                );
                self.counters.rx_errors += 1;
                self.queue_error(error_reply(
                    v,
                    &e,
                    &raw[..raw.len().min(openflow::error::ERROR_DATA_LEN)],
                ));
                return;
            }
            Message::V13(v13::Message::SetConfig(c)) => {
                self.switch_config = *c;
                None
            }
            Message::V10(v10::Message::SetConfig(c)) => {
                self.switch_config =
                    v13::SwitchConfig { flags: c.flags, miss_send_len: c.miss_send_len };
                None
            }
            Message::V13(v13::Message::BarrierRequest)
            | Message::V10(v10::Message::BarrierRequest) => {
                self.barrier_pending = Some(xid);
                None
            }
            _ => None,
        };
        match reply {
            Some(message) => self.queue_frame(&Frame { version: v, xid, message }),
            None => self.events.push_back(Event::Request {
                frame,
                head: raw[..raw.len().min(openflow::error::ERROR_DATA_LEN)].to_vec(),
            }),
        }
    }
}

/// The xid of a whole message (at least 8 bytes).
fn xid_of(msg: &[u8]) -> u32 {
    u32::from_be_bytes([msg[4], msg[5], msg[6], msg[7]])
}

/// `OFPT_ERROR` `OFPET_HELLO_FAILED`/`OFPHFC_INCOMPATIBLE` with an ASCII `reason`, in
/// the peer's header `version` (the error layout and these numbers are the same in every
/// version), truncated to fit one message.
fn hello_failed(version: u8, xid: u32, reason: &str) -> Vec<u8> {
    let kind = ErrorKind::HELLO_FAILED_INCOMPATIBLE;
    let data = &reason.as_bytes()[..reason.len().min(1024)];
    openflow::header::error_message(version, xid, kind.ty, kind.code, data)
}
