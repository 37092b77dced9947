//! Dropping what a bulk change let go (a cleared table of a million rules, its entries)
//! on a thread of its own, so that the thread that made the change — and the barrier
//! reply waiting for it — does not spend its time freeing memory.
//!
//! The reaper thread starts on first use and drops what it is sent, in order. Where it
//! cannot be started, [`reap`] drops on the caller's thread: slower, never lost.
//!
//! After each drop it runs the trim hook ([`set_trim`]), as should the thread that made
//! the bulk change ([`trim_this_thread`]): the allocator keeps some freed objects
//! cached per thread, and after a million are freed those few would pin pages that
//! could otherwise go back to the system. The binary, which chooses the allocator, says
//! how to trim; by default nothing is done.

use std::sync::mpsc::{channel, Sender};
use std::sync::OnceLock;

type Garbage = Box<dyn Send>;

static REAPER: OnceLock<Option<Sender<Garbage>>> = OnceLock::new();

/// How a thread gives back what the allocator caches for it (set once, by the binary).
static TRIM: OnceLock<fn()> = OnceLock::new();

/// Sets how a thread gives back what the allocator caches for it, run on the reaper
/// thread after each drop and by [`trim_this_thread`]. Only the first call counts.
pub fn set_trim(trim: fn()) {
    let _ = TRIM.set(trim);
}

/// Runs the trim hook ([`set_trim`]) on this thread, if one is set: for a thread that
/// has just let go of much memory at once.
pub fn trim_this_thread() {
    if let Some(trim) = TRIM.get() {
        trim();
    }
}

fn start() -> Option<Sender<Garbage>> {
    let (tx, rx) = channel::<Garbage>();
    std::thread::Builder::new()
        .name("reaper".into())
        .spawn(move || {
            for garbage in rx {
                drop(garbage);
                trim_this_thread();
            }
        })
        .ok()?;
    Some(tx)
}

/// Drops `garbage` on the reaper thread.
pub fn reap<T: Send + 'static>(garbage: T) {
    match REAPER.get_or_init(start) {
        Some(tx) => {
            if let Err(back) = tx.send(Box::new(garbage)) {
                drop(back.0);
            }
        }
        None => drop(garbage),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::sync_channel;
    use std::time::Duration;

    struct Tell(std::sync::mpsc::SyncSender<std::thread::ThreadId>);

    impl Drop for Tell {
        fn drop(&mut self) {
            let _ = self.0.send(std::thread::current().id());
        }
    }

    static TRIMMED_ON: std::sync::Mutex<Vec<std::thread::ThreadId>> =
        std::sync::Mutex::new(Vec::new());

    fn note_trim() {
        TRIMMED_ON.lock().unwrap().push(std::thread::current().id());
    }

    /// The reaper trims its own cache after a drop; the caller trims when it asks to.
    #[test]
    fn the_reaper_and_the_caller_trim_with_the_hook_set() {
        set_trim(note_trim);
        let (tx, rx) = sync_channel(1);
        reap(Tell(tx));
        let reaper = rx.recv_timeout(Duration::from_secs(10)).expect("dropped");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !TRIMMED_ON.lock().unwrap().contains(&reaper) {
            assert!(std::time::Instant::now() < deadline, "the reaper did not trim");
            std::thread::sleep(Duration::from_millis(1));
        }
        trim_this_thread();
        assert!(TRIMMED_ON.lock().unwrap().contains(&std::thread::current().id()));
    }

    #[test]
    fn garbage_is_dropped_on_another_thread() {
        let (tx, rx) = sync_channel(2);
        reap(vec![Tell(tx.clone())]);
        reap(Tell(tx));
        for _ in 0..2 {
            let by = rx.recv_timeout(Duration::from_secs(10)).expect("dropped");
            assert_ne!(by, std::thread::current().id());
        }
    }
}
