//! The worker runtime: N forwarding threads, each running rx → parse → cache → pipeline
//! → tx in batches over the ports it was given.
//!
//! # Structure
//!
//! Each worker owns its [`WorkerPort`]s outright (one [`PortIo`] per switch port: its
//! share of the port's receive queues and its own transmit path), its
//! [`WorkerState`] (counters, exact-match cache) and, in standalone mode, its handle on
//! the learning switch ([`NormalWorker`]). Nothing is shared between workers per packet:
//! the datapath version is taken per batch, counters are per worker. How flows are
//! spread over workers is the backends' business (AF_PACKET fanout by flow hash, one
//! tap queue per worker), which keeps a flow on one worker and so in order.
//!
//! One round of the loop visits every port once, starting one port further each round,
//! and takes at most [`BUDGET`] frames from each, so a busy port cannot starve another:
//! under overload every input port gets the same share of the worker. Frames are
//! processed in batches of up to [`BATCH`](crate::pipeline::BATCH) as they are gathered;
//! what a round produces is queued per output port and sent at the end of the round (one
//! `send` per port per round).
//!
//! # Polling
//!
//! While frames come the worker busy-polls. After [`SPIN_ROUNDS`] rounds that found
//! nothing it sleeps in poll(2) on every port's receive descriptor and a stop event (and,
//! worker 0, the injection event), so an idle switch costs no CPU and the first frame
//! wakes it at once. Ports without a descriptor (in-memory, pcap replay) are checked
//! every [`IDLE_TICK`] instead.
//!
//! Spinning only pays while the kernel's receive work for the ports runs on another CPU:
//! frames then arrive during the spin. When it shares the worker's CPU (threaded NAPI
//! pinned there, or softirqs deferred to ksoftirqd), a spinning worker holds the very CPU
//! that would bring the next frames. So the spin adapts (`Spin`): after
//! [`FRUITLESS_SPINS`] spins in a row that found nothing, the worker sleeps as soon as a
//! round comes back empty, and tries one full spin again every [`PROBE_EVERY`] sleeps.
//!
//! # Scheduling
//!
//! A worker asked to be real-time ([`WorkerSpec::realtime`]) runs SCHED_FIFO at the
//! lowest real-time priority. On a CPU shared with the kernel's receive threads this is
//! what keeps forwarding at its peak under overload: woken by a batch of frames, the
//! worker preempts the receive thread at its next poll boundary, so the kernel only
//! receives what the worker has room to forward and the excess stays in the device's
//! queue (where a veth sender is held back, or a NIC drops it before any copy). As an
//! ordinary thread, the worker waits for the receive thread's time slice to end, by
//! which time its ring has overflowed and the kernel spent the CPU on frames it then
//! drops (receive livelock). So that ordinary threads on the CPU are never shut out, a
//! real-time worker that has not slept for [`RT_RUN_MAX`] sleeps [`RT_BREATHER`].
//!
//! # Batching under overload
//!
//! Preempting the receive thread at every poll boundary hands the worker 64 frames per
//! wakeup: two context switches and a poll(2) per 64 frames. When a real-time worker
//! shares its CPU with its receive work (its spins find nothing) and wakeup after wakeup
//! brings a full poll's worth ([`NAP_ENTER_FRAMES`], [`NAP_ENTER_DRAINS`] times in a
//! row: frames are queued at the device), it naps instead of polling once its rings are
//! empty (`Nap`): the receive thread fills them meanwhile, hundreds of frames a time.
//! A nap may bring up to three quarters of the shallowest receive ring of the worker's
//! ports ([`PortIo::rx_depth`]; [`NAP_MAX_FRAMES`] where no port says): the nap doubles
//! while it brings under half that and halves past it, within [`NAP_MIN`]..[`NAP_MAX`].
//! Napping stops when a nap brings under 70 % of the best rate seen while napping
//! (nothing is queued at the device any more) or under [`NAP_ENTER_FRAMES`] / 2 frames:
//! below overload the worker wakes at the first frame as before, so napping never adds
//! latency to a switch that keeps up.
//!
//! # Injecting packets (packet-outs)
//!
//! The agent runs a packet-out itself ([`Batch::packet_out`](crate::pipeline::Batch::packet_out)),
//! but the ports' handles belong to the workers. An [`Injector`] ([`Runtime::injector`])
//! queues what a packet-out produced for **worker 0** alone (one consumer keeps
//! packet-outs in order) and writes an event that worker also sleeps on. Worker 0 looks
//! at the queue once per round with one relaxed atomic load (the lock is taken only when
//! something is queued), then sends the injected packets with the round's other output,
//! NORMAL ones through its NORMAL handler. The queue holds at most [`INJECT_CAPACITY`]
//! packets.
//!
//! # Ports at run time
//!
//! [`Runtime::ports`] gives a [`PortChanger`] that adds a port to every worker (one
//! [`PortIo`] each) or takes one away while they forward. Each worker has a mailbox: the
//! change is queued there, a flag set and the worker's event written; the worker looks at
//! the flag once per round (one relaxed load) and applies what is queued before its next
//! round. An addition returns once every worker has the port; a removal once every
//! worker has dropped its handle on it (so the caller may close the interface); either
//! fails after [`CHANGE_WAIT`] without an answer. Packets that a
//! worker had queued for a port it drops are returned to its pool, as are packets a
//! batch outputs to a port the worker does not have.
//!
//! # Stopping
//!
//! [`Runtime::stop`] sets a flag and writes the stop event; each worker finishes its
//! round, sends what it holds and returns its ports' handles, dropped with the thread.
//! Injectors then refuse packets ([`InjectError::Stopped`]); what was still queued is
//! dropped.

use std::fmt;
use std::io;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::eventfd::{EfdFlags, EventFd};

use crate::packet::Packet;
use crate::pipeline::{Datapath, NormalHandler, Outputs, RuleTable, WorkerState, BATCH};
use crate::port::PortIo;

/// Frames taken from one port per round.
pub const BUDGET: usize = BATCH;
/// Empty rounds before a worker sleeps in poll(2).
pub const SPIN_ROUNDS: u32 = 256;
/// How often an idle worker looks at ports that have no descriptor to poll.
pub const IDLE_TICK: Duration = Duration::from_millis(1);
/// Spins in a row that found nothing before the worker stops spinning.
pub const FRUITLESS_SPINS: u32 = 8;
/// Once it stopped spinning, every this many sleeps the worker spins once more.
pub const PROBE_EVERY: u32 = 64;
/// Longest a real-time worker runs without sleeping.
pub const RT_RUN_MAX: Duration = Duration::from_millis(4);
/// How long a real-time worker that ran [`RT_RUN_MAX`] sleeps.
pub const RT_BREATHER: Duration = Duration::from_micros(50);
/// Frames a wakeup's drain must bring to count towards napping.
pub const NAP_ENTER_FRAMES: usize = 48;
/// Drains of [`NAP_ENTER_FRAMES`] in a row before the worker naps.
pub const NAP_ENTER_DRAINS: u32 = 8;
/// The shortest and the longest nap.
pub const NAP_MIN: Duration = Duration::from_micros(50);
pub const NAP_MAX: Duration = Duration::from_millis(1);
/// Frames one nap may bring before the next is halved, where no port tells its receive
/// ring's depth.
pub const NAP_MAX_FRAMES: usize = 768;
/// Packet buffers a worker keeps for reuse (more are freed).
const POOL_MAX: usize = 4096;
/// Most packets (`tx` and `normal` together) an [`Injector`]'s queue holds.
pub const INJECT_CAPACITY: usize = 4096;
/// Longest a [`PortChanger`] waits for a worker to take a change.
pub const CHANGE_WAIT: Duration = Duration::from_secs(2);

