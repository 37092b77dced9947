//! Bundles (OpenFlow 1.4.1 §6.8; the same messages as the ONF extension in 1.3): a
//! connection opens a bundle, adds flow, group and meter mods to it, and commits it. A
//! commit applies every message in order, all or none: the changes go to the tables and
//! the unpublished datapath inside one transaction ([`FlowAgent::begin`], the group and
//! meter tables saved beside it), and either all are kept and published once, or the
//! first failure takes every change back ([`FlowAgent::rollback`]) and is reported with
//! the failing message's own error and then `OFPBFC_MSG_FAILED`. So `OFPBF_ATOMIC` and
//! `OFPBF_ORDERED` are both always honoured.
//!
//! Bundles belong to their connection and go with it. A message is checked when added
//! (it must decode, validate, be of the connection's version, carry the add's xid and
//! be a flow, group or meter mod without a buffered packet); once an add is refused, the
//! bundle's commit fails and applies nothing. A bundle that sees no control or add
//! message for [`BUNDLE_IDLE_NS`] is discarded with `OFPBFC_TIMEOUT`. At most
//! [`MAX_BUNDLES`] bundles per connection and [`MAX_BUNDLE_MSGS`] messages per bundle
//! are held.
//!
//! [`FlowAgent::begin`]: super::FlowAgent::begin
//! [`FlowAgent::rollback`]: super::FlowAgent::rollback

use std::collections::BTreeMap;

use openflow::error::ONF_EXPERIMENTER_ID;
use openflow::v13::bundle::{BundleAdd, BundleControl, BundleCtrlType};
use openflow::v13::flow_mod::OFP_NO_BUFFER;
use openflow::{v13, ErrorKind, Frame, Message, OfpError};

use super::{Agent, Out, SessionId};

/// Bundles one connection may hold open at once.
pub const MAX_BUNDLES: usize = 64;
/// Messages one bundle may hold.
pub const MAX_BUNDLE_MSGS: usize = 1 << 20;
/// How long a bundle may go without a control or add message before it is discarded.
pub const BUNDLE_IDLE_NS: u64 = 10_000_000_000;

/// One bundle of a connection.
#[derive(Debug)]
pub(super) struct Bundle {
    flags: u16,
    closed: bool,
    /// The messages added, each with its first bytes (for an error about it).
    msgs: Vec<(v13::Message, Vec<u8>)>,
    /// Which add was refused first, if one was: the bundle can then only be discarded (a
    /// commit applies nothing and fails with `OFPBFC_MSG_FAILED`), so that a controller
    /// that sent its commit behind the adds never gets half of what it meant as a whole.
    refused: Option<String>,
    last_used: u64,
}

/// A connection's bundles by id.
pub(super) type Bundles = BTreeMap<u32, Bundle>;

/// The earliest time one of `bundles` times out.
pub(super) fn next_expiry(bundles: &Bundles) -> Option<u64> {
    bundles.values().map(|b| b.last_used.saturating_add(BUNDLE_IDLE_NS)).min()
}

impl Agent {
    /// A bundle control request of connection `id` (version `version`); its replies and
    /// errors in order. `onf` says the request came as the 1.3 ONF extension, so the
    /// reply goes back the same way.
    pub(super) fn bundle_control(
        &mut self,
        id: SessionId,
        ctrl: &BundleControl,
        onf: bool,
        now: u64,
    ) -> Vec<Out> {
        match self.bundle_control_result(id, ctrl, now) {
            Ok(Some(reply_type)) => {
                let reply = BundleControl {
                    bundle_id: ctrl.bundle_id,
                    ctrl_type: reply_type,
                    flags: ctrl.flags,
                    properties: Vec::new(),
                };
                let m = if onf {
                    v13::Message::Experimenter(reply.to_experimenter())
                } else {
                    v13::Message::BundleControl(reply)
                };
                vec![Out::Msg(m)]
            }
            Ok(None) => vec![],
            Err(outs) => outs,
        }
    }

