//! Unit tests of the learning switch: the forwarding rules, aging, capacity, port
//! changes, counters, and two workers sharing a table.

mod model;

use std::sync::mpsc;

use super::{MacTable, MacTableConfig, NormalStats, NormalSwitch, SECOND_NS};
use crate::key::{Field, FlowKey};
use crate::packet::Packet;
use crate::pipeline::{NormalPacket, Outputs};

const A: u64 = 0x0200_0000_000a;
const B: u64 = 0x0200_0000_000b;
const C: u64 = 0x0200_0000_000c;
const D: u64 = 0x0200_0000_000d;
const E: u64 = 0x0600_0000_0001;
const BROADCAST: u64 = 0xffff_ffff_ffff;
const MULTICAST: u64 = 0x0100_5e00_0001;
const UNTAGGED: u16 = 0;
const VLAN5: u16 = 0x1005;
const VLAN6: u16 = 0x1006;

/// A frame from `src` to `dst` (its bytes only need to be recognisable).
fn frame(src: u64, dst: u64) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&dst.to_be_bytes()[2..]);
    f.extend_from_slice(&src.to_be_bytes()[2..]);
    f.extend_from_slice(&[0x88, 0xb5, 1, 2, 3, 4]);
    f
}

fn normal(in_port: u32, vlan: u16, src: u64, dst: u64) -> NormalPacket {
    let mut key = FlowKey::ZERO;
    key.set(Field::InPort, in_port.into());
    key.set(Field::VlanVid, vlan.into());
    key.set(Field::EthSrc, src.into());
    key.set(Field::EthDst, dst.into());
    NormalPacket { in_port, key, packet: Packet::from_slice(&frame(src, dst)) }
}

/// Handles one packet and returns the ports it went to, checking every copy is the
/// packet as received.
fn send(h: &mut NormalSwitch, in_port: u32, vlan: u16, src: u64, dst: u64) -> Vec<u32> {
    let mut out = Outputs::new();
    out.normal.push(normal(in_port, vlan, src, dst));
    out.drain_normal(h);
    assert!(out.normal.is_empty());
    for t in &out.tx {
        assert_eq!(t.packet.data(), &frame(src, dst)[..]);
        assert_eq!(t.queue, None);
    }
    out.ports()
}

fn table(ports: &[u32], cfg: MacTableConfig) -> MacTable {
    let t = MacTable::new(cfg);
    t.set_ports(ports);
    t
}

/// A table of `ports` configured by `cfg`, and a handler of it in a batch begun at 0.
fn switch(ports: &[u32], cfg: MacTableConfig) -> (MacTable, NormalSwitch) {
    let t = table(ports, cfg);
    let mut h = t.handler();
    h.begin_batch(0);
    (t, h)
}

#[test]
fn learns_then_forwards_unicast() {
    let (t, mut h) = switch(&[1, 2, 3], MacTableConfig::default());
    assert_eq!(send(&mut h, 1, UNTAGGED, A, B), vec![2, 3], "B unknown: flood");
    assert_eq!(send(&mut h, 2, UNTAGGED, B, A), vec![1], "A learned on 1");
    assert_eq!(send(&mut h, 1, UNTAGGED, A, B), vec![2], "B learned on 2");
    assert_eq!(send(&mut h, 3, UNTAGGED, C, B), vec![2]);
    assert_eq!(t.lookup(UNTAGGED, A, 0), Some(1));
    assert_eq!(t.lookup(UNTAGGED, B, 0), Some(2));
    assert_eq!(t.lookup(UNTAGGED, C, 0), Some(3));
    assert_eq!(
        t.stats(),
        NormalStats { learned: 3, flooded: 1, forwarded: 3, ..NormalStats::default() }
    );
}

#[test]
fn same_port_destination_is_dropped() {
    let (t, mut h) = switch(&[1, 2, 3], MacTableConfig::default());
    send(&mut h, 1, UNTAGGED, A, BROADCAST);
    assert_eq!(send(&mut h, 1, UNTAGGED, B, A), Vec::<u32>::new());
    assert_eq!(t.stats().dropped, 1);
    // A frame to itself: learned on the input port, so dropped too.
    assert_eq!(send(&mut h, 2, UNTAGGED, C, C), Vec::<u32>::new());
    assert_eq!(t.stats().dropped, 2);
}

