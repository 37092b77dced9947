//! In-memory ports for tests and benchmarks: a [`MemoryPort`] (the switch's side, a
//! `PortIo`) and a [`MemoryPeer`] (the test's side) joined by two bounded queues.
//!
//! The peer injects frames that the port then receives, and collects what the port
//! sent. Packets move through the queues without copying: `recv` moves injected packets
//! into the worker's batch (its pool is not used), and `send` moves packets into the
//! peer's queue; only packets that do not fit go back to the pool. A peer that recycles
//! collected packets into new injections therefore allocates nothing in steady state.
//!
//! Both queues hold at most `capacity` packets. An injection into a full queue is
//! dropped and shows up as the port's `rx_dropped` (the port, as the counters' only
//! writer, moves the queue's overflow count into them on its next `recv`); a send into
//! a full queue is dropped and counted in `tx_dropped`. Each queue is a mutex taken once
//! per batch, and a poisoned lock is used anyway (the data is a plain queue).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use datapath::packet::Packet;
use datapath::port::PortIo;

use crate::counters::PortCounters;

/// One direction: frames in order and how many did not fit.
#[derive(Debug, Default)]
struct Queue {
    frames: VecDeque<Packet>,
    overflow: u64,
}

#[derive(Debug)]
struct Shared {
    capacity: usize,
    /// Injected by the peer, received by the port.
    to_port: Mutex<Queue>,
    /// Sent by the port, collected by the peer.
    from_port: Mutex<Queue>,
}

fn lock(q: &Mutex<Queue>) -> MutexGuard<'_, Queue> {
    q.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The switch's side of an in-memory port. See the module comment.
#[derive(Debug)]
pub struct MemoryPort {
    shared: Arc<Shared>,
    counters: Arc<PortCounters>,
}

/// The test's side of an in-memory port; clones share the same queues.
#[derive(Clone, Debug)]
pub struct MemoryPeer {
    shared: Arc<Shared>,
    counters: Arc<PortCounters>,
}

/// A port and its peer, each queue bounded to `capacity` packets.
pub fn pair(capacity: usize) -> (MemoryPort, MemoryPeer) {
    let shared =
        Arc::new(Shared { capacity, to_port: Mutex::default(), from_port: Mutex::default() });
    let counters = Arc::new(PortCounters::default());
    (
        MemoryPort { shared: shared.clone(), counters: counters.clone() },
        MemoryPeer { shared, counters },
    )
}

impl MemoryPort {
    /// This handle's counters.
    pub fn counters(&self) -> &Arc<PortCounters> {
        &self.counters
    }
}

impl MemoryPeer {
    /// Queues a copy of `frame` for the port to receive; false (and counted) when the
    /// queue is full.
    pub fn inject(&self, frame: &[u8]) -> bool {
        let mut q = lock(&self.shared.to_port);
        if q.frames.len() >= self.shared.capacity {
            q.overflow += 1;
            return false;
        }
        q.frames.push_back(Packet::from_slice(frame));
        true
    }

    /// Moves every packet of `packets` into the port's receive queue, in order; those
    /// that do not fit are dropped and counted. Returns how many were queued.
    pub fn inject_packets(&self, packets: &mut Vec<Packet>) -> usize {
        let mut q = lock(&self.shared.to_port);
        let room = self.shared.capacity.saturating_sub(q.frames.len());
        let n = packets.len().min(room);
        q.overflow += (packets.len() - n) as u64;
        q.frames.extend(packets.drain(..n));
        packets.clear();
        n
    }

    /// Frames queued for the port and not yet received.
    pub fn pending(&self) -> usize {
        lock(&self.shared.to_port).frames.len()
    }

    /// Takes everything the port has sent so far, oldest first.
    pub fn take_sent(&self) -> Vec<Packet> {
        lock(&self.shared.from_port).frames.drain(..).collect()
    }

    /// Appends everything the port has sent so far to `out` (reusing its allocation).
    pub fn drain_sent(&self, out: &mut Vec<Packet>) {
        out.extend(lock(&self.shared.from_port).frames.drain(..));
    }

    /// The port's counters (as its handle sees them).
    pub fn counters(&self) -> &Arc<PortCounters> {
        &self.counters
    }
}

impl PortIo for MemoryPort {
    fn recv(&mut self, rx: &mut Vec<Packet>, max: usize, _pool: &mut Vec<Packet>) -> usize {
        let (got, bytes, overflow) = {
            let mut q = lock(&self.shared.to_port);
            let n = q.frames.len().min(max);
            let mut bytes = 0u64;
            for p in q.frames.drain(..n) {
                bytes += p.len() as u64;
                rx.push(p);
            }
            (n, bytes, std::mem::take(&mut q.overflow))
        };
        self.counters.add_rx(got as u64, bytes);
        if overflow > 0 {
            self.counters.add_rx_dropped(overflow);
        }
        got
    }