    fn bundle_control_result(
        &mut self,
        id: SessionId,
        ctrl: &BundleControl,
        now: u64,
    ) -> Result<Option<BundleCtrlType>, Vec<Out>> {
        use BundleCtrlType as T;
        let err = |kind, detail: String| vec![Out::Err(OfpError::new(kind, detail))];
        let bid = ctrl.bundle_id;
        let Some(s) = self.sessions.get_mut(&id) else { return Ok(None) };
        let known = s.bundles.get(&bid).map(|b| (b.flags, b.closed));
        if let (Some((flags, _)), T::CloseRequest | T::CommitRequest) = (known, ctrl.ctrl_type) {
            if flags != ctrl.flags {
                return Err(err(
                    ErrorKind::BUNDLE_FAILED_BAD_FLAGS,
                    format!("bundle {bid} was opened with flags {flags:#x}, not {:#x}", ctrl.flags),
                ));
            }
        }
        let missing = || err(ErrorKind::BUNDLE_FAILED_BAD_ID, format!("no bundle {bid} is open"));
        match ctrl.ctrl_type {
            T::OpenRequest => {
                if known.is_some() {
                    return Err(err(
                        ErrorKind::BUNDLE_FAILED_BUNDLE_EXIST,
                        format!("bundle {bid} is already open"),
                    ));
                }
                if s.bundles.len() >= MAX_BUNDLES {
                    return Err(err(
                        ErrorKind::BUNDLE_FAILED_OUT_OF_BUNDLES,
                        format!("a connection may hold {MAX_BUNDLES} bundles"),
                    ));
                }
                s.bundles.insert(bid, Bundle::new(ctrl.flags, now));
                Ok(Some(T::OpenReply))
            }
            T::CloseRequest => match s.bundles.get_mut(&bid) {
                None => Err(missing()),
                Some(b) if b.closed => Err(err(
                    ErrorKind::BUNDLE_FAILED_BUNDLE_CLOSED,
                    format!("bundle {bid} is already closed"),
                )),
                Some(b) => {
                    b.closed = true;
                    b.last_used = now;
                    Ok(Some(T::CloseReply))
                }
            },
            T::DiscardRequest => match s.bundles.remove(&bid) {
                None => Err(missing()),
                Some(_) => Ok(Some(T::DiscardReply)),
            },
            T::CommitRequest => {
                let slave = s.is_slave();
                let Some(b) = s.bundles.remove(&bid) else { return Err(missing()) };
                if slave {
                    return Err(err(
                        ErrorKind::BAD_REQUEST_IS_SLAVE,
                        "a slave controller may not change the switch".to_string(),
                    ));
                }
                self.commit(id, b, now)?;
                Ok(Some(T::CommitReply))
            }
            other => Err(err(
                ErrorKind::BUNDLE_FAILED_BAD_TYPE,
                format!("bundle control type {} is not a request", other.to_u16()),
            )),
        }
    }

    /// A bundle add of connection `id`, whose wire version is `version` and whose header
    /// carried `xid`: the message is checked and kept (nothing is sent), or refused.
    pub(super) fn bundle_add(
        &mut self,
        id: SessionId,
        add: &BundleAdd,
        version: u8,
        xid: u32,
        now: u64,
    ) -> Result<(), OfpError> {
        let bid = add.bundle_id;
        let Some(s) = self.sessions.get_mut(&id) else { return Ok(()) };
        if s.is_slave() {
            return Err(OfpError::new(
                ErrorKind::BAD_REQUEST_IS_SLAVE,
                "a slave controller may not change the switch",
            ));
        }
        if !s.bundles.contains_key(&bid) {
            if s.bundles.len() >= MAX_BUNDLES {
                return Err(OfpError::new(
                    ErrorKind::BUNDLE_FAILED_OUT_OF_BUNDLES,
                    format!("a connection may hold {MAX_BUNDLES} bundles"),
                ));
            }
            s.bundles.insert(bid, Bundle::new(add.flags, now));
        }
        let Some(b) = s.bundles.get_mut(&bid) else { return Ok(()) };
        b.last_used = now;
        match b.check_add(bid, add, version, xid) {
            Ok(msg) => {
                let head = &add.message[..add.message.len().min(openflow::error::ERROR_DATA_LEN)];
                b.msgs.push((msg, head.to_vec()));
                Ok(())
            }
            Err(e) => {
                if b.refused.is_none() {
                    b.refused = Some(format!("message {} ({})", b.msgs.len() + 1, e.kind));
                }
                Err(e)
            }
        }
    }

