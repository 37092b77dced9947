//! Keeping the CPUs out of their halt states while latency is measured.
//!
//! An idle CPU halts (on a virtual machine: the `haltpoll` driver's halt, an exit to
//! the hypervisor), and the first frame to reach it pays the wake-up, tens of
//! microseconds, on top of whatever the device does. A device that busy-polls keeps its
//! CPU awake and never pays it; one driven by interrupts or NAPI threads pays it on
//! every frame of an idle-rate run. So the per-packet time, a latency difference at a
//! low rate, would measure the platform's wake-up rather than the device.
//!
//! [`CpusAwake::hold`] asks the kernel for a CPU latency of 0 through the PM QoS
//! interface (`/dev/cpu_dma_latency`, as latency tools do): while the file stays open,
//! idle CPUs poll instead of halting. The request ends when the guard is dropped (the
//! kernel drops it with the file). Polling time is still idle time in `/proc/stat`, so
//! CPU accounting is unchanged.

use std::fs::File;
use std::io::Write;

/// While held, the kernel keeps every CPU's exit latency at 0 (see the module comment).
#[derive(Debug)]
pub struct CpusAwake {
    _qos: File,
}

/// The PM QoS file of the CPU latency request.
const CPU_LATENCY: &str = "/dev/cpu_dma_latency";

impl CpusAwake {
    /// Asks for a CPU latency of 0 µs; an error (no such file, not root) says why the
    /// CPUs may halt.
    pub fn hold() -> Result<CpusAwake, String> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(CPU_LATENCY)
            .map_err(|e| format!("{CPU_LATENCY}: {e}"))?;
        f.write_all(&request(0)).map_err(|e| format!("{CPU_LATENCY}: {e}"))?;
        Ok(CpusAwake { _qos: f })
    }
}

/// The bytes of a latency request of `us` microseconds: a native-endian 32-bit integer,
/// as the PM QoS file reads it.
fn request(us: i32) -> [u8; 4] {
    us.to_ne_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_is_a_native_endian_s32() {
        assert_eq!(request(0), [0, 0, 0, 0]);
        assert_eq!(i32::from_ne_bytes(request(125)), 125);
    }
}