#[test]
fn vlans_are_separate() {
    let (t, mut h) = switch(&[1, 2, 3], MacTableConfig::default());
    send(&mut h, 1, VLAN5, A, BROADCAST);
    assert_eq!(send(&mut h, 2, VLAN5, B, A), vec![1]);
    assert_eq!(send(&mut h, 2, VLAN6, B, A), vec![1, 3], "A unknown on VLAN 6");
    assert_eq!(send(&mut h, 2, UNTAGGED, B, A), vec![1, 3], "nor untagged");
    // The same MAC on another port in another VLAN is another entry.
    send(&mut h, 3, VLAN6, A, BROADCAST);
    assert_eq!(send(&mut h, 2, VLAN6, B, A), vec![3]);
    assert_eq!(send(&mut h, 2, VLAN5, B, A), vec![1]);
    assert_eq!(t.lookup(VLAN5, A, 0), Some(1));
    assert_eq!(t.lookup(VLAN6, A, 0), Some(3));
    assert_eq!(t.stats().moved, 0);
}

#[test]
fn mac_moves_to_another_port() {
    let (t, mut h) = switch(&[1, 2, 3], MacTableConfig::default());
    send(&mut h, 1, UNTAGGED, A, BROADCAST);
    assert_eq!(send(&mut h, 2, UNTAGGED, B, A), vec![1]);
    send(&mut h, 3, UNTAGGED, A, BROADCAST);
    assert_eq!(send(&mut h, 2, UNTAGGED, B, A), vec![3]);
    assert_eq!(t.lookup(UNTAGGED, A, 0), Some(3));
    let s = t.stats();
    assert_eq!((s.learned, s.moved), (2, 1));
}

#[test]
fn entries_age_out_and_refresh() {
    let cfg = MacTableConfig { aging_ns: 10 * SECOND_NS, ..MacTableConfig::default() };
    let (t, mut h) = switch(&[1, 2, 3], cfg);
    send(&mut h, 1, UNTAGGED, A, BROADCAST);
    h.begin_batch(9 * SECOND_NS);
    assert_eq!(send(&mut h, 2, UNTAGGED, B, A), vec![1], "alive at 9 s");
    h.begin_batch(10 * SECOND_NS);
    assert_eq!(send(&mut h, 3, UNTAGGED, C, A), vec![1, 2], "gone at 10 s");
    assert_eq!(t.lookup(UNTAGGED, A, 10 * SECOND_NS), None);
    // B (seen at 9 s) is still there; the sweep removed A.
    assert_eq!(t.lookup(UNTAGGED, B, 10 * SECOND_NS), Some(2));
    assert_eq!(t.len(), 2, "B and C");
    assert_eq!(t.stats().aged_out, 1);

    // Seen again within the aging time: its time is renewed.
    h.begin_batch(15 * SECOND_NS);
    send(&mut h, 2, UNTAGGED, B, BROADCAST);
    h.begin_batch(24 * SECOND_NS);
    assert_eq!(send(&mut h, 3, UNTAGGED, C, B), vec![2], "B renewed at 15 s");
    h.begin_batch(25 * SECOND_NS);
    assert_eq!(send(&mut h, 1, UNTAGGED, D, B), vec![2, 3], "B expired at 25 s");
    let s = t.stats();
    assert_eq!(s.learned, 5, "A, B, C, C again (expired at 20 s), D");
    assert_eq!(s.aged_out, 3, "A at 10 s, C at 24 s, B at 25 s");
}

#[test]
fn refresh_writes_at_most_once_per_interval() {
    let (t, mut h) = switch(&[1, 2], MacTableConfig::default());
    send(&mut h, 1, UNTAGGED, A, BROADCAST);
    // Within the refresh interval nothing is written: the age keeps counting from 0.
    h.begin_batch(SECOND_NS / 2);
    send(&mut h, 1, UNTAGGED, A, BROADCAST);
    assert_eq!(t.entries(SECOND_NS / 2)[0].age_ns, SECOND_NS / 2);
    // Once it has passed, the entry is renewed.
    h.begin_batch(SECOND_NS);
    send(&mut h, 1, UNTAGGED, A, BROADCAST);
    assert_eq!(t.entries(SECOND_NS)[0].age_ns, 0);
    assert_eq!(t.stats().learned, 1);
}

