//! What an operator reads in the switch's log about its OpenFlow connections: a
//! controller connected (with the version agreed), disconnected (and why), changed role,
//! or a connection refused (and why). One line each, from the agent's point of view; the
//! shell prints them.
//!
//! [`Notices`] holds them for the shell and limits their rate, each kind of line on its
//! own (connects, disconnects, refusals, back-pressure, ...: [`Notice::kind`]): at most
//! [`BURST`] lines of a kind per [`WINDOW_NS`]. The first line beyond says that the rest
//! of the window's lines of that kind are left out ([`Notice::Throttled`]); they are
//! counted, and the first line of the kind allowed after says how many. So a controller
//! that reconnects in a loop cannot flood the log, the log never goes quiet without
//! saying so, and a flood of one kind (a script's many short connections) does not hide
//! the lines of another (a client that stopped reading).

use std::collections::VecDeque;
use std::fmt;

use openflow::v13::role::ControllerRole;

/// Lines allowed per window.
pub const BURST: u32 = 20;
/// The window, in nanoseconds (one minute).
pub const WINDOW_NS: u64 = 60_000_000_000;

/// One event of a connection, for the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// A controller's HELLO agreed on `version` (wire number).
    Connected { peer: String, version: u8 },
    /// A controller's connection ended after `secs` seconds; `why` is what ended it
    /// (the switch's reason, or that the peer or the socket closed it).
    Disconnected { peer: String, secs: u64, why: String },
    /// A connection was refused before it served anything.
    Refused { peer: String, why: String },
    /// A controller could not be reached; the switch keeps trying.
    Unreachable { peer: String, why: String },
    /// A controller took `role`; `demoted_by` names the connection whose master request
    /// made this one a slave.
    Role { peer: String, role: ControllerRole, demoted_by: Option<String> },
    /// A connection has been held for its backlog for [`super::BACKLOG_NOTICE_NS`]: its
    /// peer is not reading (logged once per connection).
    Backlogged { peer: String, unsent: usize },
    /// A connection sent a malformed message (answered with an error; it goes on).
    Malformed { peer: String, why: String },
    /// A packet-out's packets were dropped: the workers will never take them.
    PacketOutLost { why: String },
    /// The switch holds `count` of `what` (plural noun), past its soft limit `limit`
    /// (said when the limit is reached and at each doubling past it).
    Grown { what: &'static str, count: usize, limit: usize },
    /// The window's lines of `kind` are spent: the next ones are left out (and counted).
    Throttled { kind: &'static str },
    /// `n` lines of `kind` were left out by the rate limit.
    Suppressed { kind: &'static str, n: u64 },
}

impl Notice {
    /// The kind of line this is: the rate limit counts each kind on its own, and its
    /// own lines name the kind ("more than 20 connect lines this minute").
    pub fn kind(&self) -> &'static str {
        match self {
            Notice::Connected { .. } => "connect",
            Notice::Disconnected { .. } => "disconnect",
            Notice::Refused { .. } => "refused-connection",
            Notice::Unreachable { .. } => "unreachable-controller",
            Notice::Role { .. } => "role-change",
            Notice::Backlogged { .. } => "back-pressure",
            Notice::Malformed { .. } => "malformed-message",
            Notice::PacketOutLost { .. } => "lost-packet-out",
            Notice::Grown { .. } => "soft-limit",
            Notice::Throttled { .. } | Notice::Suppressed { .. } => "rate-limit",
        }
    }
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::Connected { peer, version } => {
                write!(f, "controller {peer}: connected, OpenFlow {}", version_name(*version))
            }
            Notice::Disconnected { peer, secs, why } => {
                write!(f, "controller {peer}: disconnected after {secs} s ({why})")
            }
            Notice::Refused { peer, why } => write!(f, "connection from {peer} refused: {why}"),
            Notice::Unreachable { peer, why } => {
                write!(f, "controller {peer}: cannot connect ({why}); retrying")
            }
            Notice::Role { peer, role, demoted_by: None } => {
                write!(f, "controller {peer}: role {}", role_name(*role))
            }
            Notice::Role { peer, role, demoted_by: Some(by) } => {
                write!(f, "controller {peer}: role {} ({by} became master)", role_name(*role))
            }
            Notice::Backlogged { peer, unsent } => write!(
                f,
                "connection {peer}: {} KiB unsent for a second; its requests wait until it \
                 reads (back-pressure; said once per connection)",
                unsent / 1024
            ),
            Notice::Malformed { peer, why } => {
                write!(f, "connection {peer}: malformed message refused ({why})")
            }
            Notice::PacketOutLost { why } => write!(f, "a packet-out was dropped: {why}"),
            Notice::Grown { what, count, limit } => write!(
                f,
                "{count} {what}, past the soft limit of {limit} (said again at each doubling)"
            ),
            Notice::Throttled { kind } => write!(
                f,
                "more than {BURST} {kind} lines this minute: the rest of the minute's {kind} \
                 lines are left out and counted"
            ),
            Notice::Suppressed { kind, n } => {
                write!(f, "{n} {kind} lines left out (more than {BURST} a minute)")
            }
        }
    }
}