    /// Applies bundle `b` of connection `id`, its messages all or none (module comment).
    fn commit(&mut self, id: SessionId, b: Bundle, now: u64) -> Result<(), Vec<Out>> {
        if let Some(what) = &b.refused {
            return Err(vec![Out::Err(OfpError::new(
                ErrorKind::BUNDLE_FAILED_MSG_FAILED,
                format!("{what} was refused when added to the bundle: nothing was applied"),
            ))]);
        }
        let (groups, meters) = (self.groups.clone(), self.meters.clone());
        self.flows.begin();
        // Where each message's flow changes start, and its xid, for flow monitors.
        let mut marks = Vec::with_capacity(b.msgs.len());
        for (msg, head) in &b.msgs {
            let xid = head.get(4..8).map_or(0, |x| u32::from_be_bytes([x[0], x[1], x[2], x[3]]));
            marks.push((self.flows.recorded(), (id, xid)));
            let r = match msg {
                v13::Message::FlowMod(fm) => {
                    match self.flow_mod_request(fm, now).into_iter().next() {
                        Some(Out::Err(e)) => Err(e),
                        _ => Ok(()),
                    }
                }
                v13::Message::GroupMod(gm) => self.group_mod(gm, now),
                v13::Message::MeterMod(mm) => self.meter_mod(mm, now),
                _ => Ok(()),
            };
            if let Err(e) = r {
                self.flows.rollback();
                self.groups = groups;
                self.meters = meters;
                let all = OfpError::new(
                    ErrorKind::BUNDLE_FAILED_MSG_FAILED,
                    format!("{} of the bundle failed: nothing was applied", msg.name()),
                );
                return Err(vec![Out::ErrAbout(e, head.clone()), Out::Err(all)]);
            }
        }
        let removed = self.flows.end();
        self.dirty = true;
        self.publish();
        self.broadcast_flow_removed(removed);
        self.bundle_marks = marks;
        Ok(())
    }

    /// Discards the bundles of every connection idle since [`BUNDLE_IDLE_NS`] before
    /// `now`, telling each connection with `OFPBFC_TIMEOUT`.
    pub(super) fn expire_bundles(&mut self, now: u64) {
        let ids: Vec<SessionId> = self.sessions.keys().copied().collect();
        for id in ids {
            let Some(s) = self.sessions.get_mut(&id) else { continue };
            let due: Vec<u32> = s
                .bundles
                .iter()
                .filter(|(_, b)| b.last_used.saturating_add(BUNDLE_IDLE_NS) <= now)
                .map(|(bid, _)| *bid)
                .collect();
            due.iter().for_each(|bid| drop(s.bundles.remove(bid)));
            for bid in due {
                let e = OfpError::new(
                    ErrorKind::BUNDLE_FAILED_TIMEOUT,
                    format!(
                        "bundle {bid} was idle for {} s and is discarded",
                        BUNDLE_IDLE_NS / 1_000_000_000
                    ),
                );
                self.reply(id, 0, Out::Err(e), &[]);
            }
        }
    }
}

impl Bundle {
    fn new(flags: u16, now: u64) -> Bundle {
        Bundle { flags, closed: false, msgs: Vec::new(), refused: None, last_used: now }
    }