#[test]
fn expire_removes_expired_entries() {
    let cfg = MacTableConfig { aging_ns: 100, refresh_ns: 10, ..MacTableConfig::default() };
    let (t, mut h) = switch(&[1, 2], cfg);
    send(&mut h, 1, UNTAGGED, A, BROADCAST);
    h.begin_batch(50);
    send(&mut h, 2, UNTAGGED, B, BROADCAST);
    assert_eq!(t.expire(99), 0);
    assert_eq!(t.expire(100), 1);
    assert_eq!(t.len(), 1);
    assert_eq!(t.expire(200), 1);
    assert!(t.is_empty());
    assert_eq!(t.stats().aged_out, 2);
}

#[test]
fn full_table_evicts_the_oldest() {
    let cfg = MacTableConfig { capacity: 3, ..MacTableConfig::default() };
    let t = table(&[1, 2, 3, 4], cfg);
    let mut h = t.handler();
    for (i, mac) in [A, B, C].into_iter().enumerate() {
        h.begin_batch(i as u64 * 2 * SECOND_NS);
        send(&mut h, i as u32 + 1, UNTAGGED, mac, BROADCAST);
    }
    // A is renewed (at 6 s): B is now the oldest.
    h.begin_batch(6 * SECOND_NS);
    send(&mut h, 1, UNTAGGED, A, BROADCAST);
    send(&mut h, 4, UNTAGGED, D, BROADCAST);
    assert_eq!(t.len(), 3);
    assert_eq!(t.lookup(UNTAGGED, B, 6 * SECOND_NS), None);
    assert_eq!(send(&mut h, 4, UNTAGGED, D, B), vec![1, 2, 3], "B evicted");
    assert_eq!(send(&mut h, 4, UNTAGGED, D, A), vec![1]);
    assert_eq!(send(&mut h, 4, UNTAGGED, D, C), vec![3]);
    let s = t.stats();
    assert_eq!((s.learned, s.evicted, s.aged_out), (4, 1, 0));
}

#[test]
fn full_table_drops_expired_before_live() {
    let cfg = MacTableConfig { capacity: 2, aging_ns: 100, refresh_ns: 1000 };
    let t = table(&[1, 2, 3], cfg);
    assert_eq!(t.config().refresh_ns, 100, "refresh clamped to the aging time");
    let mut h = t.handler();
    h.begin_batch(0);
    h.begin_batch(50);
    send(&mut h, 1, UNTAGGED, A, BROADCAST);
    send(&mut h, 2, UNTAGGED, B, BROADCAST);
    // The sweep at 100 finds nothing expired and is next due at 200. At 160 both entries
    // have expired but are still stored, and learning C finds the table full.
    h.begin_batch(100);
    h.begin_batch(160);
    assert_eq!(t.len(), 2);
    assert_eq!(t.entries(160).len(), 0);
    send(&mut h, 3, UNTAGGED, C, BROADCAST);
    let s = t.stats();
    assert_eq!((s.evicted, s.aged_out), (0, 1), "an expired entry made room");
    assert_eq!(t.len(), 2);
    assert_eq!(t.entries(160).len(), 1);
}

#[test]
fn forget_port_and_port_set_changes() {
    let (t, mut h) = switch(&[1, 2, 3], MacTableConfig::default());
    send(&mut h, 1, UNTAGGED, A, BROADCAST);
    send(&mut h, 1, VLAN5, A, BROADCAST);
    send(&mut h, 2, UNTAGGED, B, BROADCAST);
    assert_eq!(t.forget_port(1), 2);
    h.begin_batch(1);
    assert_eq!(send(&mut h, 2, UNTAGGED, B, A), vec![1, 3], "A forgotten");
    assert_eq!(send(&mut h, 3, UNTAGGED, C, B), vec![2], "B kept");

    // Port 2 leaves, port 4 arrives: B goes, floods follow, 4 learns.
    t.set_ports(&[4, 1, 3, 1]);
    assert_eq!(t.ports(), vec![1, 3, 4]);
    assert_eq!(t.lookup(UNTAGGED, B, 1), None);
    h.begin_batch(2);
    assert_eq!(send(&mut h, 4, UNTAGGED, D, B), vec![1, 3]);
    assert_eq!(send(&mut h, 1, UNTAGGED, A, D), vec![4]);

    // A port outside the set never learns, but its packets still forward.
    assert_eq!(send(&mut h, 9, UNTAGGED, B, A), vec![1]);
    assert_eq!(send(&mut h, 9, UNTAGGED, B, C), vec![3]);
    assert_eq!(send(&mut h, 3, UNTAGGED, C, B), vec![1, 4], "B not learned on 9");
    assert_eq!(t.lookup(UNTAGGED, B, 2), None);
}