/// One worker's handle on a switch port.
pub struct WorkerPort {
    /// The OpenFlow port number (what rules match as in_port and output to).
    pub no: u32,
    pub io: Box<dyn PortIo>,
}

/// A worker's handle on the NORMAL (learning switch) pipeline.
pub trait NormalWorker: NormalHandler + Send {
    /// Called before a batch's NORMAL packets are handed over, with the batch's time.
    fn begin_batch(&mut self, now_ns: u64);
}

impl NormalWorker for crate::normal::NormalSwitch {
    fn begin_batch(&mut self, now_ns: u64) {
        crate::normal::NormalSwitch::begin_batch(self, now_ns)
    }
}

/// What one worker thread gets.
pub struct WorkerSpec {
    /// Pin the thread to this CPU.
    pub cpu: Option<usize>,
    pub ports: Vec<WorkerPort>,
    /// Exact-match cache entries (0: none).
    pub cache_entries: usize,
    /// Where packets output to NORMAL go (none: they are dropped and counted).
    pub normal: Option<Box<dyn NormalWorker>>,
    /// Run SCHED_FIFO at the lowest real-time priority (see the module comment).
    pub realtime: bool,
}

/// The running workers.
pub struct Runtime {
    threads: Vec<JoinHandle<()>>,
    stop: Arc<Stop>,
    inject: Arc<Inject>,
    /// Per worker, in order: its mailbox for port changes.
    mailboxes: Arc<[Arc<Mailbox>]>,
    /// Per worker that asked to be real-time: why it could not be (none: it is).
    refused: Vec<Option<String>>,
}

/// How the workers that asked for real-time scheduling got on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Realtime {
    /// No worker asked.
    NotAsked,
    /// Every worker that asked runs SCHED_FIFO.
    Granted,
    /// At least one worker was refused (it runs as an ordinary thread): the first reason.
    Refused(String),
}

/// The stop flag and the event that wakes sleeping workers.
struct Stop {
    flag: AtomicBool,
    event: EventFd,
}

/// A change to a worker's ports.
enum Change {
    /// Take port `.0`, then say so on `.1`.
    Add(WorkerPort, std::sync::mpsc::SyncSender<()>),
    /// Drop port `no`'s handle, then say so on `done`.
    Remove { no: u32, done: std::sync::mpsc::SyncSender<()> },
}

/// One worker's queue of port changes. Invariant: `pending` is true whenever `queue`
/// holds a change (it is set under the lock after pushing, cleared under the lock by
/// the worker as it takes them).
struct Mailbox {
    pending: AtomicBool,
    /// The changes; none once the worker has stopped (a change posted then is dropped,
    /// so a removal waiting for it fails at once).
    queue: Mutex<Option<Vec<Change>>>,
    /// Written with each change; the worker polls it while asleep.
    event: EventFd,
}

impl Mailbox {
    fn new() -> io::Result<Mailbox> {
        Ok(Mailbox {
            pending: AtomicBool::new(false),
            queue: Mutex::new(Some(Vec::new())),
            event: EventFd::from_flags(EfdFlags::EFD_NONBLOCK).map_err(io::Error::from)?,
        })
    }

    fn post(&self, c: Change) {
        {
            let mut q = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(q) = q.as_mut() else { return };
            q.push(c);
            self.pending.store(true, Ordering::Release);
        }
        // A full counter only means a wakeup is already pending.
        let _ = self.event.write(1);
    }

    fn take(&self) -> Vec<Change> {
        let mut q = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        self.pending.store(false, Ordering::Relaxed);
        let _ = self.event.read();
        q.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// The worker has stopped: drops what is queued and refuses later changes.
    fn close(&self) {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner).take();
    }
}

/// Adds ports to the running workers and takes them away (see the module comment).
/// Cheap to clone.
#[derive(Clone)]
pub struct PortChanger {
    mailboxes: Arc<[Arc<Mailbox>]>,
}

/// Why a port change did not happen (in full).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeError {
    /// An add gave `given` handles for `workers` workers.
    TooFewHandles { given: usize, workers: usize },
    /// A worker did not take the change within [`CHANGE_WAIT`] (or has stopped).
    NoAnswer { worker: usize },
}

impl fmt::Display for ChangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChangeError::TooFewHandles { given, workers } => {
                write!(f, "{given} queue handle(s) for {workers} workers: every worker needs one")
            }
            ChangeError::NoAnswer { worker } => write!(
                f,
                "worker {worker} did not take the change within {} s",
                CHANGE_WAIT.as_secs()
            ),
        }
    }
}

impl std::error::Error for ChangeError {}

impl PortChanger {
    /// How many workers there are (an add needs one handle each).
    pub fn workers(&self) -> usize {
        self.mailboxes.len()
    }

    /// Gives port `no` to every worker: `ios[w]` to worker `w` (handles beyond the
    /// workers' number are dropped). Returns once every worker has it: packets output
    /// to it from then on are sent.
    pub fn add(&self, no: u32, ios: Vec<Box<dyn PortIo>>) -> Result<(), ChangeError> {
        if ios.len() < self.mailboxes.len() {
            return Err(ChangeError::TooFewHandles {
                given: ios.len(),
                workers: self.mailboxes.len(),
            });
        }
        let mut waits = Vec::with_capacity(self.mailboxes.len());
        for (m, io) in self.mailboxes.iter().zip(ios) {
            let (done, wait) = std::sync::mpsc::sync_channel(1);
            m.post(Change::Add(WorkerPort { no, io }, done));
            waits.push(wait);
        }
        Self::wait(waits)
    }

    /// Takes port `no` away from every worker; returns once each has dropped its handle.
    /// A worker that has no such port just answers.
    pub fn remove(&self, no: u32) -> Result<(), ChangeError> {
        let mut waits = Vec::with_capacity(self.mailboxes.len());
        for m in self.mailboxes.iter() {
            let (done, wait) = std::sync::mpsc::sync_channel(1);
            m.post(Change::Remove { no, done });
            waits.push(wait);
        }
        Self::wait(waits)
    }

    /// Waits for every worker's answer, [`CHANGE_WAIT`] in all.
    fn wait(waits: Vec<std::sync::mpsc::Receiver<()>>) -> Result<(), ChangeError> {
        let deadline = Instant::now() + CHANGE_WAIT;
        for (worker, w) in waits.into_iter().enumerate() {
            let left = deadline.saturating_duration_since(Instant::now());
            w.recv_timeout(left).map_err(|_| ChangeError::NoAnswer { worker })?;
        }
        Ok(())
    }
}

/// Hands packets from other threads (the agent's packet-outs) to worker 0, which sends
/// them on its ports (see the module comment). Cheap to clone; stays usable after the
/// runtime stopped, when [`send`](Self::send) fails with [`InjectError::Stopped`].
#[derive(Clone)]
pub struct Injector {
    inner: Arc<Inject>,
}