    /// The message bundle add `add` (of bundle `bid`) carries, if the bundle takes it.
    fn check_add(
        &self,
        bid: u32,
        add: &BundleAdd,
        version: u8,
        xid: u32,
    ) -> Result<v13::Message, OfpError> {
        if self.closed {
            return Err(OfpError::new(
                ErrorKind::BUNDLE_FAILED_BUNDLE_CLOSED,
                format!("bundle {bid} is closed"),
            ));
        }
        if self.flags != add.flags {
            return Err(OfpError::new(
                ErrorKind::BUNDLE_FAILED_BAD_FLAGS,
                format!(
                    "bundle {bid} was opened with flags {:#x}, not {:#x}",
                    self.flags, add.flags
                ),
            ));
        }
        if self.msgs.len() >= MAX_BUNDLE_MSGS {
            return Err(OfpError::new(
                ErrorKind::BUNDLE_FAILED_MSG_TOO_MANY,
                format!("a bundle may hold {MAX_BUNDLE_MSGS} messages"),
            ));
        }
        checked_message(&add.message, version, xid)
    }
}

/// The message a bundle add carries, checked as the module comment says.
fn checked_message(bytes: &[u8], version: u8, xid: u32) -> Result<v13::Message, OfpError> {
    let frame = Frame::decode_validated(bytes)?;
    if frame.version != version {
        return Err(OfpError::new(
            ErrorKind::BAD_REQUEST_BAD_VERSION,
            format!(
                "a version {} message in a bundle of a version {version} connection",
                frame.version
            ),
        ));
    }
    if frame.xid != xid {
        return Err(OfpError::new(
            ErrorKind::BUNDLE_FAILED_MSG_BAD_XID,
            format!("the added message's xid {} is not the bundle add's {xid}", frame.xid),
        ));
    }
    let Message::V13(m) = frame.message else {
        return Err(OfpError::new(
            ErrorKind::BUNDLE_FAILED_MSG_UNSUP,
            "only OpenFlow 1.3 and later have bundles",
        ));
    };
    match &m {
        v13::Message::FlowMod(fm) if fm.buffer_id != OFP_NO_BUFFER => Err(OfpError::new(
            ErrorKind::BUNDLE_FAILED_MSG_UNSUP,
            "a flow-mod in a bundle may not name a buffered packet",
        )),
        v13::Message::FlowMod(_) | v13::Message::GroupMod(_) | v13::Message::MeterMod(_) => Ok(m),
        other => Err(OfpError::new(
            ErrorKind::BUNDLE_FAILED_MSG_UNSUP,
            format!("{} cannot be bundled: only flow, group and meter mods can", other.name()),
        )),
    }
}

impl Agent {
    /// An ONF-extension experimenter message (1.3 bundles): a bundle control or add in
    /// another envelope; any other ONF message type is `OFPBRC_BAD_EXP_TYPE`.
    pub(super) fn onf_bundle(
        &mut self,
        id: SessionId,
        e: &v13::Experimenter,
        version: u8,
        xid: u32,
        now: u64,
    ) -> Vec<Out> {
        if let Some(ctrl) = BundleControl::from_experimenter(e) {
            return match ctrl.and_then(|c| c.validate().map(|()| c)) {
                Ok(c) => self.bundle_control(id, &c, true, now),
                Err(err) => vec![Out::Err(err)],
            };
        }
        if let Some(add) = BundleAdd::from_experimenter(e) {
            let added = add
                .and_then(|a| a.validate().map(|()| a))
                .and_then(|a| self.bundle_add(id, &a, version, xid, now));
            return added.err().map(Out::Err).into_iter().collect();
        }
        vec![Out::Err(OfpError::new(
            ErrorKind::BAD_REQUEST_BAD_EXP_TYPE,
            format!("ONF extension message type {} is not supported", e.exp_type),
        ))]
    }
}

/// Whether `e` is a message of the ONF extension (1.3 bundles).
pub(super) fn is_onf(e: &v13::Experimenter) -> bool {
    e.experimenter == ONF_EXPERIMENTER_ID
}
