//! Dropping what a bulk change let go (a cleared table of a million rules, its entries)
//! on a thread of its own, so that the thread that made the change — and the barrier
//! reply waiting for it — does not spend its time freeing memory.
//!
//! The reaper thread starts on first use and drops what it is sent, in order. Where it
//! cannot be started, [`reap`] drops on the caller's thread: slower, never lost.

use std::sync::mpsc::{channel, Sender};
use std::sync::OnceLock;

type Garbage = Box<dyn Send>;

static REAPER: OnceLock<Option<Sender<Garbage>>> = OnceLock::new();

fn start() -> Option<Sender<Garbage>> {
    let (tx, rx) = channel::<Garbage>();
    std::thread::Builder::new()
        .name("reaper".into())
        .spawn(move || {
            for garbage in rx {
                drop(garbage);
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