/// Why [`Injector::send`] queued nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InjectError {
    /// The queue holds `queued` packets and cannot take `adding` more
    /// ([`INJECT_CAPACITY`] in all): worker 0 is behind.
    Full { queued: usize, adding: usize },
    /// The runtime has stopped (or never had a worker).
    Stopped,
}

impl fmt::Display for InjectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InjectError::Full { queued, adding } => write!(
                f,
                "injection queue full: {queued} packets queued, {adding} more would exceed {INJECT_CAPACITY}"
            ),
            InjectError::Stopped => f.write_str("the forwarding workers have stopped"),
        }
    }
}

impl std::error::Error for InjectError {}

/// The injection queue. Invariant: `queued` equals the packets in `state.out` whenever
/// the lock is free; it is written only under the lock.
struct Inject {
    queued: AtomicUsize,
    state: Mutex<Injected>,
    /// Written on every send; worker 0 polls it while asleep.
    event: EventFd,
}

struct Injected {
    out: Outputs,
    stopped: bool,
}

impl Inject {
    fn new(stopped: bool) -> io::Result<Inject> {
        Ok(Inject {
            queued: AtomicUsize::new(0),
            state: Mutex::new(Injected { out: Outputs::new(), stopped }),
            event: EventFd::from_flags(EfdFlags::EFD_NONBLOCK).map_err(io::Error::from)?,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Injected> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Swaps everything queued into `out` (empty), leaving `out`'s buffers to the queue.
    fn take(&self, out: &mut Outputs) {
        let mut q = self.lock();
        std::mem::swap(&mut q.out, out);
        self.queued.store(0, Ordering::Relaxed);
    }

    /// Refuses every later send and drops what is queued.
    fn close(&self) {
        let mut q = self.lock();
        q.stopped = true;
        q.out.clear();
        self.queued.store(0, Ordering::Relaxed);
    }
}

impl Injector {
    /// Queues `out` for worker 0, which sends `out.tx` on its ports (as they are: their
    /// transmit counts were taken when the packet-out produced them) and hands
    /// `out.normal` to its NORMAL handler (counting what that sends, as for its own
    /// packets; without a handler they are dropped). Packets keep their order, across
    /// calls too. All or nothing: when the queue cannot take every packet of `out`, or
    /// the runtime has stopped, nothing of it is queued.
    pub fn send(&self, mut out: Outputs) -> Result<(), InjectError> {
        self.offer(&mut out)
    }

    /// [`Injector::send`] that leaves `out` as it was when nothing of it is queued (so
    /// that the caller can offer it again once worker 0 caught up), and empty otherwise.
    pub fn offer(&self, out: &mut Outputs) -> Result<(), InjectError> {
        let adding = out.tx.len() + out.normal.len();
        {
            let mut q = self.inner.lock();
            if q.stopped {
                return Err(InjectError::Stopped);
            }
            let queued = q.out.tx.len() + q.out.normal.len();
            if queued + adding > INJECT_CAPACITY {
                return Err(InjectError::Full { queued, adding });
            }
            if adding == 0 {
                return Ok(());
            }
            q.out.tx.append(&mut out.tx);
            q.out.normal.append(&mut out.normal);
            self.inner.queued.store(queued + adding, Ordering::Relaxed);
        }
        // A full counter only means a wakeup is already pending.
        let _ = self.inner.event.write(1);
        Ok(())
    }

    /// Packets queued and not yet taken by worker 0.
    pub fn queued(&self) -> usize {
        self.inner.queued.load(Ordering::Relaxed)
    }
}

impl Runtime {
    /// Starts one thread per spec, forwarding through `dp`. `start` is the time origin
    /// of the batches' `now` (the one the agent uses for idle timeouts).
    pub fn start<C: RuleTable>(
        dp: Arc<Datapath<C>>,
        workers: Vec<WorkerSpec>,
        start: Instant,
    ) -> io::Result<Runtime> {
        let event = EventFd::from_flags(EfdFlags::EFD_NONBLOCK).map_err(io::Error::from)?;
        let stop = Arc::new(Stop { flag: AtomicBool::new(false), event });
        let inject = Arc::new(Inject::new(workers.is_empty())?);
        let mailboxes =
            workers.iter().map(|_| Mailbox::new().map(Arc::new)).collect::<io::Result<Vec<_>>>()?;
        let mut rt = Runtime {
            threads: Vec::with_capacity(workers.len()),
            stop,
            inject,
            mailboxes: mailboxes.into(),
            refused: Vec::new(),
        };
        let (told, told_rx) = std::sync::mpsc::channel();
        let mut asked = 0;
        for (i, spec) in workers.into_iter().enumerate() {
            let (dp, stop) = (dp.clone(), rt.stop.clone());
            let inject = (i == 0).then(|| rt.inject.clone());
            let mailbox = rt.mailboxes[i].clone();
            let told = told.clone();
            asked += usize::from(spec.realtime);
            // On failure `rt` is dropped: the workers already started stop.
            let t = std::thread::Builder::new().name(format!("worker{i}")).spawn(move || {
                if let Some(cpu) = spec.cpu {
                    core_affinity::set_for_current(core_affinity::CoreId { id: cpu });
                }
                let realtime = spec.realtime && {
                    let made = become_realtime();
                    let ok = made.is_ok();
                    let _ = told.send(made.err());
                    ok
                };
                Worker::new(&dp, spec, start, inject, mailbox, realtime).run(&stop);
            })?;
            rt.threads.push(t);
        }
        drop(told);
        // A worker that died before telling is counted as refused.
        rt.refused = (0..asked)
            .map(|_| told_rx.recv().unwrap_or_else(|_| Some("worker ended".into())))
            .collect();
        Ok(rt)
    }

    /// Whether the workers that asked for real-time scheduling got it.
    pub fn realtime(&self) -> Realtime {
        if self.refused.is_empty() {
            return Realtime::NotAsked;
        }
        match self.refused.iter().flatten().next() {
            Some(why) => Realtime::Refused(why.clone()),
            None => Realtime::Granted,
        }
    }

    /// A handle that queues packets for worker 0 to send (see [`Injector`]).
    pub fn injector(&self) -> Injector {
        Injector { inner: self.inject.clone() }
    }

    /// A handle that adds ports to the workers and removes them (see [`PortChanger`]).
    pub fn ports(&self) -> PortChanger {
        PortChanger { mailboxes: self.mailboxes.clone() }
    }

    /// Stops every worker and waits for them.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.inject.close();
        self.stop.flag.store(true, Ordering::Relaxed);
        // A full counter only means a wakeup is already pending.
        let _ = self.stop.event.write(1);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        for m in self.mailboxes.iter() {
            m.close();
        }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.halt();
    }
}

/// Makes the calling thread SCHED_FIFO at the lowest real-time priority.
fn become_realtime() -> Result<(), String> {
    use thread_priority::{
        set_thread_priority_and_policy, thread_native_id, Error, RealtimeThreadSchedulePolicy,
        ThreadPriority, ThreadSchedulePolicy,
    };
    let fifo = ThreadSchedulePolicy::Realtime(RealtimeThreadSchedulePolicy::Fifo);
    set_thread_priority_and_policy(thread_native_id(), ThreadPriority::Min, fifo).map_err(|e| {
        match e {
            Error::OS(errno) => format!(
                "SCHED_FIFO: {} (needs CAP_SYS_NICE or an RLIMIT_RTPRIO of 1)",
                io::Error::from_raw_os_error(errno)
            ),
            other => format!("SCHED_FIFO: {other}"),
        }
    })
}

/// The adaptive spin of a worker (see the module comment).
#[derive(Debug, Default)]
struct Spin {
    /// Full spins in a row that found nothing.
    fruitless: u32,
    /// Sleeps since the worker stopped spinning.
    sleeps: u32,
}

impl Spin {
    /// Empty rounds to spin before sleeping now.
    fn rounds(&self) -> u32 {
        if self.fruitless < FRUITLESS_SPINS || self.sleeps.is_multiple_of(PROBE_EVERY) {
            SPIN_ROUNDS
        } else {
            1
        }
    }

    /// Frames came after `empty` empty rounds.
    fn found(&mut self, empty: u32) {
        if empty > 0 {
            self.fruitless = 0;
            self.sleeps = 0;
        }
    }

    /// Whether spins keep finding nothing (the receive work shares the worker's CPU).
    fn futile(&self) -> bool {
        self.fruitless >= FRUITLESS_SPINS
    }

    /// The worker goes to sleep after `empty` empty rounds.
    fn sleeping(&mut self, empty: u32) {
        if empty >= SPIN_ROUNDS {
            self.fruitless = self.fruitless.saturating_add(1);
        }
        if self.fruitless >= FRUITLESS_SPINS {
            self.sleeps = self.sleeps.wrapping_add(1);
        }
    }
}

/// Batching under overload: when to nap and for how long (see the module comment).
#[derive(Debug)]
struct Nap {
    /// Most frames one nap may bring.
    most: usize,
    /// The current nap; none: the worker sleeps in poll(2) when its rings are empty.
    len: Option<Duration>,
    /// Drains of [`NAP_ENTER_FRAMES`] or more in a row.
    full: u32,
    /// The best rate a nap brought since napping began, in frames per second.
    peak: f64,
}

impl Nap {
    /// Naps that bring at most `most` frames.
    fn new(most: usize) -> Nap {
        Nap { most, len: None, full: 0, peak: 0.0 }
    }

    /// The worker's rings are empty after `frames` came since it last slept; `shared`:
    /// its receive work runs on its CPU. Returns how long to nap, if at all.
    fn after_drain(&mut self, frames: usize, shared: bool) -> Option<Duration> {
        let Some(len) = self.len else {
            self.full = if frames >= NAP_ENTER_FRAMES && shared { self.full + 1 } else { 0 };
            if self.full >= NAP_ENTER_DRAINS {
                self.len = Some(NAP_MIN);
                self.peak = 0.0;
            }
            return self.len;
        };
        let rate = frames as f64 / len.as_secs_f64();
        if !shared || frames < NAP_ENTER_FRAMES / 2 || rate < 0.7 * self.peak {
            *self = Nap::new(self.most);
            return None;
        }
        self.peak = self.peak.max(rate);
        let next = if frames > self.most {
            len / 2
        } else if frames < self.most / 2 {
            len * 2
        } else {
            len
        };
        self.len = Some(next.clamp(NAP_MIN, NAP_MAX));
        self.len
    }
}

/// One worker's loop state.
struct Worker<'d, C: RuleTable> {
    dp: &'d Datapath<C>,
    state: WorkerState,
    ports: Vec<WorkerPort>,
    normal: Option<Box<dyn NormalWorker>>,
    start: Instant,
    pool: Vec<Packet>,
    rx: Vec<Packet>,
    batch: Vec<(Packet, u32)>,
    out: Outputs,
    /// Per port (same index as `ports`): frames to send at the end of the round.
    tx: Vec<Vec<Packet>>,
    /// The next round starts at this port.
    first: usize,
    /// Per port: its descriptor reported an error; not polled any more.
    broken: Vec<bool>,
    /// The injection queue, for worker 0 only.
    inject: Option<Arc<Inject>>,
    /// Port changes for this worker.
    mailbox: Arc<Mailbox>,
    /// The thread runs SCHED_FIFO.
    realtime: bool,
}

impl<'d, C: RuleTable> Worker<'d, C> {
    fn new(
        dp: &'d Datapath<C>,
        spec: WorkerSpec,
        start: Instant,
        inject: Option<Arc<Inject>>,
        mailbox: Arc<Mailbox>,
        realtime: bool,
    ) -> Self {
        let n = spec.ports.len();
        Worker {
            dp,
            state: dp.worker(spec.cache_entries),
            ports: spec.ports,
            normal: spec.normal,
            start,
            pool: Vec::with_capacity(POOL_MAX),
            rx: Vec::with_capacity(BUDGET),
            batch: Vec::with_capacity(BATCH),
            out: Outputs::new(),
            tx: (0..n).map(|_| Vec::with_capacity(BATCH)).collect(),
            first: 0,
            broken: vec![false; n],
            inject,
            mailbox,
            realtime,
        }
    }