#[test]
fn flush_forgets_everything() {
    let (t, mut h) = switch(&[1, 2, 3], MacTableConfig::default());
    send(&mut h, 1, UNTAGGED, A, BROADCAST);
    send(&mut h, 2, UNTAGGED, B, A);
    t.flush();
    assert!(t.is_empty());
    h.begin_batch(1);
    assert_eq!(send(&mut h, 3, UNTAGGED, C, A), vec![1, 2]);
    assert_eq!(send(&mut h, 3, UNTAGGED, C, B), vec![1, 2]);
}

#[test]
fn group_and_zero_sources_are_never_learned_and_group_destinations_flood() {
    let (t, mut h) = switch(&[1, 2, 3], MacTableConfig::default());
    for src in [BROADCAST, MULTICAST, 0] {
        assert_eq!(send(&mut h, 1, UNTAGGED, src, A), vec![2, 3]);
    }
    assert!(t.is_empty());
    assert_eq!(send(&mut h, 2, UNTAGGED, A, MULTICAST), vec![1, 3]);
    assert_eq!(send(&mut h, 2, UNTAGGED, A, BROADCAST), vec![1, 3]);
    assert_eq!(send(&mut h, 2, UNTAGGED, A, 0), vec![1, 3], "zero: unknown");
    assert_eq!(send(&mut h, 1, UNTAGGED, B, A), vec![2]);
    // Group destinations flood even from a port where a learned MAC sits.
    assert_eq!(send(&mut h, 1, UNTAGGED, B, BROADCAST), vec![2, 3]);
    assert_eq!(t.len(), 2);
    let s = t.stats();
    assert_eq!((s.learned, s.flooded, s.forwarded), (2, 7, 1));
}

#[test]
fn counters_survive_their_handler() {
    let t = table(&[1, 2], MacTableConfig::default());
    {
        let mut h = t.handler();
        h.begin_batch(0);
        send(&mut h, 1, UNTAGGED, A, B);
        send(&mut h, 2, UNTAGGED, B, A);
    }
    let mut h = t.handler();
    h.begin_batch(0);
    assert_eq!(send(&mut h, 1, UNTAGGED, A, B), vec![2], "a new handler sees the table");
    let s = t.stats();
    assert_eq!((s.learned, s.flooded, s.forwarded), (2, 1, 2));
}

#[test]
fn shrinking_the_capacity_evicts_the_oldest() {
    let t = table(&[1, 2, 3], MacTableConfig::default());
    let mut h = t.handler();
    for (i, mac) in [A, B, C].into_iter().enumerate() {
        h.begin_batch(i as u64 * 2 * SECOND_NS);
        send(&mut h, 1, UNTAGGED, mac, BROADCAST);
    }
    t.set_config(MacTableConfig { capacity: 1, ..MacTableConfig::default() });
    assert_eq!(t.config().capacity, 1);
    assert_eq!(t.stats().evicted, 2);
    h.begin_batch(5 * SECOND_NS);
    // Group sources learn nothing, so these only look up.
    assert_eq!(send(&mut h, 2, UNTAGGED, MULTICAST, C), vec![1]);
    assert_eq!(send(&mut h, 2, UNTAGGED, MULTICAST, A), vec![1, 3], "A evicted");
    // Learning D evicts C.
    assert_eq!(send(&mut h, 2, UNTAGGED, D, C), vec![1, 3]);
    assert_eq!(t.lookup(UNTAGGED, D, 5 * SECOND_NS), Some(2));
    assert_eq!(t.len(), 1);
    assert_eq!(t.stats().evicted, 3);
}