    fn send(&mut self, tx: &mut Vec<Packet>, pool: &mut Vec<Packet>) {
        if tx.is_empty() {
            return;
        }
        let (mut sent, mut bytes, mut dropped) = (0u64, 0u64, 0u64);
        {
            let mut q = lock(&self.shared.from_port);
            let room = self.shared.capacity.saturating_sub(q.frames.len()) as u64;
            for p in tx.drain(..) {
                if sent < room {
                    sent += 1;
                    bytes += p.len() as u64;
                    q.frames.push_back(p);
                } else {
                    dropped += 1;
                    pool.push(p);
                }
            }
        }
        self.counters.add_tx(sent, bytes);
        if dropped > 0 {
            self.counters.add_tx_dropped(dropped);
        }
    }

    fn rx_fd(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        None
    }
}

/// An in-memory port shaped like [`crate::open`]'s result (one handle, for worker 0,
/// with synthetic interface facts, MTU 1500), and its peer. Like every port without a
/// vnet header, it gets offload-noted packets finished (`crate::resolve`).
pub fn open(name: &str, capacity: usize) -> (crate::OpenPort, MemoryPeer) {
    let (port, peer) = pair(capacity);
    let info = crate::InterfaceInfo::synthetic(name);
    let counters = port.counters.clone();
    let port = crate::resolve::Resolving::new(port, info.mtu, counters.clone());
    let open = crate::OpenPort { info, counters: vec![counters], handles: vec![Box::new(port)] };
    (open, peer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(i: u8) -> Vec<u8> {
        vec![i; 60 + i as usize]
    }

    #[test]
    fn injected_frames_are_received_in_order_and_sent_frames_collected() {
        let (mut port, peer) = pair(8);
        for i in 0..5 {
            assert!(peer.inject(&frame(i)));
        }
        assert_eq!(peer.pending(), 5);
        let (mut rx, mut pool) = (Vec::new(), Vec::new());
        assert_eq!(port.recv(&mut rx, 3, &mut pool), 3);
        assert_eq!(port.recv(&mut rx, 32, &mut pool), 2);
        assert_eq!(port.recv(&mut rx, 32, &mut pool), 0);
        let got: Vec<Vec<u8>> = rx.iter().map(|p| p.data().to_vec()).collect();
        assert_eq!(got, (0..5).map(frame).collect::<Vec<_>>());
        port.send(&mut rx, &mut pool);
        assert!(rx.is_empty());
        let sent = peer.take_sent();
        assert_eq!(
            sent.iter().map(|p| p.data().to_vec()).collect::<Vec<_>>(),
            (0..5).map(frame).collect::<Vec<_>>()
        );
        let s = port.counters().snapshot();
        assert_eq!((s.rx_packets, s.tx_packets), (5, 5));
        assert_eq!(s.rx_bytes, (0..5u64).map(|i| 60 + i).sum::<u64>());
        assert_eq!(s.tx_bytes, s.rx_bytes);
    }

    #[test]
    fn overflow_is_dropped_and_counted_both_ways() {
        let (mut port, peer) = pair(2);
        assert!(peer.inject(&frame(1)));
        assert!(peer.inject(&frame(2)));
        assert!(!peer.inject(&frame(3)));
        let mut more = vec![Packet::from_slice(&frame(4))];
        assert_eq!(peer.inject_packets(&mut more), 0);
        assert!(more.is_empty());
        let (mut rx, mut pool) = (Vec::new(), Vec::new());
        assert_eq!(port.recv(&mut rx, 32, &mut pool), 2);
        assert_eq!(port.counters().snapshot().rx_dropped, 2);

        let mut tx: Vec<Packet> = (0..5).map(|i| Packet::from_slice(&frame(i))).collect();
        port.send(&mut tx, &mut pool);
        assert!(tx.is_empty());
        assert_eq!(pool.len(), 3, "what did not fit went back to the pool");
        let s = port.counters().snapshot();
        assert_eq!((s.tx_packets, s.tx_dropped), (2, 3));
        let mut out = Vec::new();
        peer.drain_sent(&mut out);
        assert_eq!(out, vec![Packet::from_slice(&frame(0)), Packet::from_slice(&frame(1))]);
        // Room again after the peer drained.
        let mut tx = vec![Packet::from_slice(&frame(9))];
        port.send(&mut tx, &mut pool);
        assert_eq!(peer.take_sent().len(), 1);
    }

    #[test]
    fn open_gives_one_handle_with_shared_counters() {
        let (mut p, peer) = open("mem0", 4);
        assert_eq!(p.handles.len(), 1);
        assert_eq!(p.info.name, "mem0");
        assert!(p.handles[0].rx_fd().is_none());
        peer.inject(&frame(7));
        let (mut rx, mut pool) = (Vec::new(), Vec::new());
        assert_eq!(p.handles[0].recv(&mut rx, 8, &mut pool), 1);
        assert_eq!(p.stats().rx_packets, 1);
        assert_eq!(peer.counters().snapshot().rx_packets, 1);
    }
}