/// `1.3` for wire version 4.
fn version_name(v: u8) -> String {
    match v {
        1..=6 => format!("1.{}", v - 1),
        _ => format!("version 0x{v:02x}"),
    }
}

fn role_name(r: ControllerRole) -> String {
    match r {
        ControllerRole::NoChange => "unchanged".into(),
        ControllerRole::Equal => "equal".into(),
        ControllerRole::Master => "master".into(),
        ControllerRole::Slave => "slave".into(),
        ControllerRole::Unknown(n) => format!("{n}"),
    }
}

/// A soft limit on how much of something the switch holds: [`SoftLimit::check`] says
/// when the count first reaches the limit, then at each doubling past it; once the count
/// falls below a quarter of the next level, the level comes back down (never below the
/// limit), so that growing again is said again.
#[derive(Clone, Copy, Debug)]
pub struct SoftLimit {
    limit: usize,
    next: usize,
}

impl SoftLimit {
    pub const fn new(limit: usize) -> SoftLimit {
        SoftLimit { limit, next: limit }
    }

    /// The limit.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Whether `count` reached a level not said yet (and takes note).
    pub fn check(&mut self, count: usize) -> bool {
        if count >= self.next {
            while self.next <= count {
                self.next = self.next.saturating_mul(2).max(1);
            }
            return true;
        }
        while self.next > self.limit && count < self.next / 4 {
            self.next /= 2;
        }
        false
    }
}

/// The notices not yet taken, rate-limited per kind (see the module documentation).
#[derive(Debug, Default)]
pub struct Notices {
    queue: VecDeque<Notice>,
    /// One entry per kind seen (a handful: the kinds are [`Notice::kind`]'s).
    windows: Vec<Window>,
}

/// The rate limit's state for one kind of line.
#[derive(Debug)]
struct Window {
    kind: &'static str,
    start: u64,
    lines: u32,
    suppressed: u64,
}

impl Notices {
    /// Adds `n` at `now` unless the window's lines of its kind are spent.
    pub fn push(&mut self, n: Notice, now: u64) {
        let kind = n.kind();
        let w = match self.windows.iter().position(|w| w.kind == kind) {
            Some(i) => &mut self.windows[i],
            None => {
                self.windows.push(Window { kind, start: now, lines: 0, suppressed: 0 });
                self.windows.last_mut().expect("just pushed")
            }
        };
        if now.saturating_sub(w.start) >= WINDOW_NS {
            w.start = now;
            w.lines = 0;
        }
        if w.lines >= BURST {
            if w.suppressed == 0 {
                self.queue.push_back(Notice::Throttled { kind });
            }
            w.suppressed += 1;
            return;
        }
        if w.suppressed > 0 {
            self.queue.push_back(Notice::Suppressed { kind, n: w.suppressed });
            w.suppressed = 0;
        }
        w.lines += 1;
        self.queue.push_back(n);
    }

