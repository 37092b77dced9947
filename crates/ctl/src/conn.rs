//! One OpenFlow connection to a switch, with blocking sockets and timeouts.
//!
//! [`Conn::open`] connects, sends our hello, reads the switch's and settles the version
//! ([`openflow::versions`]). After that:
//! - [`Conn::dump`] sends a request and gathers every reply with its xid: a multipart
//!   (1.3) or stats (1.0) reply flagged `REPLY_MORE` is followed by more, until one
//!   without the flag ([`Gather`] holds that rule, apart from the socket);
//! - [`Conn::transact`] sends a request that has exactly one reply;
//! - [`Conn::transact_noreply`] sends requests that have no reply unless they fail,
//!   then one barrier, and returns the errors that came back before the barrier reply;
//! - [`Conn::bundle_transact`] sends such requests inside one bundle ([`crate::bundle`]).
//!
//! Echo requests from the switch are answered wherever we wait. Messages with other xids
//! are skipped, as ovs-ofctl does. Every wait is bounded: by the `--timeout` deadline
//! when there is one, and by `idle` (no byte from the switch for that long) otherwise.
//! Xids come from one counter per run, shared by every connection of the run, starting
//! at 1 with the hello, so a command's requests carry the xids ovs-ofctl would give them.

use std::cell::Cell;
use std::io::{self, Read};
use std::rc::Rc;
use std::time::{Duration, Instant};

use openflow::framing::Framer;
use openflow::header::{t10, t13, Header};
use openflow::v10::Message as M10;
use openflow::v13::bundle::BundleCtrlType;
use openflow::v13::Message as M13;
use openflow::{Frame, Message, OFP10_VERSION};

use super::bundle;
use super::target::{Stream, Target};
use super::CtlError;
use openflow::Versions;

/// The xid counter of a run (shared by its connections).
pub type Xids = Rc<Cell<u32>>;

/// How long the run may wait.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The `--timeout` deadline for the whole run.
    pub deadline: Option<Instant>,
    /// The longest silence tolerated from the switch while a reply is due.
    pub idle: Duration,
}

/// What a received message means for a request being gathered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Not ours (another xid): skip it.
    Skip,
    /// Part of the reply; more parts follow.
    More,
    /// The last (or only) part of the reply.
    Done,
    /// The switch answered with an error.
    Error,
    /// Our xid, but a message that does not answer the request.
    Unexpected,
}

/// The rule for gathering the replies to one request: which xid, and whether the
/// request is a multipart/stats one (whose replies may come in several parts).
#[derive(Clone, Copy, Debug)]
pub struct Gather {
    pub xid: u32,
    /// The message type of the reply (`t13::MULTIPART_REPLY`, `t10::STATS_REPLY`,
    /// `t13::FEATURES_REPLY`, ...).
    pub reply_type: u8,
}

impl Gather {
    /// Classifies one received message (already decoded).
    pub fn step(&self, f: &Frame) -> Step {
        // A switch numbers its asynchronous messages itself: one may carry our xid.
        let asynchronous = matches!(
            &f.message,
            Message::V13(M13::PortStatus(_) | M13::PacketIn(_) | M13::FlowRemoved(_))
                | Message::V10(M10::PortStatus(_) | M10::PacketIn(_) | M10::FlowRemoved(_))
        );
        if f.xid != self.xid || asynchronous {
            return Step::Skip;
        }
        match &f.message {
            Message::V13(M13::Error(_)) | Message::V10(M10::Error(_)) => Step::Error,
            _ if f.msg_type() != self.reply_type => Step::Unexpected,
            Message::V13(M13::MultipartReply(r)) => {
                if r.flags & openflow::v13::multipart::OFPMPF_REPLY_MORE != 0 {
                    Step::More
                } else {
                    Step::Done
                }
            }
            Message::V10(M10::StatsReply(r)) => {
                if r.flags & openflow::v10::stats::OFPSF_REPLY_MORE != 0 {
                    Step::More
                } else {
                    Step::Done
                }
            }
            _ => Step::Done,
        }
    }
}

/// The reply type that answers a request of type `req_type` in `version`.
pub fn reply_type_for(version: u8, req_type: u8) -> u8 {
    if version == OFP10_VERSION {
        match req_type {
            t10::FEATURES_REQUEST => t10::FEATURES_REPLY,
            t10::GET_CONFIG_REQUEST => t10::GET_CONFIG_REPLY,
            t10::STATS_REQUEST => t10::STATS_REPLY,
            t10::BARRIER_REQUEST => t10::BARRIER_REPLY,
            t10::ECHO_REQUEST => t10::ECHO_REPLY,
            t10::QUEUE_GET_CONFIG_REQUEST => t10::QUEUE_GET_CONFIG_REPLY,
            other => other,
        }
    } else {
        match req_type {
            t13::FEATURES_REQUEST => t13::FEATURES_REPLY,
            t13::GET_CONFIG_REQUEST => t13::GET_CONFIG_REPLY,
            t13::MULTIPART_REQUEST => t13::MULTIPART_REPLY,
            t13::BARRIER_REQUEST => t13::BARRIER_REPLY,
            t13::ECHO_REQUEST => t13::ECHO_REPLY,
            t13::QUEUE_GET_CONFIG_REQUEST => t13::QUEUE_GET_CONFIG_REPLY,
            t13::ROLE_REQUEST => t13::ROLE_REPLY,
            t13::GET_ASYNC_REQUEST => t13::GET_ASYNC_REPLY,
            other => other,
        }
    }
}

