//! Whether the kernel delivers what the fast-path program forwards, port by port, and
//! the count of what it dropped anyway.
//!
//! A frame the program redirects from a port attached in **native** mode goes to the
//! output interface's XDP transmit (`ndo_xdp_xmit`); the kernel drops it, unseen by the
//! interface's counters, when that interface takes no XDP frames. A veth takes them only
//! while its peer runs NAPI (GRO on at the peer, or an XDP program there), and a
//! container's veth as `ip link add` makes it has neither. From a port attached in
//! **generic** mode the frame goes through the output interface's ordinary transmit
//! path, which every interface has.
//!
//! So each attached port carries a [`Delivery`], read from the kernel's own statement
//! (`ports::xdp_features`, the bit the kernel's redirect code checks) when it is attached
//! and again whenever the kernel announces a change ([`FastPath::refresh`]), and the
//! program's `reach` map holds the slots of the ports that are [`Delivery::Delivered`]
//! (written at every attach, detach and change; a slot past 63 is never in it). The
//! program forwards a hit from a native port only when every output is in it (a
//! broadcast group's ports less the input port), and sends the frame to user space
//! otherwise (event UNDELIVERED); hits from generic ports are forwarded whatever the
//! output. Entries are written whatever the delivery, and stay when it changes: the
//! flows move between the tiers from their next frame, with no entry removed or
//! written. Where the kernel does not say (before Linux 6.3), native forwarding to the
//! port stays in user space, which always delivers. [`FastPath::delivers`] says the
//! same for one pair of ports (for the tracer).
//!
//! What the kernel drops after the program let a frame go (a change at the peer before
//! the program was told, a full ring) is counted per output port by two
//! tracepoint programs in the same object ([`FastPath::lost`]); they need tracefs, which
//! is mounted at `/sys/kernel/tracing` if it is not.

use std::path::Path;

use aya::maps::{PerCpuArray, PerCpuValues};
use aya::programs::TracePoint;
use aya::Ebpf;
use ports::afxdp::AttachMode;

use crate::program::FastPath;

/// Whether frames forwarded in the kernel from a native-mode port arrive at a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// The interface takes XDP frames.
    Delivered,
    /// It does not: the kernel would drop them.
    Dropped,
    /// The kernel does not say (no `netdev` netlink family).
    Unknown,
}

impl Delivery {
    /// What the kernel says now of interface `ifindex`.
    pub fn of(ifindex: u32) -> Delivery {
        match ports::xdp_features::query(ifindex) {
            Ok(Some(f)) if f.redirect_target() => Delivery::Delivered,
            Ok(Some(_)) => Delivery::Dropped,
            Ok(None) | Err(_) => Delivery::Unknown,
        }
    }
}

/// One attached port as the fast path knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortUse {
    pub of_port: u32,
    pub ifindex: u32,
    /// The interface's name when attached.
    pub name: String,
    /// Its driver is veth.
    pub veth: bool,
    /// Attached in native mode (else generic).
    pub native: bool,
    pub delivery: Delivery,
}

impl PortUse {
    pub(crate) fn new(of_port: u32, name: &str, ifindex: u32, mode: AttachMode) -> PortUse {
        PortUse {
            of_port,
            ifindex,
            name: name.to_string(),
            veth: ports::info::driver(name).as_deref() == Some("veth"),
            native: mode == AttachMode::Native,
            delivery: Delivery::of(ifindex),
        }
    }

    /// Why frames forwarded in the kernel from a native-mode port do not reach this
    /// one; `None` if they do.
    pub fn why_not(&self) -> Option<String> {
        let name = &self.name;
        match (self.delivery, self.veth) {
            (Delivery::Delivered, _) => None,
            (Delivery::Dropped, true) => Some(format!(
                "the kernel drops XDP frames sent into {name}: its veth peer runs no NAPI \
                 (GRO off, no XDP program)"
            )),
            (Delivery::Dropped, false) => {
                Some(format!("the kernel drops XDP frames sent into {name}: its driver takes none"))
            }
            (Delivery::Unknown, _) => Some(format!(
                "this kernel does not say whether it takes XDP frames sent into {name} \
                 (Linux 6.3 and later say)"
            )),
        }
    }
}

