//! The fast-path program as an AF_XDP port's XDP program: [`PortSteering`] is what
//! `ports::open_steered` attaches to a switch port's interface instead of the port's
//! own redirect-everything program, so that frames the map does not serve reach the
//! port's sockets as before.

use std::io;
use std::os::fd::RawFd;
use std::sync::Arc;

use ports::afxdp::{AttachMode, Steering, SteeringAttachment};
use ports::PortError;

use crate::program::{Attached, FastPath, FastPathError};

/// Attaches `fp` to the interface of OpenFlow port `of_port`.
pub struct PortSteering {
    pub fp: Arc<FastPath>,
    pub of_port: u32,
}

impl Steering for PortSteering {
    fn attach(
        &self,
        name: &str,
        ifindex: u32,
        queues: u32,
        mode: AttachMode,
    ) -> Result<Box<dyn SteeringAttachment>, PortError> {
        let a = self
            .fp
            .attach(name, ifindex, self.of_port, queues, mode)
            .map_err(|e| port_error(name, "attaching the fast-path XDP program", e))?;
        Ok(Box::new(SteeredPort { attached: a, name: name.to_string() }))
    }
}

/// The program attached to one port's interface (detached when dropped).
struct SteeredPort {
    attached: Attached,
    name: String,
}

impl SteeringAttachment for SteeredPort {
    fn mode(&self) -> AttachMode {
        self.attached.mode()
    }

    fn insert(&mut self, queue: u32, fd: RawFd) -> Result<(), PortError> {
        self.attached.insert_xsk(queue, fd).map_err(|e| {
            port_error(&self.name, "adding an AF_XDP socket to the fast path's XSKMAP", e)
        })
    }
}

/// `e` as a port error of interface `name` during `op`.
fn port_error(name: &str, op: &'static str, e: FastPathError) -> PortError {
    match e {
        FastPathError::NotPermitted { .. } => PortError::NotPermitted {
            op,
            name: name.to_string(),
            capability: "CAP_BPF and CAP_NET_ADMIN",
        },
        other => PortError::Io {
            op,
            name: name.to_string(),
            source: io::Error::other(other.to_string()),
        },
    }
}