    pub fn pop(&mut self) -> Option<Notice> {
        self.queue.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(i: u32) -> Notice {
        Notice::Refused { peer: format!("tcp:192.0.2.1:{i}"), why: "x".into() }
    }

    #[test]
    fn lines_read_as_an_operator_expects() {
        let peer = "tcp:192.0.2.1:6653".to_string();
        let lines = [
            (
                Notice::Connected { peer: peer.clone(), version: 4 },
                "controller tcp:192.0.2.1:6653: connected, OpenFlow 1.3",
            ),
            (
                Notice::Connected { peer: peer.clone(), version: 1 },
                "controller tcp:192.0.2.1:6653: connected, OpenFlow 1.0",
            ),
            (
                Notice::Disconnected {
                    peer: peer.clone(),
                    secs: 12,
                    why: "closed by the peer".into(),
                },
                "controller tcp:192.0.2.1:6653: disconnected after 12 s (closed by the peer)",
            ),
            (
                Notice::Role {
                    peer: peer.clone(),
                    role: ControllerRole::Slave,
                    demoted_by: Some("tcp:192.0.2.2:6653".into()),
                },
                "controller tcp:192.0.2.1:6653: role slave (tcp:192.0.2.2:6653 became master)",
            ),
            (
                Notice::Role { peer, role: ControllerRole::Master, demoted_by: None },
                "controller tcp:192.0.2.1:6653: role master",
            ),
        ];
        for (n, want) in lines {
            assert_eq!(n.to_string(), want);
        }
    }

    #[test]
    fn a_soft_limit_speaks_at_the_limit_and_each_doubling_and_again_after_a_fall() {
        let mut l = SoftLimit::new(100);
        let said: Vec<usize> =
            [10, 99, 100, 150, 199, 200, 450, 800].into_iter().filter(|&n| l.check(n)).collect();
        assert_eq!(said, vec![100, 200, 450, 800]);
        assert!(!l.check(1000) && !l.check(500), "1600 is the next level");
        assert!(!l.check(10), "a fall says nothing");
        assert!(l.check(100), "growing again past the limit is said again");
        let n = Notice::Grown { what: "flows", count: 1_048_576, limit: 1_000_000 };
        assert_eq!(
            n.to_string(),
            "1048576 flows, past the soft limit of 1000000 (said again at each doubling)"
        );
    }

    #[test]
    fn a_flood_is_cut_to_the_burst_and_counted() {
        let mut q = Notices::default();
        let t0 = 5 * WINDOW_NS;
        for i in 0..BURST + 7 {
            q.push(refused(i), t0 + u64::from(i));
        }
        let first: Vec<Notice> = std::iter::from_fn(|| q.pop()).collect();
        let mut want: Vec<Notice> = (0..BURST).map(refused).collect();
        let kind = "refused-connection";
        want.push(Notice::Throttled { kind });
        assert_eq!(first, want, "the burst, then one line saying the rest are left out");
        // Still inside the window: counted, not queued.
        q.push(refused(99), t0 + WINDOW_NS - 1);
        assert_eq!(q.pop(), None);
        // The next window: the count first, then the line.
        q.push(refused(100), t0 + WINDOW_NS);
        assert_eq!(q.pop(), Some(Notice::Suppressed { kind, n: 8 }));
        assert_eq!(q.pop(), Some(refused(100)));
        assert_eq!(q.pop(), None);
        assert_eq!(
            Notice::Throttled { kind }.to_string(),
            "more than 20 refused-connection lines this minute: the rest of the minute's \
             refused-connection lines are left out and counted"
        );
        assert_eq!(
            Notice::Suppressed { kind, n: 8 }.to_string(),
            "8 refused-connection lines left out (more than 20 a minute)"
        );
    }

    /// A script's many short connections spend the connect and disconnect lines of the
    /// minute; a client that stops reading, a role change or a lost packet-out is still
    /// told, and each kind's own flood is still cut.
    #[test]
    fn a_flood_of_one_kind_does_not_hide_another() {
        let mut q = Notices::default();
        let t0 = 3 * WINDOW_NS;
        let peer = |i: u32| format!("unix:{i}");
        for i in 0..3 * BURST {
            let now = t0 + u64::from(i);
            q.push(Notice::Connected { peer: peer(i), version: 4 }, now);
            q.push(Notice::Disconnected { peer: peer(i), secs: 0, why: "closed".into() }, now);
        }
        let late = t0 + 1_000;
        let backlog = Notice::Backlogged { peer: peer(999), unsent: 1 << 20 };
        let role = Notice::Role { peer: peer(7), role: ControllerRole::Master, demoted_by: None };
        let lost = Notice::PacketOutLost { why: "the workers stopped".into() };
        for n in [&backlog, &role, &lost] {
            q.push(n.clone(), late);
        }
        let got: Vec<Notice> = std::iter::from_fn(|| q.pop()).collect();
        let count = |kind: &str| got.iter().filter(|n| n.kind() == kind).count();
        assert_eq!(count("connect"), BURST as usize);
        assert_eq!(count("disconnect"), BURST as usize);
        let throttled: Vec<&Notice> =
            got.iter().filter(|n| matches!(n, Notice::Throttled { .. })).collect();
        assert_eq!(
            throttled,
            [&Notice::Throttled { kind: "connect" }, &Notice::Throttled { kind: "disconnect" }]
        );
        assert_eq!(&got[got.len() - 3..], [backlog, role, lost], "told despite the flood");
    }
}