/// A message as read: its bytes, and the decoded frame when it decodes.
#[derive(Clone, Debug)]
pub struct Received {
    pub bytes: Vec<u8>,
    pub frame: Result<Frame, openflow::OfpError>,
}

/// A request the switch refused: the index of the request (in the order given to
/// [`Conn::transact_noreply`]) when its xid is known, and the error message as read.
#[derive(Clone, Debug)]
pub struct Refusal {
    pub index: Option<usize>,
    pub error: Received,
}

/// What a bundle did ([`Conn::bundle_transact`]).
#[derive(Clone, Debug)]
pub struct Bundled {
    /// The errors the switch sent, in arrival order.
    pub refusals: Vec<Refusal>,
    /// Whether the switch committed the bundle (then every message took effect; when
    /// not, none did).
    pub committed: bool,
}

/// An open, version-negotiated connection.
pub struct Conn {
    stream: Box<dyn Stream>,
    framer: Framer,
    /// The negotiated version (1 or 4).
    pub version: u8,
    /// The SWITCH argument as given (for messages).
    pub name: String,
    xids: Xids,
    limits: Limits,
    buf: Vec<u8>,
    /// Whether [`Conn::recv`] also returns the echo requests it answers (`monitor`
    /// prints them, as ovs-ofctl does).
    pub pass_echoes: bool,
}

/// How many requests [`Conn::transact_noreply`] sends between two looks at what the
/// switch sent back (so a switch blocked on writing errors cannot block us).
const DRAIN_EVERY: usize = 64;

impl Conn {
    /// Connects to `target` and negotiates the version.
    pub fn open(
        target: &Target,
        name: &str,
        versions: Versions,
        xids: Xids,
        limits: Limits,
    ) -> Result<Conn, CtlError> {
        let connect_timeout = remaining(limits.deadline)
            .map_or(limits.idle, |r| r.min(limits.idle))
            .max(Duration::from_millis(1));
        let stream = target.connect(connect_timeout).map_err(|e| {
            let to = match target {
                Target::Unix(p) if p.to_string_lossy() != name => {
                    format!(" to {}", p.display())
                }
                _ => String::new(),
            };
            CtlError::fatal(format!("{name}: failed to connect{to} ({})", io_text(&e)))
        })?;
        Conn::handshake(stream, name, versions, xids, limits)
    }

    /// Says hello over an already connected stream and negotiates the version.
    pub fn handshake(
        stream: Box<dyn Stream>,
        name: &str,
        versions: Versions,
        xids: Xids,
        limits: Limits,
    ) -> Result<Conn, CtlError> {
        let mut c = Conn {
            stream,
            framer: Framer::new(),
            version: versions.max(),
            name: name.to_string(),
            xids,
            limits,
            buf: vec![0; 64 * 1024],
            pass_echoes: false,
        };
        let xid = c.next_xid();
        let hello = versions.hello(xid);
        c.write_frame(&hello)?;
        let first = c.recv_raw()?;
        let frame = first
            .frame
            .map_err(|e| CtlError::fatal(format!("{name}: bad hello from the switch: {e}")))?;
        match frame.msg_type() {
            openflow::header::OFPT_HELLO => {}
            openflow::header::OFPT_ERROR => {
                return Err(CtlError::reported(openflow::text::print::frame(&frame, 2)))
            }
            t => {
                return Err(CtlError::fatal(format!(
                    "{name}: the switch sent message type {t} instead of a hello"
                )))
            }
        }
        c.version =
            versions.negotiate(&frame).map_err(|e| CtlError::fatal(format!("{name}: {e}")))?;
        Ok(c)
    }

    /// The next xid of the run.
    pub fn next_xid(&self) -> u32 {
        let x = self.xids.get();
        self.xids.set(x.wrapping_add(1));
        x
    }

    /// Wraps a message of the negotiated version in a frame with a fresh xid.
    pub fn frame(&self, message: Message) -> Frame {
        Frame { version: self.version, xid: self.next_xid(), message }
    }

    /// Sends one frame.
    pub fn write_frame(&mut self, f: &Frame) -> Result<(), CtlError> {
        let bytes = f
            .encode()
            .map_err(|e| CtlError::fatal(format!("{}: cannot encode request: {e}", self.name)))?;
        self.write_bytes(&bytes)
    }

    fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), CtlError> {
        let t = self.wait_limit()?;
        self.stream
            .set_write_timeout(Some(t))
            .and_then(|_| io::Write::write_all(&mut self.stream, bytes))
            .map_err(|e| self.io_error("send failed", e))
    }

    fn io_error(&self, what: &str, e: io::Error) -> CtlError {
        if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) {
            CtlError::Timeout(format!("{}: timed out waiting for the switch", self.name))
        } else {
            CtlError::fatal(format!("{}: {what} ({})", self.name, io_text(&e)))
        }
    }

    /// How long the next blocking call may take.
    fn wait_limit(&self) -> Result<Duration, CtlError> {
        match remaining(self.limits.deadline) {
            Some(r) if r.is_zero() => {
                Err(CtlError::Timeout(format!("{}: timed out waiting for the switch", self.name)))
            }
            Some(r) => Ok(r.min(self.limits.idle)),
            None => Ok(self.limits.idle),
        }
    }

    /// Reads one whole message (answering nothing).
    fn recv_raw(&mut self) -> Result<Received, CtlError> {
        loop {
            match self.framer.next_message() {
                Ok(Some(m)) => {
                    let bytes = m.to_vec();
                    let frame = Frame::decode(&bytes);
                    return Ok(Received { bytes, frame });
                }
                Ok(None) => {}
                Err(e) => {
                    return Err(CtlError::fatal(format!(
                        "{}: unreadable stream from the switch: {e}",
                        self.name
                    )))
                }
            }
            let t = self.wait_limit()?;
            self.stream
                .set_read_timeout(Some(t))
                .map_err(|e| self.io_error("socket setup failed", e))?;
            let n = match self.stream.read(&mut self.buf) {
                Ok(0) => {
                    return Err(CtlError::fatal(format!(
                        "{}: connection closed by the switch",
                        self.name
                    )))
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.io_error("receive failed", e)),
            };
            self.framer.push(&self.buf[..n]);
        }
    }

    /// Reads the next message that is not an echo request (echo requests are
    /// answered on the way, and returned too when `pass_echoes` is set).
    pub fn recv(&mut self) -> Result<Received, CtlError> {
        loop {
            let r = self.recv_raw()?;
            if self.answer_echo(&r)? && !self.pass_echoes {
                continue;
            }
            return Ok(r);
        }
    }

    /// Like [`Conn::recv`], but waits with no idle bound (for `monitor`): only the
    /// `--timeout` deadline ends the wait, with `Ok(None)`.
    pub fn recv_until_deadline(&mut self) -> Result<Option<Received>, CtlError> {
        let saved = self.limits.idle;
        self.limits.idle = Duration::from_secs(3600);
        let r = loop {
            match self.recv() {
                Err(e) if self.deadline_passed() && e.is_timeout() => break Ok(None),
                Err(e) if e.is_timeout() && self.limits.deadline.is_none() => continue,
                Err(e) => break Err(e),
                Ok(m) => break Ok(Some(m)),
            }
        };
        self.limits.idle = saved;
        r
    }

    fn deadline_passed(&self) -> bool {
        self.limits.deadline.is_some_and(|d| Instant::now() >= d)
    }

    fn answer_echo(&mut self, r: &Received) -> Result<bool, CtlError> {
        let Ok(h) = Header::peek(&r.bytes) else {
            return Ok(false);
        };
        let echo_req = openflow::header::t13::ECHO_REQUEST;
        if h.msg_type != echo_req {
            return Ok(false);
        }
        let mut reply = r.bytes.clone();
        if let Some(t) = reply.get_mut(1) {
            *t = openflow::header::t13::ECHO_REPLY;
        }
        self.write_bytes(&reply)?;
        Ok(true)
    }

    /// Sends `message` and gathers its replies (see [`Gather`]). A switch error is
    /// returned as [`CtlError::Switch`].
    pub fn dump(&mut self, message: Message) -> Result<Vec<Frame>, CtlError> {
        let f = self.frame(message);
        self.dump_frame(f)
    }

    /// [`Conn::dump`] for a frame already built.
    pub fn dump_frame(&mut self, f: Frame) -> Result<Vec<Frame>, CtlError> {
        let mut out = Vec::new();
        self.dump_each(f, |fr| {
            out.push(fr.clone());
            Ok(())
        })?;
        Ok(out)
    }

    /// Sends `f` and hands each reply part to `each` as it arrives.
    pub fn dump_each(
        &mut self,
        f: Frame,
        mut each: impl FnMut(&Frame) -> Result<(), CtlError>,
    ) -> Result<(), CtlError> {
        let g = Gather { xid: f.xid, reply_type: reply_type_for(f.version, f.msg_type()) };
        self.write_frame(&f)?;
        loop {
            let r = self.recv()?;
            let frame = match &r.frame {
                Ok(fr) => fr,
                Err(e) => {
                    if Header::peek(&r.bytes).is_ok_and(|h| h.xid == g.xid) {
                        return Err(CtlError::fatal(format!(
                            "{}: undecodable reply: {e}\n{}",
                            self.name,
                            openflow::text::print::raw(&r.bytes, 1)
                        )));
                    }
                    continue;
                }
            };
            match g.step(frame) {
                Step::Skip => {}
                Step::More => each(frame)?,
                Step::Done => return each(frame),
                Step::Error => return Err(CtlError::Switch(Box::new(r))),
                Step::Unexpected => {
                    return Err(CtlError::fatal(format!(
                        "received bad reply: {}",
                        openflow::text::print::frame(frame, 1)
                    )))
                }
            }
        }
    }

    /// Sends `message` and returns its one reply.
    pub fn transact(&mut self, message: Message) -> Result<Frame, CtlError> {
        let mut v = self.dump(message)?;
        v.pop().ok_or_else(|| CtlError::fatal(format!("{}: empty reply", self.name)))
    }

    /// Sends every message, then a barrier; returns the refusals that arrived before
    /// the barrier reply, in arrival order.
    pub fn transact_noreply(&mut self, messages: Vec<Message>) -> Result<Vec<Refusal>, CtlError> {
        let frames: Vec<Frame> = messages.into_iter().map(|m| self.frame(m)).collect();
        self.transact_frames_noreply(&frames)
    }

    /// [`Conn::transact_noreply`] for frames already built (their xids are used).
    pub fn transact_frames_noreply(&mut self, frames: &[Frame]) -> Result<Vec<Refusal>, CtlError> {
        let mut refusals = Vec::new();
        for (i, f) in frames.iter().enumerate() {
            self.write_frame(f)?;
            if (i + 1) % DRAIN_EVERY == 0 {
                for r in self.drain_available()? {
                    self.note_refusal(r, |x| frames.iter().position(|f| f.xid == x), &mut refusals);
                }
            }
        }
        self.barrier_noting(|x| frames.iter().position(|f| f.xid == x), &mut refusals)?;
        Ok(refusals)
    }

    /// [`Conn::transact_noreply`] for messages made as they are sent (a long file read
    /// line by line): what is held at once does not grow with their number. The first
    /// message that cannot be made stops the run (what was sent stays sent).
    pub fn transact_iter_noreply(
        &mut self,
        messages: impl Iterator<Item = Result<Message, CtlError>>,
    ) -> Result<Vec<Refusal>, CtlError> {
        // Frames take consecutive xids from here: a refusal's xid gives its index.
        let first = self.xids.get();
        let mut sent = 0usize;
        let mut refusals = Vec::new();
        for m in messages {
            let f = self.frame(m?);
            self.write_frame(&f)?;
            sent += 1;
            if sent.is_multiple_of(DRAIN_EVERY) {
                for r in self.drain_available()? {
                    let index = |x: u32| Some(x.wrapping_sub(first) as usize).filter(|i| *i < sent);
                    self.note_refusal(r, index, &mut refusals);
                }
            }
        }
        let index = |x: u32| Some(x.wrapping_sub(first) as usize).filter(|i| *i < sent);
        self.barrier_noting(index, &mut refusals)?;
        Ok(refusals)
    }

    /// Sends a barrier and waits for its reply, noting the errors that come first.
    fn barrier_noting(
        &mut self,
        index: impl Fn(u32) -> Option<usize>,
        refusals: &mut Vec<Refusal>,
    ) -> Result<(), CtlError> {
        let barrier = if self.version == OFP10_VERSION {
            Message::V10(M10::BarrierRequest)
        } else {
            Message::V13(M13::BarrierRequest)
        };
        let b = self.frame(barrier);
        self.write_frame(&b)?;
        loop {
            let r = self.recv()?;
            if let Ok(f) = &r.frame {
                if f.xid == b.xid && f.msg_type() == reply_type_for(b.version, b.msg_type()) {
                    return Ok(());
                }
            }
            self.note_refusal(r, &index, refusals);
        }
    }

    /// Sends every message inside one bundle ([`crate::bundle`]): open it (waiting for
    /// the reply), add each message, a barrier, then commit it when the switch refused
    /// no add, or else discard it. Returns the refusals in arrival order — an add's names
    /// its message's index, as does the error a commit reports for the message that
    /// failed (it carries that message's xid) — and whether the bundle was committed.
    /// The connection must speak OpenFlow 1.3 or later.
    pub fn bundle_transact(&mut self, messages: Vec<Message>) -> Result<Bundled, CtlError> {
        let mut refusals = Vec::new();
        if !self.bundle_control(BundleCtrlType::OpenRequest, &[], &mut refusals)? {
            return Ok(Bundled { refusals, committed: false });
        }
        let mut frames = Vec::with_capacity(messages.len());
        for m in messages {
            let xid = self.next_xid();
            let f = bundle::add(self.version, xid, m)
                .map_err(|e| CtlError::fatal(format!("{}: {e}", self.name)))?;
            frames.push(f);
        }
        refusals.extend(self.transact_frames_noreply(&frames)?);
        let committed = if refusals.is_empty() {
            self.bundle_control(BundleCtrlType::CommitRequest, &frames, &mut refusals)?
        } else {
            self.bundle_control(BundleCtrlType::DiscardRequest, &frames, &mut refusals)?;
            false
        };
        Ok(Bundled { refusals, committed })
    }

    /// Sends a bundle control request of `ctrl_type` and waits for its answer: true for
    /// the matching reply, false for an error (added to `refusals`). Errors about other
    /// requests that come first are added too, with their index in `frames`.
    fn bundle_control(
        &mut self,
        ctrl_type: BundleCtrlType,
        frames: &[Frame],
        refusals: &mut Vec<Refusal>,
    ) -> Result<bool, CtlError> {
        let req = self.frame(bundle::control(self.version, ctrl_type));
        self.write_frame(&req)?;
        loop {
            let r = self.recv()?;
            let Ok(f) = &r.frame else {
                if Header::peek(&r.bytes).is_ok_and(|h| h.xid == req.xid) {
                    return Err(CtlError::fatal(format!(
                        "{}: undecodable reply: {}",
                        self.name,
                        openflow::text::print::raw(&r.bytes, 1)
                    )));
                }
                self.note_refusal(r, |x| frames.iter().position(|f| f.xid == x), refusals);
                continue;
            };
            if f.xid != req.xid {
                self.note_refusal(r, |x| frames.iter().position(|f| f.xid == x), refusals);
                continue;
            }
            if f.msg_type() == openflow::header::OFPT_ERROR {
                refusals.push(Refusal { index: None, error: r });
                return Ok(false);
            }
            match bundle::control_of(f) {
                Some(c) if c.ctrl_type == bundle::reply_to(ctrl_type) => return Ok(true),
                _ => {
                    return Err(CtlError::fatal(format!(
                        "received bad reply: {}",
                        openflow::text::print::frame(f, 1)
                    )))
                }
            }
        }
    }

    /// Notes `r` if it is an error; `index` gives the index of the message with an xid.
    fn note_refusal(
        &self,
        r: Received,
        index: impl Fn(u32) -> Option<usize>,
        out: &mut Vec<Refusal>,
    ) {
        let Ok(h) = Header::peek(&r.bytes) else {
            return;
        };
        if h.msg_type != openflow::header::OFPT_ERROR {
            return;
        }
        out.push(Refusal { index: index(h.xid), error: r });
    }

    /// Reads whatever the switch has already sent, without waiting.
    fn drain_available(&mut self) -> Result<Vec<Received>, CtlError> {
        let mut got = Vec::new();
        self.stream.set_nonblocking(true).map_err(|e| self.io_error("socket setup failed", e))?;
        let res = loop {
            match self.stream.read(&mut self.buf) {
                Ok(0) => {
                    break Err(CtlError::fatal(format!(
                        "{}: connection closed by the switch",
                        self.name
                    )))
                }
                Ok(n) => self.framer.push(&self.buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(self.io_error("receive failed", e)),
            }
        };
        let back =
            self.stream.set_nonblocking(false).map_err(|e| self.io_error("socket setup failed", e));
        res?;
        back?;
        loop {
            match self.framer.next_message() {
                Ok(Some(m)) => {
                    let bytes = m.to_vec();
                    let frame = Frame::decode(&bytes);
                    let r = Received { bytes, frame };
                    if !self.answer_echo(&r)? {
                        got.push(r);
                    }
                }
                Ok(None) => return Ok(got),
                Err(e) => {
                    return Err(CtlError::fatal(format!(
                        "{}: unreadable stream from the switch: {e}",
                        self.name
                    )))
                }
            }
        }
    }
}