/// A field of a tracepoint's record: name, offset, size.
type Field = (&'static str, usize, usize);

/// The tracepoints whose drops are counted: (category, name, program, the fields the
/// program reads).
const TRACEPOINTS: [(&str, &str, &str, &[Field]); 2] = [
    (
        "xdp",
        "xdp_devmap_xmit",
        "fastpath_xmit_drops",
        &[("from_ifindex", 8, 4), ("to_ifindex", 16, 4), ("drops", 20, 4)],
    ),
    (
        "xdp",
        "xdp_redirect_err",
        "fastpath_redirect_err",
        &[("ifindex", 16, 4), ("to_ifindex", 24, 4)],
    ),
];

const TRACEFS: &str = "/sys/kernel/tracing";

/// Whether `format` (a tracepoint's format file) has `field` at `offset` with `size`.
fn has_field(format: &str, field: &str, offset: usize, size: usize) -> bool {
    format.lines().any(|l| {
        let parts: Vec<&str> = l.trim().split(';').map(str::trim).collect();
        parts.len() >= 3
            && parts[0].starts_with("field:")
            && parts[0].split_whitespace().last() == Some(field)
            && parts[1] == format!("offset:{offset}")
            && parts[2] == format!("size:{size}")
    })
}

/// Mounts tracefs at its usual place if nothing is mounted there.
fn ensure_tracefs() -> Result<(), String> {
    if Path::new(TRACEFS).join("events").is_dir() {
        return Ok(());
    }
    let c = |s: &str| std::ffi::CString::new(s).expect("no NUL inside");
    let (src, target) = (c("tracefs"), c(TRACEFS));
    // SAFETY: mount(2) with NUL-terminated strings that live across the call and no
    // data argument.
    let r =
        unsafe { libc::mount(src.as_ptr(), target.as_ptr(), src.as_ptr(), 0, std::ptr::null()) };
    if r != 0 {
        return Err(format!("mounting tracefs at {TRACEFS}: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Loads and attaches the drop-counting tracepoint programs of the loaded object.
/// Their links live as long as `ebpf`.
pub(crate) fn attach_lost_counters(ebpf: &mut Ebpf) -> Result<(), String> {
    ensure_tracefs()?;
    for (category, name, prog, fields) in TRACEPOINTS {
        let path = format!("{TRACEFS}/events/{category}/{name}/format");
        let format = std::fs::read_to_string(&path).map_err(|e| format!("reading {path}: {e}"))?;
        if let Some((f, ..)) = fields.iter().find(|(f, o, s)| !has_field(&format, f, *o, *s)) {
            return Err(format!(
                "{category}:{name} has another record layout on this kernel (field {f})"
            ));
        }
        let p: &mut TracePoint = ebpf
            .program_mut(prog)
            .ok_or_else(|| format!("the object has no program {prog}"))?
            .try_into()
            .map_err(|e| format!("{prog}: {e}"))?;
        p.load().map_err(|e| format!("loading {prog}: {e}"))?;
        p.attach(category, name)
            .map_err(|e| format!("attaching {prog} to {category}:{name}: {e}"))?;
    }
    Ok(())
}

/// Sets port slot `slot`'s lost count to zero (a slot taken by another port).
pub(crate) fn reset_lost(ebpf: &mut Ebpf, slot: u32) {
    let Some(map) = ebpf.map_mut("lost") else {
        return;
    };
    let Ok(mut m) = PerCpuArray::<_, u64>::try_from(map) else {
        return;
    };
    if let Ok(cpus) = aya::util::nr_cpus() {
        if let Ok(zeros) = PerCpuValues::try_from(vec![0u64; cpus]) {
            let _ = m.set(slot, zeros, 0);
        }
    }
}

impl FastPath {
    /// The attached ports, by slot.
    pub fn ports(&self) -> Vec<PortUse> {
        self.shared.lock().slots.iter().flatten().cloned().collect()
    }

    /// Whether a frame forwarded in the kernel from OpenFlow port `in_port` to
    /// `out_port` arrives there; else why not.
    pub fn delivers(&self, in_port: u32, out_port: u32) -> Result<(), String> {
        let inner = self.shared.lock();
        let find = |p: u32| inner.slots.iter().flatten().find(|s| s.of_port == p);
        let (Some(i), Some(o)) = (find(in_port), find(out_port)) else {
            return Err(format!("port {in_port} or {out_port} has no XDP fast path"));
        };
        if !i.native {
            return Ok(());
        }
        match o.why_not() {
            None => Ok(()),
            Some(why) => Err(format!("{why} (output port {out_port})")),
        }
    }

    /// Asks the kernel again about the port on interface `ifindex`: the port and its
    /// previous delivery if that changed.
    pub fn refresh(&self, ifindex: u32) -> Option<(PortUse, Delivery)> {
        let now = Delivery::of(ifindex);
        let mut inner = self.shared.lock();
        let slot = inner.slots.iter_mut().flatten().find(|s| s.ifindex == ifindex)?;
        let before = slot.delivery;
        if before == now {
            return None;
        }
        slot.delivery = now;
        let changed = slot.clone();
        crate::program::write_reach(&mut inner);
        Some((changed, before))
    }

    /// Frames the kernel dropped after the program sent them to each attached port
    /// (OpenFlow port, count); `Err` says why they are not counted.
    pub fn lost(&self) -> Result<Vec<(u32, u64)>, String> {
        self.read_lost(|_| true)
    }

    /// [`FastPath::lost`] of OpenFlow port `of_port` alone (0 if it is not attached).
    pub fn lost_of(&self, of_port: u32) -> Result<u64, String> {
        Ok(self.read_lost(|p| p == of_port)?.first().map_or(0, |(_, n)| *n))
    }

    /// The lost counts of the attached ports that `which` picks, summed over the CPUs.
    fn read_lost(&self, which: impl Fn(u32) -> bool) -> Result<Vec<(u32, u64)>, String> {
        let inner = self.shared.lock();
        inner.lost_counting.clone()?;
        let map = inner.ebpf.map("lost").ok_or("no lost map")?;
        let m = PerCpuArray::<_, u64>::try_from(map).map_err(|e| e.to_string())?;
        Ok(inner
            .slots
            .iter()
            .enumerate()
            .filter_map(|(slot, s)| {
                let s = s.as_ref().filter(|s| which(s.of_port))?;
                let n = m
                    .get(&(slot as u32), 0)
                    .ok()
                    .map_or(0, |v| v.iter().fold(0u64, |a, x| a.wrapping_add(*x)));
                Some((s.of_port, n))
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORMAT: &str = "name: xdp_devmap_xmit\nID: 578\nformat:\n\
        \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
        \tfield:int from_ifindex;\toffset:8;\tsize:4;\tsigned:1;\n\
        \tfield:u32 act;\toffset:12;\tsize:4;\tsigned:0;\n\
        \tfield:int to_ifindex;\toffset:16;\tsize:4;\tsigned:1;\n\
        \tfield:int drops;\toffset:20;\tsize:4;\tsigned:1;\n";

    #[test]
    fn format_fields_are_checked_by_name_offset_and_size() {
        assert!(has_field(FORMAT, "from_ifindex", 8, 4));
        assert!(has_field(FORMAT, "drops", 20, 4));
        assert!(!has_field(FORMAT, "drops", 24, 4));
        assert!(!has_field(FORMAT, "sent", 24, 4));
        assert!(!has_field(FORMAT, "ifindex", 8, 4), "a suffix is not the field");
    }

    #[test]
    fn generic_ports_and_delivered_ports_need_no_reason() {
        let p = PortUse {
            of_port: 1,
            ifindex: 1,
            name: "veth1".into(),
            veth: true,
            native: true,
            delivery: Delivery::Delivered,
        };
        assert_eq!(p.why_not(), None);
        for d in [Delivery::Dropped, Delivery::Unknown] {
            let p = PortUse { delivery: d, ..p.clone() };
            assert!(p.why_not().is_some(), "{d:?}");
        }
    }
}