/// A handler that fell further behind than the change log reaches copies the whole
/// state at its next batch.
#[test]
fn a_handler_behind_the_log_copies_the_state() {
    let t = table(&[1, 2, 3], MacTableConfig::default());
    let mut a = t.handler();
    let mut b = t.handler();
    a.begin_batch(0);
    b.begin_batch(0);
    for i in 0..3000u64 {
        a.begin_batch(i * 2 * SECOND_NS);
        send(&mut a, 1 + (i % 3) as u32, UNTAGGED, 0x0200_0000_0000 + i, BROADCAST);
    }
    let now = 6000 * SECOND_NS;
    b.begin_batch(now);
    let e = t.entries(now);
    assert!(!e.is_empty() && e.len() < 3000, "aging left some: {}", e.len());
    for x in e {
        let from = if x.port == 1 { 2 } else { 1 };
        assert_eq!(send(&mut b, from, UNTAGGED, E, x.mac), vec![x.port]);
    }
    assert_eq!(send(&mut b, 2, UNTAGGED, B, 0x0200_0000_0000), vec![1, 3]);
}

/// Two workers share a table: what one learns, the other forwards by after its next
/// `begin_batch`. The channels order the steps: B's first packet, then A's, then B's
/// others.
#[test]
fn two_handlers_on_two_threads_share_learning() {
    let t = table(&[1, 2, 3], MacTableConfig::default());
    let (b_done, a_may_go) = mpsc::channel::<()>();
    let (a_done, b_may_go) = mpsc::channel::<()>();
    let mut a = t.handler();
    let mut b = t.handler();
    let worker_b = std::thread::spawn(move || {
        let mut seen = Vec::new();
        b.begin_batch(0);
        seen.push(send(&mut b, 2, UNTAGGED, B, A));
        b_done.send(()).ok();
        if b_may_go.recv().is_err() {
            return seen;
        }
        // Before its next batch, this worker's view lacks A (it reads no shared state
        // per packet): the packet floods, which still reaches A.
        seen.push(send(&mut b, 2, UNTAGGED, B, A));
        b.begin_batch(1);
        seen.push(send(&mut b, 2, UNTAGGED, B, A));
        seen.push(send(&mut b, 3, UNTAGGED, C, B));
        seen
    });
    let worker_a = std::thread::spawn(move || {
        if a_may_go.recv().is_err() {
            return Vec::new();
        }
        a.begin_batch(0);
        let first = send(&mut a, 1, UNTAGGED, A, D);
        a_done.send(()).ok();
        first
    });
    assert_eq!(worker_a.join().unwrap(), vec![2, 3], "D unknown");
    let seen = worker_b.join().unwrap();
    assert_eq!(seen.len(), 4);
    assert_eq!(seen[0], vec![1, 3], "A not yet learned");
    assert_eq!(seen[1], vec![1, 3], "stale view until the next batch");
    assert_eq!(seen[2], vec![1], "learned by the other worker");
    assert_eq!(seen[3], vec![2], "B learned by this worker");
    let s = t.stats();
    assert_eq!((s.learned, s.flooded, s.forwarded), (3, 3, 2));
}

/// Two workers learn and move the same MACs at once (small capacity, so entries are
/// evicted too); afterwards, once each has begun a batch, both forward exactly as the
/// shared table says.
#[test]
fn concurrent_workers_converge_on_the_table() {
    let cfg = MacTableConfig { capacity: 16, ..MacTableConfig::default() };
    let t = table(&[1, 2, 3, 4], cfg);
    let mac = |i: u64| 0x0200_0000_0100 + i % 24;
    let spawn = |seed: u64, mut h: NormalSwitch| {
        std::thread::spawn(move || {
            for i in 0..4000u64 {
                if i % 16 == 0 {
                    h.begin_batch(i * SECOND_NS / 8);
                }
                let x = i.wrapping_mul(0x9e37_79b9).wrapping_add(seed) >> 3;
                let port = 1 + (x / 5 % 4) as u32;
                send(&mut h, port, UNTAGGED, mac(x), mac(x / 7));
            }
            h
        })
    };
    let a = spawn(1, t.handler());
    let b = spawn(12345, t.handler());
    let mut hs = [a.join().unwrap(), b.join().unwrap()];
    let now = 4000 * SECOND_NS / 8;
    let entries = t.entries(now);
    assert!(entries.len() > 8, "{entries:?}");
    for h in &mut hs {
        h.begin_batch(now);
        for i in 0..24 {
            let want = match t.lookup(UNTAGGED, mac(i), now) {
                Some(p) => vec![p],
                None => vec![1, 2, 3, 4],
            };
            assert_eq!(send(h, 9, UNTAGGED, MULTICAST, mac(i)), want, "MAC {i}");
        }
    }
    let s = t.stats();
    assert!(s.moved > 0 && s.evicted > 0, "{s:?}");
}

