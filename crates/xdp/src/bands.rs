//! The meter bands the program shares with the datapath: its `bands` map, mapped
//! read-write into this process, lent to the datapath as the cells its meters meter with
//! (`datapath::meter`), so that a meter's workers and the program draw on one bucket per
//! band.
//!
//! Invariants: the mapping covers the whole map ([`FP_BAND_CELLS`] cells of 64 bytes,
//! page aligned) and is never unmapped (it lives as long as the process, so the cells
//! are `'static`); both sides change a cell's `tat` only by compare-exchange.

use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::time::Instant;

use aya::maps::Map;
use aya::Ebpf;
use datapath::meter::BandCell;

use crate::layout::FP_BAND_CELLS;
use crate::program::{fail, missing, FastPathError};

/// Maps the program's `bands` map read-write for good.
pub(crate) fn map_bands(ebpf: &Ebpf) -> Result<&'static [BandCell], FastPathError> {
    const STEP: &str = "mapping the fast-path meter bands";
    let Some(Map::Array(data)) = ebpf.map("bands") else {
        return Err(missing("bands map"));
    };
    let fd = data.fd().as_fd().as_raw_fd();
    let len = FP_BAND_CELLS * std::mem::size_of::<BandCell>();
    // SAFETY: a fresh shared read-write mapping of a BPF_F_MMAPABLE array map fd of
    // `len` bytes (FP_BAND_CELLS elements of 64 bytes, a whole number of pages), at an
    // address the kernel picks; no existing memory is affected. The result is checked.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        return Err(fail(STEP, &io::Error::last_os_error()));
    }
    if ptr.is_null() || !(ptr as usize).is_multiple_of(std::mem::align_of::<BandCell>()) {
        return Err(FastPathError::Failed {
            step: STEP,
            detail: "mmap returned an unaligned address".into(),
        });
    }
    // SAFETY: the region is `len` bytes of shared memory, aligned for BandCell (checked),
    // holding FP_BAND_CELLS BandCells: #[repr(C)] structs of eight AtomicU64, for which
    // any bit pattern is valid, and only ever accessed atomically here (the program
    // writes them with atomic instructions or before user space reads them). It is never
    // unmapped, so the slice may live for the rest of the process.
    Ok(unsafe { std::slice::from_raw_parts(ptr.cast::<BandCell>(), FP_BAND_CELLS) })
}

/// The kernel's monotonic clock (what the program's `bpf_ktime_get_ns` reads) minus the
/// workers' clock that started at `started`, in nanoseconds.
pub fn kernel_clock_offset(started: Instant) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    let before = started.elapsed();
    // SAFETY: clock_gettime writes the timespec it is given, which lives on this stack.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) } == 0;
    let after = started.elapsed();
    if !ok {
        return 0;
    }
    let mono = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
    let workers = ((before + after) / 2).as_nanos() as u64;
    mono.saturating_sub(workers)
}