    /// The most frames one nap may bring with the current ports.
    fn nap_frames(&self) -> usize {
        let depth = self.ports.iter().filter_map(|p| p.io.rx_depth()).min();
        depth.map_or(NAP_MAX_FRAMES, |d| d * 3 / 4)
    }

    /// Applies the port changes queued in the mailbox.
    fn apply_changes(&mut self) {
        for c in self.mailbox.take() {
            match c {
                Change::Add(p, done) => {
                    if let Some(i) = self.ports.iter().position(|q| q.no == p.no) {
                        // A port re-added under a number this worker still holds: the
                        // new handle replaces the old.
                        self.ports[i] = p;
                        self.broken[i] = false;
                        self.pool.append(&mut self.tx[i]);
                    } else {
                        self.ports.push(p);
                        self.tx.push(Vec::with_capacity(BATCH));
                        self.broken.push(false);
                    }
                    let _ = done.send(());
                }
                Change::Remove { no, done } => {
                    if let Some(i) = self.ports.iter().position(|q| q.no == no) {
                        drop(self.ports.remove(i));
                        let mut q = self.tx.remove(i);
                        self.pool.append(&mut q);
                        self.broken.remove(i);
                        if self.first >= self.ports.len() {
                            self.first = 0;
                        }
                    }
                    let _ = done.send(());
                }
            }
        }
    }

    fn run(&mut self, stop: &Stop) {
        let mut empty = 0u32;
        let mut spin = Spin::default();
        let mut nap = Nap::new(self.nap_frames());
        let mut slept = Instant::now();
        // Frames since the worker last slept or found its rings empty.
        let mut drained = 0;
        while !stop.flag.load(Ordering::Relaxed) {
            if self.mailbox.pending.load(Ordering::Acquire) {
                self.apply_changes();
                nap = Nap::new(self.nap_frames());
            }
            let got = self.round();
            if got > 0 {
                drained += got;
                spin.found(empty);
                empty = 0;
                if self.realtime && slept.elapsed() >= RT_RUN_MAX {
                    std::thread::sleep(RT_BREATHER);
                    slept = Instant::now();
                }
            } else if let Some(len) = (drained > 0)
                .then(|| nap.after_drain(drained, self.realtime && spin.futile()))
                .flatten()
            {
                drained = 0;
                std::thread::sleep(len);
                slept = Instant::now();
            } else {
                drained = 0;
                empty += 1;
                if empty >= spin.rounds() {
                    spin.sleeping(empty);
                    self.sleep(stop);
                    slept = Instant::now();
                    empty = 0;
                }
            }
        }
    }