/// Records what a [`super::MacListener`] is told, and checks it is told before the
/// workers can see the change.
struct Told(std::sync::Mutex<Vec<(u64, Vec<super::MacChange>)>>, MacTable);

impl super::MacListener for Told {
    fn changed(&self, gen: u64, changes: &[super::MacChange]) {
        assert!(self.1.generation() < gen, "told after workers may see it");
        self.0.lock().unwrap().push((gen, changes.to_vec()));
    }
}

impl Told {
    fn take(&self) -> Vec<(u64, Vec<super::MacChange>)> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

#[test]
fn the_listener_hears_every_change_but_refreshes_before_workers_see_it() {
    use super::{mac_key, MacChange};
    let cfg = MacTableConfig { aging_ns: 10 * SECOND_NS, refresh_ns: SECOND_NS, capacity: 2 };
    let t = table(&[1, 2, 3], cfg);
    let told = std::sync::Arc::new(Told(Default::default(), t.clone()));
    let weak: std::sync::Weak<dyn super::MacListener> =
        std::sync::Arc::downgrade(&(told.clone() as std::sync::Arc<dyn super::MacListener>));
    t.set_listener(weak);
    let mut h = t.handler();
    let key = |m| MacChange::Key { key: mac_key(UNTAGGED, m) };
    h.begin_batch(0);
    send(&mut h, 1, UNTAGGED, A, B);
    let got = told.take();
    assert_eq!(got, vec![(t.generation(), vec![key(A)])]);
    // A refresh is not a change of any decision.
    h.begin_batch(2 * SECOND_NS);
    send(&mut h, 1, UNTAGGED, A, B);
    assert!(told.take().is_empty());
    t.refresh(&[(UNTAGGED, A, 1)], 4 * SECOND_NS);
    assert!(told.take().is_empty());
    // ... but the refresh happened: the entry is 0 s old.
    assert_eq!(t.entries(4 * SECOND_NS)[0].age_ns, 0);
    // A refresh for a port the MAC is not on changes nothing.
    t.refresh(&[(UNTAGGED, A, 2)], 6 * SECOND_NS);
    assert_eq!(t.lookup(UNTAGGED, A, 6 * SECOND_NS), Some(1));
    assert!(told.take().is_empty());
    // A move.
    send(&mut h, 2, UNTAGGED, A, B);
    assert_eq!(told.take()[0].1, vec![key(A)]);
    // Learning when full evicts the oldest: both told at once.
    send(&mut h, 2, UNTAGGED, B, A);
    told.take();
    send(&mut h, 3, UNTAGGED, C, A);
    assert_eq!(told.take()[0].1, vec![key(A), key(C)]);
    // Aging, forgetting, flushing, ports, settings.
    assert_eq!(t.expire(100 * SECOND_NS), 2);
    assert_eq!(told.take()[0].1, vec![key(B), key(C)]);
    h.begin_batch(100 * SECOND_NS);
    send(&mut h, 1, UNTAGGED, D, A);
    told.take();
    assert_eq!(t.forget_port(1), 1);
    assert_eq!(told.take()[0].1, vec![key(D)]);
    t.flush();
    assert_eq!(told.take()[0].1, vec![MacChange::All]);
    t.set_ports(&[1, 2]);
    assert_eq!(told.take()[0].1, vec![MacChange::All]);
    t.set_config(cfg);
    assert_eq!(told.take()[0].1, vec![MacChange::All]);
    drop(told);
    // A listener gone is forgotten.
    send(&mut h, 1, UNTAGGED, A, B);
}
