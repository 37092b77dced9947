//! The records the fast-path XDP program (bpf/fastpath.c) and user space share: the
//! exact-match key, the cached decision, the per-port record and the hit counters.
//!
//! Each struct here is `#[repr(C)]` and mirrors a struct of the same name in
//! bpf/fastpath.c field for field, with every padding byte spelled out as a field, so
//! that a key built here hashes to the same bytes as the key the program builds.
//! Multi-byte numbers are in host byte order (the program converts from the wire);
//! MAC addresses are in wire order.
//!
//! Invariant: `size_of` of each struct equals the C `sizeof` (checked by tests here and
//! by `_Static_assert`s in the C file).

/// The exact-match key the program builds from a frame it can parse (see the program's
/// comment for which frames those are). A field the frame does not carry is zero.
///
/// An MPLS frame (ethertype 0x8847 or 0x8848) has no L3 fields: its `ipv4_src` holds
/// the outermost label stack entry less its TTL (`label << 12 | TC << 9 | BoS << 8`,
/// [`FP_MPLS_LSE`]), which user space's key holds as `mpls_label`, `mpls_tc` and
/// `mpls_bos`; nothing below the entry is read.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FpKey {
    /// The OpenFlow number of the port the frame arrived on.
    pub in_port: u32,
    pub eth_dst: [u8; 6],
    pub eth_src: [u8; 6],
    /// The ethertype after the VLAN tag, if any.
    pub eth_type: u16,
    /// `0x1000 | VID` when the frame has a tag (OpenFlow's `OFPVID_PRESENT`), else 0.
    pub vlan_vid: u16,
    pub vlan_pcp: u8,
    pub ip_proto: u8,
    /// The whole IPv4 TOS byte (DSCP << 2 | ECN).
    pub ip_tos: u8,
    pub ip_ttl: u8,
    /// The IPv4 source, or an MPLS frame's outermost label stack entry less its TTL.
    pub ipv4_src: u32,
    pub ipv4_dst: u32,
    /// TCP/UDP source port, or the ICMP type.
    pub tp_src: u16,
    /// TCP/UDP destination port, or the ICMP code.
    pub tp_dst: u16,
    /// The low 12 bits of the TCP header's flags word.
    pub tcp_flags: u16,
    /// Zero in a frame's key and in a mask; in a flow map key, the slot of the mask
    /// the key was masked with.
    pub pad: u16,
}

/// The longest TCP/UDP segment whose unfinished checksum the program finishes.
pub const CSUM_MAX: usize = 4096;

/// Mask slots the program has (`masks`), and the most its lookup walks.
pub const FP_MASKS: usize = 32;

/// The mask slot holding the exact mask (every key bit), set at load.
pub const FP_EXACT_MASK: u16 = 0;

/// The bits of a label stack entry an MPLS frame's key holds (`FpKey::ipv4_src`): the
/// label, TC and bottom-of-stack bit, not the TTL.
pub const FP_MPLS_LSE: u32 = 0xffff_ff00;

impl FpKey {
    /// The mask of every bit of every field (an exact-match entry's mask).
    pub const EXACT: FpKey = FpKey {
        in_port: u32::MAX,
        eth_dst: [0xff; 6],
        eth_src: [0xff; 6],
        eth_type: u16::MAX,
        vlan_vid: u16::MAX,
        vlan_pcp: u8::MAX,
        ip_proto: u8::MAX,
        ip_tos: u8::MAX,
        ip_ttl: u8::MAX,
        ipv4_src: u32::MAX,
        ipv4_dst: u32::MAX,
        tp_src: u16::MAX,
        tp_dst: u16::MAX,
        tcp_flags: u16::MAX,
        pad: 0,
    };

    /// The flow map key of this frame key under `mask`, which is in slot `slot`: every
    /// field ANDed with the mask's, `pad` set to the slot (what the program looks up).
    pub fn masked(&self, mask: &FpKey, slot: u16) -> FpKey {
        let m = |a: &[u8; 6], b: &[u8; 6]| std::array::from_fn(|i| a[i] & b[i]);
        FpKey {
            in_port: self.in_port & mask.in_port,
            eth_dst: m(&self.eth_dst, &mask.eth_dst),
            eth_src: m(&self.eth_src, &mask.eth_src),
            eth_type: self.eth_type & mask.eth_type,
            vlan_vid: self.vlan_vid & mask.vlan_vid,
            vlan_pcp: self.vlan_pcp & mask.vlan_pcp,
            ip_proto: self.ip_proto & mask.ip_proto,
            ip_tos: self.ip_tos & mask.ip_tos,
            ip_ttl: self.ip_ttl & mask.ip_ttl,
            ipv4_src: self.ipv4_src & mask.ipv4_src,
            ipv4_dst: self.ipv4_dst & mask.ipv4_dst,
            tp_src: self.tp_src & mask.tp_src,
            tp_dst: self.tp_dst & mask.tp_dst,
            tcp_flags: self.tcp_flags & mask.tcp_flags,
            pad: slot,
        }
    }
}

