//! The per-worker handler of the NORMAL output: forwards from a worker-local view of the
//! shared table (the structure is described in the parent module's comment).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::stats::{Counter, Counters, Tally};
use super::table::{Change, Shared, State};
use super::{alive, is_group, learnable, pack, KeyMap, MacTableConfig};
use crate::key::Field;
use crate::pipeline::{NormalHandler, NormalPacket, Outputs, Tx};

/// A view's copy of an entry.
#[derive(Clone, Copy, Debug)]
struct Seen {
    port: u32,
    last_seen: u64,
}

/// A worker's copy of the table's state as of generation `gen`: entries, ports and
/// settings. Changed only by [`View::sync`], with the state's lock held.
#[derive(Debug)]
struct View {
    map: KeyMap<Seen>,
    ports: Arc<[u32]>,
    cfg: MacTableConfig,
    gen: u64,
}

impl View {
    /// Copies the whole state.
    fn copy(&mut self, st: &State) {
        self.map.clear();
        self.map
            .extend(st.entries().map(|(k, e)| (k, Seen { port: e.port, last_seen: e.last_seen })));
        self.ports = st.ports.clone();
        self.cfg = st.cfg;
        self.gen = st.gen();
    }

    /// Brings the view to the state's generation: replays the changes since `gen`, or
    /// copies everything when they are no longer in the log.
    fn sync(&mut self, st: &State) {
        let gen = st.gen();
        if self.gen == gen {
            return;
        }
        if self.gen < st.log_start || self.gen > gen {
            self.copy(st);
            return;
        }
        // In range: `log_start <= self.gen < gen = log_start + log.len()`.
        let from = (self.gen - st.log_start) as usize;
        for c in st.log.range(from..) {
            match *c {
                Change::Set { key, port, last_seen } => {
                    self.map.insert(key, Seen { port, last_seen });
                }
                Change::Remove(key) => {
                    self.map.remove(&key);
                }
                Change::Clear => self.map.clear(),
                Change::Ports => self.ports = st.ports.clone(),
                Change::Settings => self.cfg = st.cfg,
            }
        }
        self.gen = gen;
    }
}

/// One worker's learning switch: the [`NormalHandler`] that the worker loop drains its
/// NORMAL packets into. Made by [`super::MacTable::handler`]; owned by one thread.
///
/// Call [`NormalSwitch::begin_batch`] with the current time before handling each batch's
/// packets: it sets the time used for learning and aging, and brings the view up to date
/// when the table changed. Invariant: the view equals the shared state as of the
/// generation it last synced to, which is the latest whenever this handler held the lock.
#[derive(Debug)]
pub struct NormalSwitch {
    shared: Arc<Shared>,
    view: View,
    counters: Arc<Counters>,
    /// The time given to the last `begin_batch`.
    now: u64,
    /// When this handler next sweeps expired entries from the shared state.
    next_sweep: u64,
}

impl NormalSwitch {
    pub(super) fn new(shared: Arc<Shared>) -> NormalSwitch {
        let counters = shared.register();
        let mut view = View {
            map: KeyMap::with_hasher(shared.hash),
            ports: Arc::from(Vec::new()),
            cfg: MacTableConfig::default(),
            gen: 0,
        };
        view.copy(&shared.lock());
        NormalSwitch { shared, view, counters, now: 0, next_sweep: 0 }
    }

    /// Starts a batch at time `now` (nanoseconds, from any clock that the other
    /// handlers of the table share). Takes the lock only when the table changed since
    /// this handler last looked (one atomic load tells), or to sweep expired entries at
    /// most once per `refresh_ns`.
    pub fn begin_batch(&mut self, now: u64) {
        self.now = now;
        if now >= self.next_sweep {
            self.next_sweep = now.saturating_add(self.view.cfg.refresh_ns);
            let mut t = Tally::default();
            let mut st = self.shared.lock();
            st.sweep(now, &mut t);
            self.view.sync(&st);
            drop(st);
            self.credit(&t);
        } else if self.shared.gen.load(Ordering::Acquire) != self.view.gen {
            self.view.sync(&self.shared.lock());
        }
    }

    /// The time of the current batch.
    pub fn now(&self) -> u64 {
        self.now
    }

    fn credit(&self, t: &Tally) {
        t.credit(|c, n| self.counters.bump(c, n));
    }

    /// Writes `key → port` to the shared state (which decides again, see
    /// `State::learn`) and brings the view up to date.
    #[cold]
    fn learn(&mut self, key: u64, port: u32) {
        let mut t = Tally::default();
        let mut st = self.shared.lock();
        st.learn(key, port, self.now, &mut t);
        self.view.sync(&st);
        drop(st);
        self.credit(&t);
    }

    /// Sends `packet` to every port of the view but `in_port` (the last copy is the
    /// packet itself).
    fn flood(&self, in_port: u32, packet: crate::packet::Packet, out: &mut Outputs) {
        let mut last = None;
        for &p in self.view.ports.iter().filter(|&&p| p != in_port) {
            if let Some(q) = last.replace(p) {
                out.tx.push(Tx { port: q, queue: None, packet: packet.clone() });
            }
        }
        if let Some(q) = last {
            out.tx.push(Tx { port: q, queue: None, packet });
        }
    }
}

impl NormalHandler for NormalSwitch {
    fn handle(&mut self, pkt: NormalPacket, out: &mut Outputs) {
        let vlan = pkt.key.get(Field::VlanVid) as u64;
        let src = pkt.key.get(Field::EthSrc) as u64;
        let dst = pkt.key.get(Field::EthDst) as u64;
        let in_port = pkt.in_port;
        let now = self.now;

        if learnable(src) {
            let key = pack(vlan, src);
            let fresh = matches!(
                self.view.map.get(&key),
                Some(s) if s.port == in_port
                    && now.saturating_sub(s.last_seen) < self.view.cfg.refresh_ns
            );
            if !fresh && self.view.ports.binary_search(&in_port).is_ok() {
                self.learn(key, in_port);
            }
        }

        let aging = self.view.cfg.aging_ns;
        let to = if is_group(dst) {
            None
        } else {
            self.view
                .map
                .get(&pack(vlan, dst))
                .filter(|s| alive(s.last_seen, now, aging))
                .map(|s| s.port)
        };
        match to {
            Some(p) if p == in_port => self.counters.bump(Counter::Dropped, 1),
            Some(p) => {
                out.tx.push(Tx { port: p, queue: None, packet: pkt.packet });
                self.counters.bump(Counter::Forwarded, 1);
            }
            None => {
                self.flood(in_port, pkt.packet, out);
                self.counters.bump(Counter::Flooded, 1);
            }
        }
    }
}

impl Drop for NormalSwitch {
    /// Keeps this handler's counts in the table's totals.
    fn drop(&mut self) {
        self.shared.retire(&self.counters);
    }
}
