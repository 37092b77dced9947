//! os-ken applications (in `tests/osken`) as controllers of the switch under test, and
//! what they need: the repository's `.venv` python and a free TCP port.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::mpsc;
use std::time::Duration;

use super::{spawn_with_lines, wait_for_line};

/// A TCP port free on 127.0.0.1 now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// An os-ken application process; killed by PID on drop.
pub struct Controller {
    child: Child,
    lines: mpsc::Receiver<String>,
}

fn venv_python() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let py = root.join(".venv/bin/python");
    assert!(
        py.exists(),
        "{} is missing: run .ci/run (or `python3 -m venv .venv && .venv/bin/pip install os-ken==4.2.2`)",
        py.display()
    );
    py
}

impl Controller {
    /// Starts application module `app` listening on 127.0.0.1:`port`; waits until it
    /// is.
    pub fn start(app: &str, port: u16) -> Controller {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/osken");
        let mut cmd = Command::new(venv_python());
        cmd.arg(dir.join("run_app.py")).arg(port.to_string()).arg(app).current_dir(&dir);
        let (child, lines) = spawn_with_lines(&mut cmd, "os-ken");
        let mut c = Controller { child, lines };
        c.wait_line("listening", Duration::from_secs(20));
        c
    }

    /// [`Controller::start`] on a free port; also the switch's `--controller` target for
    /// it.
    pub fn start_free(app: &str) -> (Controller, String) {
        let port = free_port();
        (Self::start(app, port), format!("tcp:127.0.0.1:{port}"))
    }

    /// Waits for a line of the application's output containing `what`.
    pub fn wait_line(&mut self, what: &str, limit: Duration) {
        if wait_for_line(&self.lines, what, limit).is_err() {
            panic!("the controller never printed {what:?}");
        }
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