/// The masks the program's lookup walks (`walk` array, one element): slots
/// `order[..n]` of `masks`, in that order.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FpWalk {
    pub n: u32,
    pub order: [u8; FP_MASKS],
    pub pad: u32,
}

/// Drop the frame (`FpEntry::out`).
pub const FP_DROP: u32 = u32::MAX;
/// `FpEntry::out`: `FP_GROUP | g` broadcasts the frame to the ports of group `g` (less
/// the input port).
pub const FP_GROUP: u32 = 0x8000_0000;
/// Broadcast groups the program has (maps `group0` ..).
pub const FP_GROUPS: u32 = 8;

/// `FpEntry::flags`: which rewrites to apply.
pub const FP_SET_ETH_DST: u32 = 1 << 0;
pub const FP_SET_ETH_SRC: u32 = 1 << 1;
pub const FP_SET_IPV4_SRC: u32 = 1 << 2;
pub const FP_SET_IPV4_DST: u32 = 1 << 3;
pub const FP_SET_TP_SRC: u32 = 1 << 4;
pub const FP_SET_TP_DST: u32 = 1 << 5;
pub const FP_SET_TOS: u32 = 1 << 6;
pub const FP_SET_TTL: u32 = 1 << 7;
/// Remove the frame's VLAN tag.
pub const FP_VLAN_POP: u32 = 1 << 8;
/// Insert a tag (`vlan_tpid`, `vlan_tci`) after the source MAC of an untagged frame.
pub const FP_VLAN_PUSH: u32 = 1 << 9;
/// Rewrite the VID and PCP of the frame's tag to those of `vlan_tci` (DEI is kept).
pub const FP_VLAN_SET: u32 = 1 << 10;

/// `FpEntry::flags` bits from here up (three): the entry's meter's band count.
pub const FP_METER_SHIFT: u32 = 12;

/// The MPLS rewrites (`FpEntry::flags`), done after the MACs' and before the VLAN
/// tag's. Their operand is the entry's MPLS word ([`FpEntry::mpls_word`]), which takes
/// the place of `tp_src` and `tp_dst`: an entry with one of these flags has no TCP/UDP
/// port rewrite.
///
/// Push a label stack entry (the MPLS word) after the VLAN tag, if any, of a frame
/// that has no label stack, and make the ethertype there 0x8847 (0x8848 with
/// [`FP_MPLS_MCAST`]).
pub const FP_MPLS_PUSH: u32 = 1 << 16;
/// With [`FP_MPLS_PUSH`]: the ethertype is 0x8848.
pub const FP_MPLS_MCAST: u32 = 1 << 17;
/// Remove an MPLS frame's outermost label stack entry and write the ethertype in the
/// MPLS word's high half. To another ethertype than MPLS's only where the frame keeps
/// at least 60 bytes and the IPv4 or IPv6 header the ethertype names (if its length
/// field is in the frame) ends where the frame ends (user space would pad, or trim
/// the padding); else the frame goes to user space.
pub const FP_MPLS_POP: u32 = 1 << 18;
/// Rewrite the outermost entry's label, TC and bottom-of-stack bit to the MPLS word's
/// ([`FP_MPLS_LSE`] bits).
pub const FP_MPLS_SET: u32 = 1 << 19;
/// Rewrite the outermost entry's TTL to the MPLS word's low byte.
pub const FP_MPLS_TTL_SET: u32 = 1 << 20;
/// Decrement the outermost entry's TTL (a frame whose TTL is 0 or 1 goes to user
/// space, as with [`FP_MPLS_TTL_CHECK`]).
pub const FP_MPLS_TTL_DEC: u32 = 1 << 21;
/// A frame whose outermost entry's TTL is 0 or 1 goes to user space (the decision
/// decrements that TTL, which fails there).
pub const FP_MPLS_TTL_CHECK: u32 = 1 << 22;
/// Every MPLS rewrite flag.
pub const FP_MPLS_FLAGS: u32 = FP_MPLS_PUSH
    | FP_MPLS_MCAST
    | FP_MPLS_POP
    | FP_MPLS_SET
    | FP_MPLS_TTL_SET
    | FP_MPLS_TTL_DEC
    | FP_MPLS_TTL_CHECK;
/// Cells of `bands` per meter block (`datapath::meter::KERNEL_BANDS`).
pub const FP_METER_BANDS: usize = 4;
/// Cells in the program's `bands` map (meter blocks times [`FP_METER_BANDS`]).
pub const FP_BAND_CELLS: usize = 1024;