/// An I/O error's text without Rust's ` (os error N)` suffix.
fn io_text(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error ") {
        Some(at) => s[..at].to_string(),
        None => s,
    }
}

fn remaining(deadline: Option<Instant>) -> Option<Duration> {
    deadline.map(|d| d.saturating_duration_since(Instant::now()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use openflow::v13::multipart::{
        AggregateStats, MultipartReply, MultipartReplyBody, OFPMPF_REPLY_MORE,
    };

    fn mp(xid: u32, flags: u16) -> Frame {
        Frame::v13(
            xid,
            M13::MultipartReply(MultipartReply { flags, body: MultipartReplyBody::Flow(vec![]) }),
        )
    }

    #[test]
    fn gathers_multipart_parts_until_the_last() {
        let g = Gather { xid: 7, reply_type: t13::MULTIPART_REPLY };
        assert_eq!(g.step(&mp(7, OFPMPF_REPLY_MORE)), Step::More);
        assert_eq!(g.step(&mp(6, 0)), Step::Skip);
        assert_eq!(g.step(&mp(7, 0)), Step::Done);
        let err = Frame::v13(
            7,
            M13::Error(openflow::v13::ErrorMsg::Standard {
                kind: openflow::ErrorKind::BAD_REQUEST_BAD_MULTIPART,
                data: vec![],
            }),
        );
        assert_eq!(g.step(&err), Step::Error);
        assert_eq!(g.step(&Frame::v13(7, M13::BarrierReply)), Step::Unexpected);
        let totals = AggregateStats { packet_count: 1, byte_count: 2, flow_count: 3 };
        let body = MultipartReplyBody::Aggregate(totals);
        let agg = Frame::v13(7, M13::MultipartReply(MultipartReply { flags: 0, body }));
        assert_eq!(g.step(&agg), Step::Done);
    }

    #[test]
    fn gathers_v10_stats_parts() {
        use openflow::v10::stats::{StatsReply, StatsReplyBody, OFPSF_REPLY_MORE};
        let g = Gather { xid: 3, reply_type: t10::STATS_REPLY };
        let part = |flags| {
            Frame::v10(3, M10::StatsReply(StatsReply { flags, body: StatsReplyBody::Flow(vec![]) }))
        };
        assert_eq!(g.step(&part(OFPSF_REPLY_MORE)), Step::More);
        assert_eq!(g.step(&part(0)), Step::Done);
    }

    /// A scripted peer on the other end of a socket pair: it reads the client's
    /// hello, then writes `script` in small pieces (so headers straddle reads), then
    /// reads until the client hangs up and returns everything it read.
    fn peer(script: Vec<u8>) -> (std::os::unix::net::UnixStream, std::thread::JoinHandle<Vec<u8>>) {
        use std::io::Write;
        let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
        b.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let h = std::thread::spawn(move || {
            let mut got = Vec::new();
            let mut buf = [0u8; 512];
            for chunk in script.chunks(5) {
                if b.write_all(chunk).is_err() {
                    break;
                }
            }
            for _ in 0..1000 {
                match b.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                }
            }
            got
        });
        (a, h)
    }

    fn limits() -> Limits {
        Limits {
            deadline: Some(Instant::now() + Duration::from_secs(10)),
            idle: Duration::from_secs(10),
        }
    }

    fn bytes(frames: &[Frame]) -> Vec<u8> {
        frames.iter().flat_map(|f| f.encode().unwrap()).collect()
    }

    /// A connection offering every version to a peer that plays `script`, handshaken,
    /// and the peer's thread (which returns what it received).
    fn connected(script: Vec<u8>) -> (Conn, std::thread::JoinHandle<Vec<u8>>) {
        let (a, h) = peer(script);
        let xids = Xids::new(Cell::new(1));
        let c = Conn::handshake(Box::new(a), "pair", Versions::default(), xids, limits()).unwrap();
        (c, h)
    }

    #[test]
    fn conn_negotiates_gathers_and_answers_echoes() {
        use openflow::v13::Hello;
        let script = bytes(&[
            Frame::v13(1, M13::Hello(Hello::with_versions(&[1, 4]))),
            mp(2, OFPMPF_REPLY_MORE),
            Frame::v13(9, M13::EchoRequest(vec![1, 2, 3])),
            Frame::v13(5, M13::BarrierReply),
            mp(2, 0),
        ]);
        let (mut c, h) = connected(script);
        assert_eq!(c.version, 4);
        let parts = c
            .dump(Message::V13(M13::MultipartRequest(openflow::v13::multipart::MultipartRequest {
                flags: 0,
                body: openflow::v13::multipart::MultipartRequestBody::Flow(Default::default()),
            })))
            .unwrap();
        assert_eq!(parts.len(), 2, "both parts, nothing else");
        assert!(parts.iter().all(|p| p.xid == 2));
        drop(c);
        let sent = h.join().unwrap();
        let mut fr = Framer::new();
        fr.push(&sent);
        let mut seen = Vec::new();
        while let Ok(Some(m)) = fr.next_message() {
            seen.push(Frame::decode(m).unwrap());
        }
        assert!(matches!(seen[0].message, Message::V13(M13::Hello(_))));
        assert_eq!(seen[0].xid, 1);
        assert!(matches!(seen[1].message, Message::V13(M13::MultipartRequest(_))));
        assert_eq!(seen[1].xid, 2);
        assert_eq!(seen[2], Frame::v13(9, M13::EchoReply(vec![1, 2, 3])));
    }

    #[test]
    fn conn_collects_refusals_until_the_barrier() {
        use openflow::v13::Hello;
        let err = |xid| {
            Frame::v13(
                xid,
                M13::Error(openflow::v13::ErrorMsg::Standard {
                    kind: openflow::ErrorKind::BAD_REQUEST_BAD_LEN,
                    data: vec![],
                }),
            )
        };
        // Hello (1), three requests (2, 3, 4), barrier (5): 3 fails, 2 and 4 do not.
        let script = bytes(&[
            Frame::v13(1, M13::Hello(Hello::with_versions(&[4]))),
            err(3),
            Frame::v13(5, M13::BarrierReply),
        ]);
        let (mut c, h) = connected(script);
        let refusals = c
            .transact_noreply(vec![
                Message::V13(M13::FeaturesRequest),
                Message::V13(M13::GetConfigRequest),
                Message::V13(M13::GetAsyncRequest),
            ])
            .unwrap();
        assert_eq!(refusals.len(), 1);
        assert_eq!(refusals[0].index, Some(1));
        drop(c);
        h.join().unwrap();
    }

    #[test]
    fn conn_reports_a_failed_negotiation_and_a_silent_switch() {
        let script = bytes(&[Frame::v10(1, M10::Hello(vec![]))]);
        let (a, h) = peer(script);
        let only13 = Versions::parse("OpenFlow13").unwrap();
        let e = Conn::handshake(Box::new(a), "pair", only13, Xids::new(Cell::new(1)), limits())
            .err()
            .unwrap();
        assert!(matches!(e, CtlError::Fatal(ref m) if m.contains("version negotiation failed")));
        h.join().unwrap();

        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        let short = Limits { deadline: None, idle: Duration::from_millis(50) };
        let e = Conn::handshake(
            Box::new(a),
            "pair",
            Versions::default(),
            Xids::new(Cell::new(1)),
            short,
        )
        .err()
        .unwrap();
        assert!(e.is_timeout(), "{e:?}");
    }

    /// The frames a [`peer`] read, decoded.
    fn sent(bytes: &[u8]) -> Vec<Frame> {
        let mut fr = Framer::new();
        fr.push(bytes);
        let mut seen = Vec::new();
        while let Ok(Some(m)) = fr.next_message() {
            seen.push(Frame::decode(m).unwrap());
        }
        seen
    }

    /// A bundle control reply of `ctrl_type` in `version`'s form.
    fn ctrl(version: u8, xid: u32, ctrl_type: BundleCtrlType) -> Frame {
        Frame { version, xid, message: bundle::control(version, ctrl_type) }
    }

    /// Each frame as `xid:what`: a bundle control by type, a bundle add with its inner
    /// message's type and xid, or the message's name.
    fn sequence(frames: &[Frame]) -> Vec<String> {
        use openflow::v13::bundle::BundleAdd;
        let name = |m: &Message| match m {
            Message::V13(m) => m.name(),
            Message::V10(m) => m.name(),
        };
        frames
            .iter()
            .map(|f| {
                let add = match &f.message {
                    Message::V13(M13::BundleAdd(a)) => Some(a.clone()),
                    Message::V13(M13::Experimenter(e)) => {
                        BundleAdd::from_experimenter(e).map(Result::unwrap)
                    }
                    _ => None,
                };
                let what = if let Some(c) = bundle::control_of(f) {
                    format!("{:?}", c.ctrl_type)
                } else if let Some(a) = add {
                    assert_eq!((a.bundle_id, a.flags), (bundle::BUNDLE_ID, bundle::FLAGS));
                    let inner = a.decode_message().unwrap();
                    assert_eq!(inner.version, f.version);
                    format!("add({}:{})", inner.xid, name(&inner.message))
                } else {
                    name(&f.message).to_string()
                };
                format!("{}:{what}", f.xid)
            })
            .collect()
    }

    fn two_flow_mods() -> Vec<Message> {
        ["priority=1,actions=drop", "priority=2,ip,actions=output:1"]
            .iter()
            .map(|t| {
                let fm =
                    openflow::text::parse_flow_mod(t, openflow::v13::flow_mod::FlowModCommand::Add)
                        .unwrap();
                Message::V13(M13::FlowMod(fm))
            })
            .collect()
    }

    fn bundle_error(version: u8, xid: u32, kind: openflow::ErrorKind) -> Vec<u8> {
        let e = openflow::OfpError::new(kind, "test");
        let about = Frame { version, xid, message: Message::V13(M13::BarrierRequest) };
        openflow::error_reply(version, &e, &about.encode().unwrap())
    }

    #[test]
    fn bundle_14_opens_adds_syncs_and_commits() {
        use openflow::v13::Hello;
        use BundleCtrlType as T;
        // Hello (1), open (2), two adds (3, 4), barrier (5), commit (6).
        let script = bytes(&[
            Frame::v14(1, M13::Hello(Hello::with_versions(&[1, 4, 5]))),
            ctrl(5, 2, T::OpenReply),
            Frame::v14(5, M13::BarrierReply),
            ctrl(5, 6, T::CommitReply),
        ]);
        let (mut c, h) = connected(script);
        assert_eq!(c.version, 5);
        let b = c.bundle_transact(two_flow_mods()).unwrap();
        assert!(b.committed);
        assert!(b.refusals.is_empty());
        drop(c);
        let seen = sent(&h.join().unwrap());
        assert!(seen.iter().all(|f| f.version == 5));
        assert!(matches!(&seen[1].message, Message::V13(M13::BundleControl(_))));
        assert!(matches!(&seen[2].message, Message::V13(M13::BundleAdd(_))));
        assert_eq!(
            sequence(&seen),
            [
                "1:OFPT_HELLO",
                "2:OpenRequest",
                "3:add(3:OFPT_FLOW_MOD)",
                "4:add(4:OFPT_FLOW_MOD)",
                "5:OFPT_BARRIER_REQUEST",
                "6:CommitRequest"
            ]
        );
    }

    #[test]
    fn bundle_13_in_onf_form_discards_when_an_add_is_refused() {
        use openflow::v13::Hello;
        use BundleCtrlType as T;
        let script: Vec<u8> = [
            bytes(&[
                Frame::v13(1, M13::Hello(Hello::with_versions(&[1, 4]))),
                ctrl(4, 2, T::OpenReply),
            ]),
            bundle_error(4, 4, openflow::ErrorKind::BUNDLE_FAILED_MSG_UNSUP),
            bytes(&[Frame::v13(5, M13::BarrierReply), ctrl(4, 6, T::DiscardReply)]),
        ]
        .concat();
        let (mut c, h) = connected(script);
        assert_eq!(c.version, 4);
        let b = c.bundle_transact(two_flow_mods()).unwrap();
        assert!(!b.committed);
        assert_eq!(b.refusals.len(), 1);
        assert_eq!(b.refusals[0].index, Some(1), "the second add's message");
        drop(c);
        let seen = sent(&h.join().unwrap());
        assert!(seen[1..].iter().all(|f| matches!(
            &f.message,
            Message::V13(M13::Experimenter(_) | M13::BarrierRequest)
        )));
        assert_eq!(
            sequence(&seen),
            [
                "1:OFPT_HELLO",
                "2:OpenRequest",
                "3:add(3:OFPT_FLOW_MOD)",
                "4:add(4:OFPT_FLOW_MOD)",
                "5:OFPT_BARRIER_REQUEST",
                "6:DiscardRequest"
            ]
        );
    }

    #[test]
    fn bundle_commit_failure_names_the_message_and_commits_nothing() {
        use openflow::v13::Hello;
        use BundleCtrlType as T;
        // The commit fails on the first message: its own error (its xid, 3), then
        // OFPBFC_MSG_FAILED for the commit (6).
        let script: Vec<u8> = [
            bytes(&[
                Frame::v14(1, M13::Hello(Hello::with_versions(&[5]))),
                ctrl(5, 2, T::OpenReply),
                Frame::v14(5, M13::BarrierReply),
            ]),
            bundle_error(5, 3, openflow::ErrorKind::BAD_INSTRUCTION_BAD_TABLE_ID),
            bundle_error(5, 6, openflow::ErrorKind::BUNDLE_FAILED_MSG_FAILED),
        ]
        .concat();
        let (mut c, h) = connected(script);
        let b = c.bundle_transact(two_flow_mods()).unwrap();
        assert!(!b.committed);
        let idx: Vec<Option<usize>> = b.refusals.iter().map(|r| r.index).collect();
        assert_eq!(idx, [Some(0), None]);
        drop(c);
        let seen = sent(&h.join().unwrap());
        assert_eq!(sequence(&seen).last().unwrap(), "6:CommitRequest");
    }

    #[test]
    fn bundle_open_refused_sends_nothing_more() {
        use openflow::v13::Hello;
        let script: Vec<u8> = [
            bytes(&[Frame::v14(1, M13::Hello(Hello::with_versions(&[5])))]),
            bundle_error(5, 2, openflow::ErrorKind::BUNDLE_FAILED_OUT_OF_BUNDLES),
        ]
        .concat();
        let (mut c, h) = connected(script);
        let b = c.bundle_transact(two_flow_mods()).unwrap();
        assert!(!b.committed);
        assert_eq!(b.refusals.len(), 1);
        assert_eq!(b.refusals[0].index, None);
        drop(c);
        assert_eq!(sequence(&sent(&h.join().unwrap())), ["1:OFPT_HELLO", "2:OpenRequest"]);
    }

    #[test]
    fn reply_types() {
        assert_eq!(reply_type_for(4, t13::FEATURES_REQUEST), t13::FEATURES_REPLY);
        assert_eq!(reply_type_for(1, t10::STATS_REQUEST), t10::STATS_REPLY);
        assert_eq!(reply_type_for(1, t10::BARRIER_REQUEST), t10::BARRIER_REPLY);
        assert_eq!(reply_type_for(4, t13::BARRIER_REQUEST), t13::BARRIER_REPLY);
    }
}
