//! Ports that take frames as bytes only (AF_XDP, pcap, memory) behind one step that does
//! what a packet's offload note asks before the backend sees it: a TCP super-frame is
//! cut into segments of the noted size and a partial checksum is finished
//! (`datapath::rewrite::resolve_offload`), as the kernel's GSO would have for such a
//! port. Ports with a vnet header (afpacket, tap) pass the note on instead.
//!
//! Invariant: the inner backend's `send` never sees a noted packet. A packet whose note
//! cannot be honoured (a TCP/UDP header the frame no longer has, e.g. under a pushed
//! MPLS label; UDP datagrams of the noted size that would exceed the MTU) is dropped
//! and counted as a transmit error of the handle. Unnoted packets cost one check each.

use std::os::fd::BorrowedFd;
use std::sync::Arc;

use datapath::packet::Packet;
use datapath::port::PortIo;
use datapath::rewrite::resolve_offload;

use crate::counters::PortCounters;

/// A backend handle whose `send` first resolves offload notes. See the module comment.
pub(crate) struct Resolving<P> {
    inner: P,
    /// Most bytes of an IP packet on the port.
    mtu: usize,
    /// Most bytes of a frame on the port.
    max_frame: usize,
    /// The inner handle's counters (this runs in its worker, so the one-writer rule
    /// holds).
    counters: Arc<PortCounters>,
    /// Scratch for the resolved batch (empty between calls).
    out: Vec<Packet>,
}

impl<P: PortIo> Resolving<P> {
    /// `inner` on a port of `mtu`, counting into `counters` (the inner handle's).
    pub(crate) fn new(inner: P, mtu: u32, counters: Arc<PortCounters>) -> Resolving<P> {
        let mtu = mtu as usize;
        Resolving {
            inner,
            mtu,
            // Ethernet header and one VLAN tag.
            max_frame: mtu + 18,
            counters,
            out: Vec::new(),
        }
    }

    /// The handle's counters.
    pub(crate) fn counters(&self) -> &Arc<PortCounters> {
        &self.counters
    }
}

impl<P: PortIo> PortIo for Resolving<P> {
    fn recv(&mut self, rx: &mut Vec<Packet>, max: usize, pool: &mut Vec<Packet>) -> usize {
        self.inner.recv(rx, max, pool)
    }

    fn send(&mut self, tx: &mut Vec<Packet>, pool: &mut Vec<Packet>) {
        if tx.iter().all(|p| p.offload().is_none()) {
            return self.inner.send(tx, pool);
        }
        let mut out = std::mem::take(&mut self.out);
        let mut errors = 0;
        for p in tx.drain(..) {
            if resolve_offload(p, self.mtu, self.max_frame, pool, &mut out).is_err() {
                errors += 1;
            }
        }
        if errors > 0 {
            self.counters.add_tx_errors(errors);
        }
        self.inner.send(&mut out, pool);
        self.out = out;
    }

    fn rx_fd(&self) -> Option<BorrowedFd<'_>> {
        self.inner.rx_fd()
    }

    fn rx_depth(&self) -> Option<usize> {
        self.inner.rx_depth()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datapath::packet::{Gso, GsoKind, Offload};

    /// An Ethernet/IPv4/TCP frame with `payload` bytes and a partial checksum (the
    /// pseudo-header sum, which this test does not need to be right: it checks that
    /// the backend gets segments, and counts).
    fn tcp(payload: usize) -> Vec<u8> {
        let total = (40 + payload) as u16;
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
        f.extend_from_slice(&[0x45, 0, (total >> 8) as u8, total as u8, 0, 1, 0x40, 0]);
        f.extend_from_slice(&[64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        f.extend_from_slice(&[0x30, 0x39, 0, 80, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10]);
        f.extend_from_slice(&[0xff, 0xff, 0, 0, 0, 0]);
        f.extend((0..payload).map(|i| i as u8));
        f
    }

    #[test]
    fn the_backend_gets_segments_and_unhonourable_notes_are_counted() {
        let (port, peer) = crate::memory::pair(64);
        let counters = port.counters().clone();
        let mut r = Resolving::new(port, 1500, counters.clone());
        let mut big = Packet::from_slice(&tcp(4000));
        let tso =
            |kind| Offload { partial_csum: true, gso: Some(Gso { kind, size: 1000, ecn: false }) };
        big.set_offload(Some(tso(GsoKind::TcpV4)));
        let mut udp = Packet::from_slice(&tcp(100));
        udp.set_offload(Some(tso(GsoKind::Udp)));
        let plain = Packet::from_slice(&[7u8; 60]);
        let mut tx = vec![big, udp, plain.clone()];
        let mut pool = Vec::new();
        r.send(&mut tx, &mut pool);
        assert!(tx.is_empty());
        let sent = peer.take_sent();
        assert_eq!(sent.len(), 5, "four segments and the plain frame");
        assert!(sent[..4].iter().all(|p| p.len() == 14 + 40 + 1000));
        assert_eq!(sent[4], plain);
        let st = counters.snapshot();
        assert_eq!((st.tx_packets, st.tx_errors), (5, 1));
    }
}