    /// One round over the ports; returns the frames received (and packets injected).
    fn round(&mut self) -> usize {
        let n = self.ports.len();
        let mut got = 0;
        for k in 0..n {
            let i = (self.first + k) % n;
            let port = &mut self.ports[i];
            let m = port.io.recv(&mut self.rx, BUDGET, &mut self.pool);
            got += m;
            let no = port.no;
            let mut rx = std::mem::take(&mut self.rx);
            for p in rx.drain(..) {
                self.batch.push((p, no));
                if self.batch.len() == BATCH {
                    self.process();
                }
            }
            self.rx = rx;
        }
        if n > 0 {
            self.first = (self.first + 1) % n;
        }
        if !self.batch.is_empty() {
            self.process();
        }
        if self.inject.as_ref().is_some_and(|i| i.queued.load(Ordering::Relaxed) != 0) {
            got += self.injected();
        }
        for (port, q) in self.ports.iter_mut().zip(self.tx.iter_mut()) {
            if !q.is_empty() {
                port.io.send(q, &mut self.pool);
            }
        }
        self.dp.flush_offers(&mut self.state);
        self.pool.truncate(POOL_MAX);
        got
    }

    /// Runs the gathered batch through the pipeline and queues what it produced.
    fn process(&mut self) {
        let now = self.start.elapsed().as_nanos() as u64;
        {
            let mut b = self.dp.batch(&mut self.state, now);
            b.process_batch(&mut self.batch, &mut self.out);
        }
        self.dispatch(now);
    }

    /// Takes what injectors queued into `out` and queues it like the pipeline's output;
    /// returns how many packets that was.
    fn injected(&mut self) -> usize {
        let Some(inject) = self.inject.as_ref() else {
            return 0;
        };
        inject.take(&mut self.out);
        let n = self.out.tx.len() + self.out.normal.len();
        let now = self.start.elapsed().as_nanos() as u64;
        self.dispatch(now);
        n
    }

    /// Hands `out`'s NORMAL packets to the handler (counting what it sends) and queues
    /// `out.tx` per port, leaving `out` empty.
    fn dispatch(&mut self, now: u64) {
        match self.normal.as_mut() {
            Some(h) if !self.out.normal.is_empty() => {
                h.begin_batch(now);
                let before = self.out.tx.len();
                self.out.drain_normal(&mut **h);
                self.dp.count_tx(&self.state, &self.out.tx[before..]);
            }
            _ => self.out.normal.clear(),
        }
        for t in self.out.tx.drain(..) {
            match self.ports.iter().position(|p| p.no == t.port) {
                Some(i) => self.tx[i].push(t.packet),
                // Not a port of this worker (a port being removed): dropped.
                None => self.pool.push(t.packet),
            }
        }
    }

