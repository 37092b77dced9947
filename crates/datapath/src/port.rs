//! The batch interface between the worker loop and a port backend.
//!
//! A switch port (a veth end, a tap, a NIC queue, a pcap file) is opened by the `ports`
//! crate, which hands each worker its own [`PortIo`] for it: one receive queue (an
//! AF_PACKET fanout member, an AF_XDP socket of one queue, the tap's fd for the worker
//! that owns it) and a transmit path. The worker loop (`crate::runtime`) owns its
//! `PortIo`s outright, so no call here locks or shares anything with another worker.
//!
//! Buffers travel in [`Packet`]s and are recycled through a worker's `pool`: `recv`
//! refills packets taken from the pool (allocating only while the pool is empty), and
//! `send` returns what it sent to the pool, so a steady flow allocates nothing.
//!
//! Contract:
//! - `recv` and `send` never block; a backend with nothing to give returns 0.
//! - `send` takes every packet out of `tx`: what the backend cannot queue now (ring
//!   full, link down) it drops and counts in its own counters (which the `ports` crate
//!   shares with readers), never retries later, and never returns an error per packet.
//! - `rx_fd`, when given, becomes readable when frames are waiting; the worker sleeps
//!   in poll(2) on it when idle. A backend without one (in-memory, pcap) is polled.

use std::os::fd::BorrowedFd;

use crate::packet::Packet;

/// One worker's handle on one port. See the module comment for the contract.
pub trait PortIo: Send {
    /// Appends up to `max` received frames to `rx`, taking buffers from `pool` first.
    /// Returns how many were appended.
    fn recv(&mut self, rx: &mut Vec<Packet>, max: usize, pool: &mut Vec<Packet>) -> usize;

    /// Sends (or drops and counts) every packet of `tx`, leaving it empty; the packets'
    /// buffers go back to `pool`.
    fn send(&mut self, tx: &mut Vec<Packet>, pool: &mut Vec<Packet>);

    /// A descriptor that polls readable when frames wait to be received.
    fn rx_fd(&self) -> Option<BorrowedFd<'_>>;

    /// Frames the backend's receive ring holds before the kernel drops (the fewest of
    /// its rings'), where it has one; the worker sizes its naps under overload by it.
    fn rx_depth(&self) -> Option<usize> {
        None
    }
}
