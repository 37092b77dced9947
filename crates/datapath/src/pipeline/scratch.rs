//! The batch size and a worker's scratch space for the stages of a batch (shared by the
//! batch stages, `batch.rs`, and the worker state that owns it, `worker.rs`).

use crate::cache::Path;
use crate::key::FlowKey;
use crate::parse::ParseOutcome;

/// Packets per stage.
pub const BATCH: usize = 32;

/// A worker's space for the stages of a batch (boxed: about 10 KiB).
pub(crate) struct Scratch {
    pub(super) keys: [FlowKey; BATCH],
    pub(super) parsed: [ParseOutcome; BATCH],
    pub(super) hashes: [u64; BATCH],
    pub(super) hits: [Option<Path>; BATCH],
    /// Whether packet `i` may use the cache (parsed cleanly, port accepts it).
    pub(super) cacheable: [bool; BATCH],
    /// The keys table 0 looks up when only some packets need it.
    pub(super) lookup_keys: [FlowKey; BATCH],
}

impl Scratch {
    pub fn new() -> Box<Scratch> {
        Box::new(Scratch {
            keys: [FlowKey::ZERO; BATCH],
            parsed: [ParseOutcome::default(); BATCH],
            hashes: [0; BATCH],
            hits: [None; BATCH],
            cacheable: [false; BATCH],
            lookup_keys: [FlowKey::ZERO; BATCH],
        })
    }
}