    /// Waits for frames (or the stop event) without using the CPU.
    fn sleep(&mut self, stop: &Stop) {
        let mut fds: Vec<PollFd> = Vec::with_capacity(self.ports.len() + 3);
        let mut which: Vec<usize> = Vec::with_capacity(self.ports.len());
        fds.push(PollFd::new(stop.event.as_fd(), PollFlags::POLLIN));
        fds.push(PollFd::new(self.mailbox.event.as_fd(), PollFlags::POLLIN));
        if let Some(i) = &self.inject {
            fds.push(PollFd::new(i.event.as_fd(), PollFlags::POLLIN));
        }
        let first_port = fds.len();
        let mut all = true;
        for (i, p) in self.ports.iter().enumerate() {
            match p.io.rx_fd().filter(|_| !self.broken[i]) {
                Some(fd) => {
                    fds.push(PollFd::new(fd, PollFlags::POLLIN));
                    which.push(i);
                }
                None => all = false,
            }
        }
        let timeout = if all {
            PollTimeout::NONE
        } else {
            PollTimeout::try_from(IDLE_TICK).unwrap_or(PollTimeout::ZERO)
        };
        // EINTR or any other error: go back to polling the ports.
        if poll(&mut fds, timeout).is_ok() {
            // A descriptor that reports an error or hang-up (a tap whose interface was
            // deleted) would wake every poll at once: stop polling it; its port is
            // still served while the worker is busy.
            let bad = PollFlags::POLLERR | PollFlags::POLLHUP | PollFlags::POLLNVAL;
            for (fd, &i) in fds[first_port..].iter().zip(&which) {
                if fd.revents().is_some_and(|r| r.intersects(bad)) {
                    self.broken[i] = true;
                }
            }
            // Reset the injection event before the next round looks at the queue, so that
            // a send after that look leaves it set for the next sleep.
            let woken = first_port > 2
                && fds
                    .get(2)
                    .and_then(PollFd::revents)
                    .is_some_and(|r| r.contains(PollFlags::POLLIN));
            if let Some(i) = self.inject.as_ref().filter(|_| woken) {
                let _ = i.event.read();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::os::fd::BorrowedFd;
    use std::sync::Mutex;

    use super::*;
    use crate::action::{port, Action};
    use crate::key::{Field, FlowMatch};
    use crate::pipeline::{DatapathConfig, Instructions, NormalPacket, PortInfo, Rule, Tx};

    /// A port whose frames the test queues and whose sent frames it collects. With
    /// `quiet`, it gives the worker a descriptor to sleep on that never becomes readable
    /// (so the worker sleeps without a timeout and only an event wakes it).
    #[derive(Clone, Default)]
    struct Queue {
        rx: Arc<Mutex<VecDeque<Vec<u8>>>>,
        sent: Arc<Mutex<Vec<Vec<u8>>>>,
        quiet: Option<Arc<EventFd>>,
    }

    impl Queue {
        /// Queues `frame` for receiving on a quiet queue and signals its event.
        fn arrive(&self, frame: Vec<u8>) {
            self.rx.lock().unwrap().push_back(frame);
            let _ = self.quiet.as_ref().unwrap().write(1);
        }

        fn quiet() -> Queue {
            Queue { quiet: Some(Arc::new(EventFd::new().unwrap())), ..Queue::default() }
        }

        fn sent(&self) -> Vec<Vec<u8>> {
            self.sent.lock().unwrap().clone()
        }
    }

    impl PortIo for Queue {
        fn recv(&mut self, rx: &mut Vec<Packet>, max: usize, pool: &mut Vec<Packet>) -> usize {
            let mut q = self.rx.lock().unwrap();
            let mut n = 0;
            while n < max {
                let Some(f) = q.pop_front() else { break };
                let mut p = pool.pop().unwrap_or_default();
                p.refill(&f);
                rx.push(p);
                n += 1;
            }
            n
        }
        fn send(&mut self, tx: &mut Vec<Packet>, pool: &mut Vec<Packet>) {
            let mut s = self.sent.lock().unwrap();
            for p in tx.drain(..) {
                s.push(p.data().to_vec());
                pool.push(p);
            }
        }
        fn rx_fd(&self) -> Option<BorrowedFd<'_>> {
            self.quiet.as_ref().map(|e| e.as_fd())
        }
    }

    /// A frame numbered `n` from input port `from` (both in the payload).
    fn frame(from: u8, n: u32) -> Vec<u8> {
        let mut f = vec![0u8; 64];
        f[0..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
        f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, from]);
        f[12..14].copy_from_slice(&0x88b5u16.to_be_bytes());
        f[14] = from;
        f[15..19].copy_from_slice(&n.to_be_bytes());
        f
    }

    fn datapath(ports: u32, rules: Vec<Rule>) -> Arc<Datapath> {
        let cfg = DatapathConfig {
            ports: (1..=ports).map(|i| PortInfo::new(i, (i - 1) as u16)).collect(),
            ..DatapathConfig::default()
        };
        let (dp, mut w, _rx) = Datapath::new(cfg, 64);
        for r in rules {
            w.insert_rule(0, r).unwrap();
        }
        w.publish();
        Arc::new(dp)
    }

    /// A rule that outputs what arrives on port `from` to `to`.
    fn forward(from: u32, to: u32) -> Rule {
        Rule::new(
            FlowMatch::ANY.exact(Field::InPort, from.into()),
            10,
            Instructions { apply: vec![Action::Output(to)], ..Instructions::default() },
        )
    }

    fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
        let t = Instant::now();
        while !done() {
            assert!(t.elapsed() < Duration::from_secs(10), "timed out: {what}");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Worker ports numbered 1, 2, … over the given queues.
    fn numbered(queues: &[&Queue]) -> Vec<WorkerPort> {
        (1..).zip(queues).map(|(no, q)| WorkerPort { no, io: Box::new((*q).clone()) }).collect()
    }

    fn spec(ports: Vec<WorkerPort>, normal: Option<Box<dyn NormalWorker>>) -> WorkerSpec {
        WorkerSpec { cpu: None, ports, cache_entries: 64, normal, realtime: false }
    }

    #[test]
    fn spinning_stops_when_spins_find_nothing_and_is_retried() {
        let mut spin = Spin::default();
        for _ in 0..FRUITLESS_SPINS {
            assert_eq!(spin.rounds(), SPIN_ROUNDS);
            spin.sleeping(SPIN_ROUNDS);
        }
        assert!(spin.futile());
        // Sleeps at once, but every PROBE_EVERY-th sleep spins again.
        let rounds: Vec<u32> = (0..2 * PROBE_EVERY)
            .map(|_| {
                let r = spin.rounds();
                spin.sleeping(r);
                r
            })
            .collect();
        assert_eq!(rounds.iter().filter(|&&r| r == SPIN_ROUNDS).count(), 2);
        assert_eq!(rounds.iter().filter(|&&r| r == 1).count(), 2 * PROBE_EVERY as usize - 2);
        // A spin that finds frames makes spinning worth it again.
        spin.found(3);
        assert!(!spin.futile());
        assert_eq!(spin.rounds(), SPIN_ROUNDS);
        // Frames found without an empty round first say nothing about spinning.
        for _ in 0..FRUITLESS_SPINS {
            spin.sleeping(SPIN_ROUNDS);
        }
        spin.found(0);
        assert!(spin.futile());
    }

    #[test]
    fn naps_only_under_overload_on_a_shared_cpu_and_keep_rings_from_overflowing() {
        let mut nap = Nap::new(NAP_MAX_FRAMES);
        // A worker whose receive work runs elsewhere never naps.
        for _ in 0..100 {
            assert_eq!(nap.after_drain(64, false), None);
        }
        // Nor one whose drains are small, or not full in a row.
        for i in 0..100 {
            let frames = if i % 4 == 3 { 8 } else { 64 };
            assert_eq!(nap.after_drain(frames, true), None);
        }
        for _ in 1..NAP_ENTER_DRAINS {
            assert_eq!(nap.after_drain(64, true), None);
        }
        assert_eq!(nap.after_drain(64, true), Some(NAP_MIN));
        // Queued frames at 2 per µs: the nap doubles while it brings under half the
        // limit, and holds where it brings between half and all of it.
        let mut len = NAP_MIN;
        let mut seen = Vec::new();
        for _ in 0..10 {
            let frames = 2 * len.as_micros() as usize;
            len = nap.after_drain(frames, true).expect("still napping");
            seen.push(len);
            assert!(2 * len.as_micros() as usize <= 2 * NAP_MAX_FRAMES);
        }
        assert_eq!(seen[..3], [2 * NAP_MIN, 4 * NAP_MIN, 4 * NAP_MIN]);
        assert_eq!(*seen.last().unwrap(), 4 * NAP_MIN);
        // A nap that brings more than the limit halves the next.
        assert_eq!(nap.after_drain(NAP_MAX_FRAMES + 1, true), Some(2 * NAP_MIN));
        // The queue is gone (the rate fell well below the best): back to waking at
        // the first frame.
        assert_eq!(nap.after_drain(100, true), None);
        assert_eq!(nap.after_drain(64, true), None);
    }

    #[test]
    fn naps_are_sized_by_the_shallowest_ring() {
        let napping = |most: usize| {
            let mut nap = Nap::new(most);
            for _ in 1..NAP_ENTER_DRAINS {
                assert_eq!(nap.after_drain(64, true), None);
            }
            assert_eq!(nap.after_drain(64, true), Some(NAP_MIN));
            nap
        };
        // 2 frames per µs queued: a 2,048-frame ring (1,536 a nap) lets naps grow to
        // 400 µs, where the default limit holds them at 200 µs.
        let mut nap = napping(1536);
        let mut len = NAP_MIN;
        for _ in 0..10 {
            len = nap.after_drain(2 * len.as_micros() as usize, true).unwrap();
        }
        assert_eq!(len, 8 * NAP_MIN);
        // A ring of 128 frames (96 a nap): naps stay at the shortest.
        let mut nap = napping(96);
        let mut len = NAP_MIN;
        for _ in 0..10 {
            len = nap.after_drain(96, true).unwrap();
        }
        assert_eq!(len, NAP_MIN);
    }

    #[test]
    fn forwards_every_frame_in_order_and_stops() {
        let dp = datapath(2, vec![forward(1, 2)]);
        let (a, b) = (Queue::default(), Queue::default());
        let frames: Vec<Vec<u8>> = (0..1000).map(|n| frame(1, n)).collect();
        a.rx.lock().unwrap().extend(frames.iter().cloned());
        let ports = numbered(&[&a, &b]);
        let rt = Runtime::start(dp.clone(), vec![spec(ports, None)], Instant::now()).unwrap();
        wait_for("1000 frames on port 2", || b.sent.lock().unwrap().len() == 1000);
        // Frames that arrive while the worker sleeps are found within a tick.
        a.rx.lock().unwrap().push_back(frame(1, 1000));
        wait_for("a frame after idling", || b.sent.lock().unwrap().len() == 1001);
        let t = Instant::now();
        rt.stop();
        assert!(t.elapsed() < Duration::from_secs(1));
        let sent = b.sent.lock().unwrap();
        assert_eq!(&sent[..1000], &frames[..]);
        assert!(a.sent.lock().unwrap().is_empty());
        assert_eq!(dp.read_port(0).rx_packets, 1001);
        assert_eq!(dp.read_port(1).tx_packets, 1001);
    }

    #[test]
    fn ports_join_and_leave_running_workers() {
        let dp = datapath(3, vec![forward(1, 3), forward(3, 1)]);
        // Quiet ports: a sleeping worker wakes only for events (a change among them).
        let (a, c, c2) = (Queue::quiet(), Queue::quiet(), Queue::quiet());
        let rt = Runtime::start(
            dp.clone(),
            vec![spec(numbered(&[&a]), None), spec(Vec::new(), None)],
            Instant::now(),
        )
        .unwrap();
        let ports = rt.ports();
        assert_eq!(ports.workers(), 2);
        assert_eq!(
            ports.add(3, vec![Box::new(c.clone())]),
            Err(ChangeError::TooFewHandles { given: 1, workers: 2 })
        );
        // Worker 1 gets a handle that never receives.
        ports.add(3, vec![Box::new(c.clone()), Box::new(Queue::quiet())]).unwrap();
        c.arrive(frame(3, 0));
        wait_for("port 3's frame on port 1", || a.sent().len() == 1);
        a.arrive(frame(1, 1));
        wait_for("port 1's frame on port 3", || c.sent().len() == 1);
        // Once removed, the port neither receives nor is sent to.
        ports.remove(3).unwrap();
        c.rx.lock().unwrap().push_back(frame(3, 2));
        a.arrive(frame(1, 3));
        wait_for("port 1's frame counted", || dp.read_port(0).rx_packets == 2);
        // Removing a port no worker has just answers.
        ports.remove(3).unwrap();
        // Re-added with a new handle, it forwards again.
        ports.add(3, vec![Box::new(c2.clone()), Box::new(Queue::quiet())]).unwrap();
        a.arrive(frame(1, 4));
        wait_for("port 1's frame on the new port 3", || c2.sent().len() == 1);
        rt.stop();
        assert_eq!(c.sent(), vec![frame(1, 1)]);
        assert_eq!(c.rx.lock().unwrap().len(), 1, "read after its removal");
        assert_eq!(a.sent(), vec![frame(3, 0)]);
        assert_eq!(c2.sent(), vec![frame(1, 4)]);
        // A stopped runtime's workers cannot answer.
        assert_eq!(ports.remove(1), Err(ChangeError::NoAnswer { worker: 0 }));
    }

    #[test]
    fn input_ports_share_the_worker_round_robin() {
        // Two busy inputs into one output: at every point of the output, the two inputs'
        // counts differ by at most one round's budget.
        let dp = datapath(3, vec![forward(1, 3), forward(2, 3)]);
        let (a, b, c) = (Queue::default(), Queue::default(), Queue::default());
        a.rx.lock().unwrap().extend((0..5000).map(|n| frame(1, n)));
        b.rx.lock().unwrap().extend((0..5000).map(|n| frame(2, n)));
        let ports = numbered(&[&a, &b, &c]);
        let rt = Runtime::start(dp, vec![spec(ports, None)], Instant::now()).unwrap();
        wait_for("10000 frames", || c.sent.lock().unwrap().len() == 10_000);
        rt.stop();
        let sent = c.sent.lock().unwrap();
        let mut count = [0i64; 2];
        for f in sent.iter() {
            count[(f[14] - 1) as usize] += 1;
            if count[0] < 5000 && count[1] < 5000 {
                assert!((count[0] - count[1]).abs() <= BUDGET as i64, "{count:?}");
            }
        }
        assert_eq!(count, [5000, 5000]);
    }

    /// Sends every NORMAL packet to port 2 and records the batch times it was given.
    struct ToTwo(Arc<Mutex<Vec<u64>>>);

    impl NormalHandler for ToTwo {
        fn handle(&mut self, p: NormalPacket, out: &mut Outputs) {
            out.tx.push(Tx { port: 2, queue: None, packet: p.packet });
        }
    }

    impl NormalWorker for ToTwo {
        fn begin_batch(&mut self, now_ns: u64) {
            self.0.lock().unwrap().push(now_ns);
        }
    }

    #[test]
    fn normal_packets_go_to_the_handler_and_unknown_ports_are_dropped() {
        let dp = datapath(
            2,
            vec![
                forward(1, port::NORMAL),
                // Port 9 is in no worker's port list.
                forward(2, 9),
            ],
        );
        let (a, b) = (Queue::default(), Queue::default());
        a.rx.lock().unwrap().extend((0..10).map(|n| frame(1, n)));
        b.rx.lock().unwrap().extend((0..10).map(|n| frame(2, n)));
        let times = Arc::new(Mutex::new(Vec::new()));
        let ports = numbered(&[&a, &b]);
        let normal: Box<dyn NormalWorker> = Box::new(ToTwo(times.clone()));
        let rt =
            Runtime::start(dp.clone(), vec![spec(ports, Some(normal))], Instant::now()).unwrap();
        wait_for("10 NORMAL frames", || b.sent.lock().unwrap().len() == 10);
        rt.stop();
        assert_eq!(dp.read_port(1).tx_packets, 10, "NORMAL's sends are counted");
        assert!(a.sent.lock().unwrap().is_empty());
        let sent = b.sent.lock().unwrap();
        assert!(sent.iter().all(|f| f[14] == 1), "only NORMAL's frames");
        let times = times.lock().unwrap();
        assert!(!times.is_empty() && times.windows(2).all(|w| w[0] <= w[1]));
    }

    /// What a packet-out of `frame(0, n)` from CONTROLLER with `actions` produces (its
    /// transmissions counted by an agent-side worker state of `dp`).
    fn packet_out(dp: &Datapath, n: u32, actions: &[Action]) -> Outputs {
        let mut w = dp.worker(0);
        let mut out = Outputs::new();
        dp.batch(&mut w, 0).packet_out(
            Packet::from_slice(&frame(0, n)),
            port::CONTROLLER,
            actions,
            &mut out,
        );
        out
    }

    /// A hand-made output of `frame(0, n)` to `port`.
    fn tx_to(port: u32, n: u32) -> Outputs {
        let mut out = Outputs::new();
        out.tx.push(Tx { port, queue: None, packet: Packet::from_slice(&frame(0, n)) });
        out
    }

    #[test]
    fn injected_packets_wake_the_sleeping_worker_0_and_leave_in_order() {
        let dp = datapath(2, vec![]);
        // Two workers, each with its own handles on ports 1 and 2.
        let (a0, b0) = (Queue::quiet(), Queue::quiet());
        let (a1, b1) = (Queue::quiet(), Queue::quiet());
        let specs = vec![spec(numbered(&[&a0, &b0]), None), spec(numbered(&[&a1, &b1]), None)];
        let rt = Runtime::start(dp.clone(), specs, Instant::now()).unwrap();
        let inj = rt.injector();
        for round in 0..3u32 {
            // Long enough for the workers to spin out and sleep with no timeout (every
            // port has a descriptor): only the injection event can wake worker 0.
            std::thread::sleep(Duration::from_millis(50));
            let base = round * 10;
            inj.send(packet_out(&dp, base, &[Action::Output(1), Action::Output(2)])).unwrap();
            inj.send(packet_out(&dp, base + 1, &[Action::Output(2)])).unwrap();
            inj.send(packet_out(&dp, base + 2, &[Action::Output(1)])).unwrap();
            let want = (round + 1) as usize * 2;
            wait_for("injected frames", || {
                a0.sent.lock().unwrap().len() == want && b0.sent.lock().unwrap().len() == want
            });
        }
        rt.stop();
        let on = |ns: &[u32]| ns.iter().map(|&n| frame(0, n)).collect::<Vec<_>>();
        assert_eq!(a0.sent(), on(&[0, 2, 10, 12, 20, 22]));
        assert_eq!(b0.sent(), on(&[0, 1, 10, 11, 20, 21]));
        assert!(a1.sent().is_empty() && b1.sent().is_empty(), "worker 0 only");
        assert_eq!(inj.queued(), 0);
        // Counted once, when the packet-outs produced them; never as received.
        assert_eq!(dp.read_port(0).tx_packets, 6);
        assert_eq!(dp.read_port(1).tx_packets, 6);
        assert_eq!(dp.read_port(0).rx_packets + dp.read_port(1).rx_packets, 0);
    }

    #[test]
    fn injected_packets_keep_their_order_while_the_worker_is_busy() {
        let dp = datapath(3, vec![forward(1, 2)]);
        let (a, b, c) = (Queue::default(), Queue::default(), Queue::default());
        a.rx.lock().unwrap().extend((0..20_000).map(|n| frame(1, n)));
        let ports = numbered(&[&a, &b, &c]);
        let rt = Runtime::start(dp, vec![spec(ports, None)], Instant::now()).unwrap();
        let inj = rt.injector();
        for n in 0..300 {
            inj.send(tx_to(2 + n % 2, n)).unwrap();
        }
        wait_for("every frame", || {
            b.sent.lock().unwrap().len() == 20_150 && c.sent.lock().unwrap().len() == 150
        });
        rt.stop();
        let on = |ns: Vec<u32>| ns.into_iter().map(|n| frame(0, n)).collect::<Vec<_>>();
        assert_eq!(c.sent(), on((0..300).filter(|n| n % 2 == 1).collect()));
        let (injected, forwarded): (Vec<_>, Vec<_>) =
            b.sent().into_iter().partition(|f| f[14] == 0);
        assert_eq!(injected, on((0..300).filter(|n| n % 2 == 0).collect()));
        assert_eq!(forwarded, (0..20_000).map(|n| frame(1, n)).collect::<Vec<_>>());
    }

    #[test]
    fn a_full_queue_refuses_the_whole_send() {
        let dp = datapath(2, vec![]);
        let (a, b) = (Queue::default(), Queue::default());
        let rt = Runtime::start(dp, vec![spec(numbered(&[&a, &b]), None)], Instant::now()).unwrap();
        let inj = rt.injector();
        let mut big = Outputs::new();
        for n in 0..=INJECT_CAPACITY as u32 {
            big.tx.extend(tx_to(1, n).tx);
        }
        assert_eq!(
            inj.send(big),
            Err(InjectError::Full { queued: 0, adding: INJECT_CAPACITY + 1 })
        );
        // Hold worker 0 inside its send to port 1 while the queue fills.
        let held = a.sent.lock().unwrap();
        inj.send(tx_to(1, 0)).unwrap();
        wait_for("worker 0 took the first packet", || inj.queued() == 0);
        for n in 1..=INJECT_CAPACITY as u32 {
            inj.send(tx_to(2, n)).unwrap();
        }
        assert_eq!(inj.queued(), INJECT_CAPACITY);
        let refused = inj.send(tx_to(1, 9999));
        assert_eq!(refused, Err(InjectError::Full { queued: INJECT_CAPACITY, adding: 1 }));
        assert!(refused.unwrap_err().to_string().contains("full"));
        assert_eq!(inj.send(Outputs::new()), Ok(()), "nothing to add fits");
        // An offer refused is left whole, to be offered again.
        let mut again = tx_to(1, 5000);
        assert!(matches!(inj.offer(&mut again), Err(InjectError::Full { .. })));
        assert_eq!(again.tx.len(), 1);
        drop(held);
        wait_for("the queue drains", || b.sent.lock().unwrap().len() == INJECT_CAPACITY);
        inj.offer(&mut again).unwrap();
        assert!(again.tx.is_empty(), "taken");
        wait_for("a send after draining", || a.sent.lock().unwrap().len() == 2);
        rt.stop();
        assert_eq!(a.sent(), vec![frame(0, 0), frame(0, 5000)], "9999 was refused");
        let want: Vec<_> = (1..=INJECT_CAPACITY as u32).map(|n| frame(0, n)).collect();
        assert_eq!(b.sent(), want);
    }

    #[test]
    fn injectors_fail_once_the_runtime_stopped() {
        let dp = datapath(1, vec![]);
        let a = Queue::default();
        let rt =
            Runtime::start(dp.clone(), vec![spec(numbered(&[&a]), None)], Instant::now()).unwrap();
        fn shareable<T: Clone + Send + Sync + 'static>(_: &T) {}
        let inj = rt.injector();
        let other = inj.clone();
        shareable(&other);
        rt.stop();
        assert_eq!(inj.send(tx_to(1, 0)), Err(InjectError::Stopped));
        assert_eq!(other.send(Outputs::new()), Err(InjectError::Stopped));
        assert!(a.sent().is_empty());
        // Dropping the runtime stops it too; a runtime without workers never takes any.
        let rt =
            Runtime::start(dp.clone(), vec![spec(numbered(&[&a]), None)], Instant::now()).unwrap();
        let inj = rt.injector();
        drop(rt);
        assert_eq!(inj.send(tx_to(1, 0)), Err(InjectError::Stopped));
        let rt = Runtime::start(dp, vec![], Instant::now()).unwrap();
        assert_eq!(rt.injector().send(tx_to(1, 0)), Err(InjectError::Stopped));
    }

    #[test]
    fn injected_normal_packets_go_to_worker_0s_handler() {
        let dp = datapath(2, vec![]);
        let (a, b) = (Queue::quiet(), Queue::quiet());
        let times = Arc::new(Mutex::new(Vec::new()));
        let normal: Box<dyn NormalWorker> = Box::new(ToTwo(times.clone()));
        let ports = numbered(&[&a, &b]);
        let rt =
            Runtime::start(dp.clone(), vec![spec(ports, Some(normal))], Instant::now()).unwrap();
        let out = packet_out(&dp, 7, &[Action::Output(port::NORMAL), Action::Output(1)]);
        assert_eq!((out.tx.len(), out.normal.len()), (1, 1));
        rt.injector().send(out).unwrap();
        wait_for("both frames", || {
            a.sent.lock().unwrap().len() == 1 && b.sent.lock().unwrap().len() == 1
        });
        rt.stop();
        assert_eq!((a.sent(), b.sent()), (vec![frame(0, 7)], vec![frame(0, 7)]));
        assert_eq!(dp.read_port(0).tx_packets, 1, "counted by the packet-out");
        assert_eq!(dp.read_port(1).tx_packets, 1, "counted by worker 0 (NORMAL)");
        assert_eq!(times.lock().unwrap().len(), 1);
    }
}