/// What the program does with a frame whose key matches: the rewrites, then redirect
/// to the port in devmap slot `out` (or drop).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FpEntry {
    /// The generation the entry was written in; the entry is used only while the
    /// program's current generation (`FpState::version`) equals it. User space starts a
    /// new generation to make every entry a miss at once.
    pub version: u64,
    /// The entry's counter slot (see [`FpCounter`]).
    pub counter: u32,
    /// The devmap slot of the output port, [`FP_DROP`], or [`FP_GROUP`] | a group.
    pub out: u32,
    /// `FP_*` rewrite flags.
    pub flags: u32,
    /// `FP_VLAN_PUSH`: the tag's TCI; `FP_VLAN_SET`: the new VID and PCP bits.
    pub vlan_tci: u16,
    /// `FP_VLAN_PUSH`: the tag's TPID.
    pub vlan_tpid: u16,
    pub eth_dst: [u8; 6],
    pub eth_src: [u8; 6],
    pub ipv4_src: u32,
    pub ipv4_dst: u32,
    /// The new TCP/UDP source port; with an `FP_MPLS_*` flag, the MPLS word's high half.
    pub tp_src: u16,
    /// The new TCP/UDP destination port; with an `FP_MPLS_*` flag, the MPLS word's low
    /// half.
    pub tp_dst: u16,
    pub ip_tos: u8,
    pub ip_ttl: u8,
    /// 1 + the block of `bands` its meter meters with (0: no meter); the meter's band
    /// count is in `flags` (see [`FP_METER_SHIFT`]).
    pub meter: u16,
    /// The counter slot of the frames its meter dropped (with a meter).
    pub dropped: u32,
}

impl FpEntry {
    /// The operand of the `FP_MPLS_*` rewrites: the label stack entry pushed
    /// ([`FP_MPLS_PUSH`]); the label, TC and bottom-of-stack bit ([`FP_MPLS_SET`]) and
    /// TTL ([`FP_MPLS_TTL_SET`]) of the outermost entry; or, in its high half, the
    /// ethertype a pop writes ([`FP_MPLS_POP`]).
    pub fn mpls_word(&self) -> u32 {
        (u32::from(self.tp_src) << 16) | u32::from(self.tp_dst)
    }

    /// Sets [`mpls_word`](Self::mpls_word).
    pub fn set_mpls_word(&mut self, w: u32) {
        self.tp_src = (w >> 16) as u16;
        self.tp_dst = w as u16;
    }
}

/// One port the program is attached to, by ifindex (`ports` map).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FpPort {
    /// Its OpenFlow port number (the key's `in_port`).
    pub of_port: u32,
    /// The XSKMAP index of its rx queue 0; queue `q` is at `xsk_base + q`.
    pub xsk_base: u32,
    /// Its rx queue count: frames of a queue at or above it go to the kernel stack.
    pub queues: u32,
    /// `FP_PORT_*` flags.
    pub flags: u32,
}

/// `FpPort::flags`: attached in native mode (the program finishes checksums that
/// senders left to the device on frames it forwards from the port; in generic mode the
/// frame keeps its socket buffer, and the kernel finishes them further on).
pub const FP_PORT_NATIVE: u32 = 1 << 0;

/// The program's state (`state` array, one element).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FpState {
    /// The generation whose entries are live.
    pub version: u64,
    /// Counter slots per CPU in `counters`.
    pub slots: u32,
    /// Non-zero once a stopped switch left the program forwarding for its restart: the
    /// CLOCK_MONOTONIC time (ns >> 30) after which the program serves no entry.
    pub orphan_until: u32,
}

/// One counter slot on one CPU (`counters` array, mmapable: element
/// `cpu * slots + slot`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FpCounter {
    pub packets: u64,
    /// Frame bytes as received (before rewrites).
    pub bytes: u64,
}

/// Indexes of the program's per-CPU event counts (`events` array).
pub mod event {
    /// Frames that hit a live entry.
    pub const HIT: u32 = 0;
    /// Parsed frames with no entry.
    pub const MISS: u32 = 1;
    /// Parsed frames whose entry is of another version.
    pub const STALE: u32 = 2;
    /// Frames the program does not parse (sent to user space).
    pub const UNPARSED: u32 = 3;
    /// Frames of a queue or interface with no socket, passed to the kernel stack.
    pub const PASSED: u32 = 4;
    /// Hits whose rewrite could not be applied as user space's (a header missing, a pop
    /// that leaves what user space pads or trims, an MPLS TTL whose decrement fails):
    /// sent to user space.
    pub const REWRITE_FAILED: u32 = 5;
    /// Hits of TCP/UDP frames whose checksum the sender left to the device (transmit
    /// checksum offload) that the program does not finish (a segment longer than
    /// [`super::CSUM_MAX`], or a port in generic mode): sent to user space.
    pub const PARTIAL_CSUM: u32 = 6;
    /// Hits whose checksum the sender left to the device, finished by the program.
    pub const CSUM_FINISHED: u32 = 7;
    /// Hits from a native-mode port whose output takes no XDP frames now (its veth
    /// peer runs no NAPI, say): sent to user space, which delivers them.
    pub const UNDELIVERED: u32 = 8;
    /// Hits of metered entries (metered in the kernel).
    pub const METERED: u32 = 9;
    /// Hits a meter band dropped in the kernel.
    pub const METER_DROPPED: u32 = 10;
    /// Number of event kinds.
    pub const COUNT: u32 = 11;
}
