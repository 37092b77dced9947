// SPDX-License-Identifier: Apache-2.0
//
// The in-kernel fast tier (crates/xdp): an exact-match cache of datapath decisions in
// front of the AF_XDP sockets.
//
// Per frame:
//  1. `ports[ingress_ifindex]` gives the port's OpenFlow number, its XSKMAP base and its
//     rx queue count. No entry: XDP_PASS. A queue at or above the count: XDP_PASS
//     (event PASSED).
//  2. The frame is parsed into a `struct fp_key` (zeroed first). Parsed are exactly the
//     frames that user space's parser (crates/datapath/src/parse) reads without error
//     AND whose key this program can build in full: Ethernet II, at most one VLAN tag
//     (0x8100 or 0x88a8; a second tag is not parsed), then IPv4 without fragments,
//     without truncation (the IP total length fits the frame), with TCP (full header,
//     options within the IP length), UDP, ICMP or any other protocol but SCTP; MPLS
//     (0x8847, 0x8848) with its outermost label stack entry in the frame, of which the
//     key holds the label, TC and BoS (in ipv4_src, see struct fp_key) and nothing
//     below, as user space's; or any other ethertype >= 0x0600 except IPv6, ARP and PBB
//     (L2 fields only). Anything else is "unparsed" (event UNPARSED) and goes to user
//     space.
//     A parsed TCP/UDP frame whose checksum its sender left to the device (see
//     parse()) is marked: on a hit its checksum is finished first (event
//     CSUM_FINISHED), as user space would (crates/datapath/src/rewrite/offload.rs), on
//     ports attached in native mode (FP_PORT_NATIVE); a hit on a generic-mode port or
//     of a segment longer than CSUM_MAX goes to user space (event PARTIAL_CSUM), as
//     does a miss, unmodified.
//  3. The megaflow lookup: for each mask slot `walk.order[i]`, i < `walk.n` (at most
//     FP_MASKS), the key ANDed with `masks[slot]`, its `pad` set to the slot, is looked
//     up in `flows`; the first entry of the current generation (`state.version`) found
//     is the frame's. None found: MISS if no entry at all was found, else STALE (only
//     entries of older generations); both go to user space. Every entry user space
//     writes is correct for every frame its masked key covers, so where several cover a
//     frame any of them may serve it. Slot 0 is set at load to the exact mask (every
//     key bit), so an exact key with pad 0 is an entry of its own.
//     A hit on a frame from a native-mode port whose entry sends to a port that takes
//     no XDP frames now (not in `reach`, see delivered()) goes to user space (event
//     UNDELIVERED), unmodified.
//  4. A hit applies the entry's rewrites in a fixed order (IPv4 src, dst, TOS, TTL,
//     TP src, dst, then eth dst, src, then MPLS push, or pop, or label/TC/BoS, TTL set,
//     TTL decrement, then VLAN pop, push, set), each with the same RFC 1624 incremental
//     checksum update as user space's rewrite code (crates/datapath/src/rewrite), so the
//     bytes are identical. An MPLS push (onto a frame without a label stack) inserts the
//     entry's label stack entry after the tag, if any, and sets the ethertype there, as
//     user space's push_mpls does (its entry: label and TC 0, BoS 1, the IPv4 TTL; the
//     program's holds that with the decision's later set-fields done); a pop removes the
//     outermost entry and writes the entry's ethertype. Every rewrite's header is checked to be there before anything is
//     written; if one is not, or a VLAN pop or an MPLS pop to another ethertype than
//     MPLS's would leave less than 60 bytes (which user space pads; both pops counted),
//     or an MPLS pop to MPLS finds no next entry, or an MPLS pop to IPv4 or IPv6 would
//     leave bytes after the IP packet (which user space trims), or the entry decrements
//     the MPLS TTL (or its decision does before a pop or set: FP_MPLS_TTL_CHECK) and that
//     TTL is 0 or 1 (user space's decrement fails), the frame goes to user space
//     unmodified (event REWRITE_FAILED). An entry with a meter
//     (`meter` != 0) first meters the frame (event METERED) with its meter's band cells
//     in `bands`, which the workers' meter updates too (see meter()): a drop band counts
//     the frame in the entry's counter and its `dropped` counter and drops it (event
//     METER_DROPPED); a remark band remarks an IPv4 frame's DSCP; both count the frame
//     in the band's cell. Then the entry's counter
//     (`counters[cpu * state.slots + entry.counter]`) counts the frame and its length as
//     received, event HIT, and the frame is dropped (out == FP_DROP), redirected to
//     devmap slot `out` of `tx_ports`, or (out == FP_GROUP | g) broadcast to every port
//     of group map `group<g>` but the one it came in on (several outputs of one frame:
//     FLOOD, ALL, or a list of ports).
//  5. To user space: the XSKMAP entry `port.xsk_base + queue`; a queue without a socket
//     passes the frame to the kernel stack.
//
// Two tracepoint programs count what the kernel drops after the program let a frame go
// (`lost[slot]`, per port slot of the interface the frame was sent to): devmap
// transmit drops (xdp:xdp_devmap_xmit: the driver took fewer frames than it was given,
// e.g. a veth whose peer runs no NAPI, or a full ring) and redirects that failed
// (xdp:xdp_redirect_err, e.g. an interface that takes no XDP frames), in both cases only
// for frames that came in on one of the switch's ports and were bound for another.
// User space reads their record fields at the offsets below after checking them
// against the tracepoints' format files.
//
// Invariants: the structs below mirror crates/xdp/src/layout.rs byte for byte (checked
// by _Static_assert here and size tests there); numbers in them are host order, MACs
// wire order. The program never writes a frame it does not forward from the cache.
// Every loop is unrolled with a constant bound.
//
// Compiled by scripts/bpf-build.sh (`clang -O2 -g -target bpf -c`) into the committed
// fastpath.o, which the crate embeds; no headers: the few uapi values are declared below
// with the names and numbers of <linux/bpf.h>.

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;

#define SEC(name) __attribute__((section(name), used))
#define __always_inline inline __attribute__((always_inline))

// BTF-style map definitions (what libbpf's __uint/__type expand to).
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name

// enum bpf_map_type.
#define BPF_MAP_TYPE_HASH 1
#define BPF_MAP_TYPE_ARRAY 2
#define BPF_MAP_TYPE_PERCPU_ARRAY 6
#define BPF_MAP_TYPE_DEVMAP 14
#define BPF_MAP_TYPE_XSKMAP 17
#define BPF_MAP_TYPE_DEVMAP_HASH 25
// map_flags.
#define BPF_F_MMAPABLE (1U << 10)
#define BPF_F_NO_PREALLOC (1U << 0)
// bpf_redirect_map flags.
#define BPF_F_BROADCAST (1ULL << 3)
#define BPF_F_EXCLUDE_INGRESS (1ULL << 4)
// enum xdp_action.
#define XDP_ABORTED 0
#define XDP_DROP 1
#define XDP_PASS 2

// The program's context (struct xdp_md in <linux/bpf.h>).
struct xdp_md {
	__u32 data;
	__u32 data_end;
	__u32 data_meta;
	__u32 ingress_ifindex;
	__u32 rx_queue_index;
	__u32 egress_ifindex;
};

// Helpers (enum bpf_func_id).
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static __u64 (*bpf_ktime_get_ns)(void) = (void *)5;
static __u32 (*bpf_get_smp_processor_id)(void) = (void *)8;
static long (*bpf_xdp_adjust_head)(struct xdp_md *ctx, int delta) = (void *)44;
static long (*bpf_redirect_map)(void *map, __u64 key, __u64 flags) = (void *)51;
static long (*bpf_csum_diff)(__u32 *from, __u32 from_size, __u32 *to, __u32 to_size,
			     __u32 seed) = (void *)28;
static long (*bpf_xdp_load_bytes)(struct xdp_md *ctx, __u32 off, void *buf, __u32 len) =
	(void *)189;
static long (*bpf_xdp_store_bytes)(struct xdp_md *ctx, __u32 off, void *buf, __u32 len) =
	(void *)190;

// ---- Shared records (crates/xdp/src/layout.rs) ----

// Also a mask (`masks`), and, masked with its `pad` set to the mask's slot, a flow
// map key. An MPLS frame's has no L3 fields: its ipv4_src holds the outermost label stack
// entry less the TTL (FP_MPLS_LSE bits: label << 12 | TC << 9 | BoS << 8).
struct fp_key {
	__u32 in_port;
	__u8 eth_dst[6];
	__u8 eth_src[6];
	__u16 eth_type;
	__u16 vlan_vid;
	__u8 vlan_pcp;
	__u8 ip_proto;
	__u8 ip_tos;
	__u8 ip_ttl;
	__u32 ipv4_src;
	__u32 ipv4_dst;
	__u16 tp_src;
	__u16 tp_dst;
	__u16 tcp_flags;
	__u16 pad;
};
_Static_assert(sizeof(struct fp_key) == 40, "fp_key mirrors layout::FpKey");

#define FP_MASKS 32

// XSKMAP entries per port: `fp_port.xsk_base` is the port's slot times this
// (crates/xdp/src/program.rs, QUEUES_PER_PORT).
#define QUEUES_PER_PORT 64

// The masks the lookup walks, in order (`walk` array, one element).
struct fp_walk {
	__u32 n;
	__u8 order[FP_MASKS];
	__u32 pad;
};
_Static_assert(sizeof(struct fp_walk) == 40, "fp_walk mirrors layout::FpWalk");

#define FP_DROP 0xffffffffU
#define FP_GROUP 0x80000000U
#define FP_GROUPS 8
#define FP_SET_ETH_DST (1U << 0)
#define FP_SET_ETH_SRC (1U << 1)
#define FP_SET_IPV4_SRC (1U << 2)
#define FP_SET_IPV4_DST (1U << 3)
#define FP_SET_TP_SRC (1U << 4)
#define FP_SET_TP_DST (1U << 5)
#define FP_SET_TOS (1U << 6)
#define FP_SET_TTL (1U << 7)
#define FP_VLAN_POP (1U << 8)
#define FP_VLAN_PUSH (1U << 9)
#define FP_VLAN_SET (1U << 10)
// The MPLS rewrites (layout.rs has what each does). Their operand, the MPLS word, is
// (tp_src << 16 | tp_dst): an entry with one of them has no port rewrite.
#define FP_MPLS_PUSH (1U << 16)
#define FP_MPLS_MCAST (1U << 17)
#define FP_MPLS_POP (1U << 18)
#define FP_MPLS_SET (1U << 19)
#define FP_MPLS_TTL_SET (1U << 20)
#define FP_MPLS_TTL_DEC (1U << 21)
#define FP_MPLS_TTL_CHECK (1U << 22)
// The label stack entry bits an MPLS frame's key holds (in ipv4_src): label, TC, BoS.
#define FP_MPLS_LSE 0xffffff00U
// Bits 12-14 of `flags`: how many bands the entry's meter has (1..FP_METER_BANDS).
#define FP_METER_SHIFT 12
#define FP_METER_BANDS 4
#define FP_BAND_REMARK 1
#define FP_BYTE_COST_SHIFT 16
#define FP_UNITS_PER_NS 16
#define FP_NEVER (~0ULL / 4)
// Compare-exchange attempts on a band's word before the band counts as exceeded.
#define FP_CAS_TRIES 8

struct fp_entry {
	__u64 version;
	__u32 counter;
	__u32 out;
	__u32 flags;
	__u16 vlan_tci;
	__u16 vlan_tpid;
	__u8 eth_dst[6];
	__u8 eth_src[6];
	__u32 ipv4_src;
	__u32 ipv4_dst;
	__u16 tp_src;
	__u16 tp_dst;
	__u8 ip_tos;
	__u8 ip_ttl;
	// The entry's meter: 1 + its block in `bands` (0: none); its band count is in
	// `flags` (FP_METER_BANDS).
	__u16 meter;
	// The counter slot of the frames its meter dropped.
	__u32 dropped;
};
_Static_assert(sizeof(struct fp_entry) == 56, "fp_entry mirrors layout::FpEntry");

// A meter band's cell (crates/datapath/src/meter.rs, BandCell): GCRA on `tat`, shared
// with the workers through the mmapped `bands` map, in 1/16 ns of the kernel's monotonic
// clock. Only `tat` (compare-exchange, by both sides) and the kernel counts change once
// an entry names the cell.
struct fp_band {
	__u64 tat;
	__u64 tau;
	__u64 per_packet;
	__u64 per_byte;
	__u64 action;
	__u64 kernel_packets;
	__u64 kernel_bytes;
	__u64 reserved;
};
_Static_assert(sizeof(struct fp_band) == 64, "fp_band mirrors meter::BandCell");

struct fp_port {
	__u32 of_port;
	__u32 xsk_base;
	__u32 queues;
	__u32 flags;
};
_Static_assert(sizeof(struct fp_port) == 16, "fp_port mirrors layout::FpPort");

// fp_port.flags: the port is attached in native mode, where a frame forwarded is a new
// buffer at its output and must carry a finished checksum. In generic mode the frame
// stays the sender's socket buffer, whose unfinished checksum (and segmentation) the
// kernel completes further on: there the program leaves it to user space as it is.
#define FP_PORT_NATIVE (1U << 0)

struct fp_state {
	__u64 version;
	__u32 slots;
	// Non-zero once the switch that loaded the program has stopped and left it
	// forwarding for its restart: the time (CLOCK_MONOTONIC ns >> 30, units of about
	// 1.07 s) after which the program passes every frame to the stack.
	__u32 orphan_until;
};
_Static_assert(sizeof(struct fp_state) == 16, "fp_state mirrors layout::FpState");

struct fp_counter {
	__u64 packets;
	__u64 bytes;
};
_Static_assert(sizeof(struct fp_counter) == 16, "fp_counter mirrors layout::FpCounter");

// layout::event.
#define EV_HIT 0
#define EV_MISS 1
#define EV_STALE 2
#define EV_UNPARSED 3
#define EV_PASSED 4
#define EV_REWRITE_FAILED 5
#define EV_PARTIAL_CSUM 6
#define EV_CSUM_FINISHED 7
#define EV_UNDELIVERED 8
#define EV_METERED 9
#define EV_METER_DROPPED 10
#define EV_COUNT 11

// ---- Maps (max_entries are set by the loader, src/program.rs) ----

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct fp_port);
	__uint(max_entries, 64);
} ports SEC(".maps");

// Sized, not typed, as the ports crate's redirect.c does: older kernels refuse BTF
// key/value types on XSKMAP and DEVMAP.
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, 4096);
} xsks SEC(".maps");

// Value: struct bpf_devmap_val (ifindex, then a chained program fd/id, unused), the
// form aya's DevMap writes on kernels that know it (5.8+).
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 8);
	__uint(max_entries, 64);
} tx_ports SEC(".maps");

// Not preallocated: elements come from the kernel's slab, in its directly mapped
// memory, so a lookup among many entries costs cache misses but no TLB misses (a
// preallocated map lives in vmalloc space, one 4 KiB page per few entries); and an
// element that user space replaces is freed only after an RCU grace period, so the
// program never reads an element being reused for another key.
// The broadcast groups: a port set each (key: devmap slot, value: struct bpf_devmap_val
// with the port's ifindex). The set includes the input port of the entries that use it,
// which BPF_F_EXCLUDE_INGRESS leaves out, so one group serves a flood from any port.
#define GROUP_MAP(n)                                      \
	struct {                                          \
		__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);   \
		__uint(key_size, sizeof(__u32));          \
		__uint(value_size, 8);                    \
		__uint(max_entries, 64);                  \
	} group##n SEC(".maps")
GROUP_MAP(0);
GROUP_MAP(1);
GROUP_MAP(2);
GROUP_MAP(3);
GROUP_MAP(4);
GROUP_MAP(5);
GROUP_MAP(6);
GROUP_MAP(7);
_Static_assert(FP_GROUPS == 8, "one map per group");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct fp_key);
	__type(value, struct fp_entry);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct fp_state);
	__uint(max_entries, 1);
} state SEC(".maps");

// The megaflow masks, by slot. A slot's mask is rewritten only while no walk names it
// and no entry uses it, after frames that may have read it have left the program.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct fp_key);
	__uint(max_entries, FP_MASKS);
} masks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct fp_walk);
	__uint(max_entries, 1);
} walk SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct fp_counter);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_MMAPABLE);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, EV_COUNT);
} events SEC(".maps");

// The meter bands' cells, FP_METER_BANDS per meter block; user space maps them.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct fp_band);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_MMAPABLE);
} bands SEC(".maps");

// Where the kernel delivers what a native-mode port forwards (see fastpath()): element 0
// holds a bit per devmap slot (below 64) whose interface takes XDP frames; element
// 1 + g the slots of broadcast group g. Written by user space, one element at a time.
#define REACH_PORTS 0
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1 + FP_GROUPS);
} reach SEC(".maps");

// Whether a frame that arrived on native-mode `port` and hits an entry sending to `out`
// (a devmap slot, or FP_GROUP | g) would reach every output: each must take XDP frames
// (the input port itself, which a broadcast leaves out, excepted).
static __always_inline int delivered(const struct fp_port *port, __u32 out)
{
	__u32 zero = REACH_PORTS;
	const __u64 *ok = bpf_map_lookup_elem(&reach, &zero);
	if (!ok)
		return 0;
	if (out & FP_GROUP) {
		__u32 g = 1 + (out & (FP_GROUPS - 1));
		const __u64 *members = bpf_map_lookup_elem(&reach, &g);
		if (!members)
			return 0;
		__u32 in_slot = port->xsk_base / QUEUES_PER_PORT;
		__u64 in_bit = in_slot < 64 ? 1ULL << in_slot : 0;
		return (*members & ~in_bit & ~*ok) == 0;
	}
	return out < 64 && (*ok >> out) & 1;
}

// A CPU's room for the piece of a segment finish_csum sums.
struct fp_scratch {
	__u8 b[512];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct fp_scratch);
	__uint(max_entries, 1);
} scratch SEC(".maps");

// Frames the kernel dropped after the program sent them to a port, per port slot.
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 64);
} lost SEC(".maps");

// ---- Helpers ----

static __always_inline void count(__u32 ev)
{
	__u64 *n = bpf_map_lookup_elem(&events, &ev);
	if (n)
		*n += 1;
}

// Counts a frame of `len` bytes in counter slot `slot` of CPU `cpu`.
static __always_inline void count_hit(__u32 cpu, __u32 slots, __u32 slot, __u64 len)
{
	if (slot >= slots)
		return;
	__u32 idx = cpu * slots + slot;
	struct fp_counter *c = bpf_map_lookup_elem(&counters, &idx);
	if (c) {
		c->packets += 1;
		c->bytes += len;
	}
}

static __always_inline __u16 ld16(const __u8 *p)
{
	return ((__u16)p[0] << 8) | p[1];
}

static __always_inline void st16(__u8 *p, __u16 v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static __always_inline __u32 ld32(const __u8 *p)
{
	return ((__u32)ld16(p) << 16) | ld16(p + 2);
}

// Folds a sum of at most a few thousand 16-bit words to 16 bits (end-around carry).
static __always_inline __u16 fold(__u64 acc)
{
	acc = (acc & 0xffff) + (acc >> 16);
	acc = (acc & 0xffff) + (acc >> 16);
	acc = (acc & 0xffff) + (acc >> 16);
	return (__u16)acc;
}

// The delta of rewriting the even-aligned 16-bit words `old` to `new` (n words): user
// space's checksum::write: !sum(before) + sum(after), each sum folded.
static __always_inline __u64 delta1(__u16 old, __u16 new)
{
	return (__u64)(__u16)~fold(old) + fold(new);
}

static __always_inline __u64 delta2(__u16 o0, __u16 o1, __u16 n0, __u16 n1)
{
	return (__u64)(__u16)~fold((__u64)o0 + o1) + fold((__u64)n0 + n1);
}

// checksum::update: the stored checksum at `p` follows the delta.
static __always_inline void csum_update(__u8 *p, __u64 d)
{
	__u16 hc = ld16(p);
	st16(p, (__u16)~fold((__u64)(__u16)~hc + d));
}

// checksum::update_udp: zero ("no checksum") stays zero; a computed zero is 0xffff.
static __always_inline void csum_update_udp(__u8 *p, __u64 d)
{
	__u16 hc = ld16(p);
	if (hc == 0)
		return;
	__u16 v = (__u16)~fold((__u64)(__u16)~hc + d);
	st16(p, v == 0 ? 0xffff : v);
}

// What the parser learnt beyond the key: where the headers are.
struct hdrs {
	__u32 l3;    // 14 or 18 (0: not IPv4)
	__u32 l4;    // l3 + ihl (0: no TCP/UDP/ICMP header)
	__u32 tagged;
	__u32 partial; // the TCP/UDP checksum is the sender's pseudo-header sum only
	__u32 seg;     // the L4 segment's length (IPv4 total length less the header)
	__u32 mpls;    // the outermost label stack entry's offset, 14 or 18 (0: not MPLS)
	__u32 mpls_ttl; // its TTL
	__u32 trim;    // TRIM_*: a pop of it to that IP would have user space trim the frame
};

// hdrs.trim: the bytes below the entry hold an IPv4 total length of 20 or more, or an
// IPv6 payload length that with the 40 bytes of its header, ends before the frame does
// (user space's pop_mpls cuts the frame there, taking it for Ethernet padding).
#define TRIM_IPV4 1
#define TRIM_IPV6 2

#define ETH_P_IPV4 0x0800
#define ETH_P_ARP 0x0806
#define ETH_P_VLAN 0x8100
#define ETH_P_QINQ 0x88a8
#define ETH_P_IPV6 0x86dd
#define ETH_P_MPLS 0x8847
#define ETH_P_MPLS_MC 0x8848
#define ETH_P_PBB 0x88e7

// Step 2: 0 when the frame is parsed into `k`, -1 when it is not. A TCP or UDP frame
// whose checksum field holds only the pseudo-header's sum has `partial` set: its sender
// left the checksum to the device (transmit checksum offload), and the frame as bytes
// no longer says so. Its checksum is finished before it goes on (finish_csum here on a
// hit, user space otherwise); a correct checksum that equals this sum by chance (1 in
// 65536) is recognised there by its segment summing to 0xffff and left as it is.

// The longest L4 segment whose checksum the program finishes.
#define CSUM_MAX 4096

// The folded one's-complement sum of the IPv4 pseudo-header of an L4 segment of `len`
// bytes (what an offloading sender leaves in the checksum field).
static __always_inline __u16 pseudo_sum(const __u8 *ip, __u32 len)
{
	__u32 s = (__u32)ld16(ip + 12) + ld16(ip + 14) + ld16(ip + 16) + ld16(ip + 18) +
		  ip[9] + len;
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return s;
}

// Fills `k` and `h` from the frame: 0 when the program may serve it, -1 for a frame it
// does not parse.
static __always_inline int parse(struct xdp_md *ctx, struct fp_key *k, struct hdrs *h)
{
	__u8 *data = (__u8 *)(long)ctx->data;
	__u8 *end = (__u8 *)(long)ctx->data_end;
	__u64 len = end - data;

	if (data + 14 > end)
		return -1;
	__builtin_memcpy(k->eth_dst, data, 6);
	__builtin_memcpy(k->eth_src, data + 6, 6);
	__u16 ty = ld16(data + 12);
	__u32 l3 = 14;
	if (ty == ETH_P_VLAN || ty == ETH_P_QINQ) {
		if (data + 18 > end)
			return -1;
		__u16 tci = ld16(data + 14);
		k->vlan_vid = 0x1000 | (tci & 0x0fff);
		k->vlan_pcp = tci >> 13;
		ty = ld16(data + 16);
		if (ty == ETH_P_VLAN || ty == ETH_P_QINQ)
			return -1;
		h->tagged = 1;
		l3 = 18;
	}
	if (ty < 0x0600 || ty == ETH_P_IPV6 || ty == ETH_P_ARP || ty == ETH_P_PBB)
		return -1;
	k->eth_type = ty;
	if (ty == ETH_P_MPLS || ty == ETH_P_MPLS_MC) {
		__u8 *lse = data + l3;
		if (lse + 4 > end)
			return -1;
		k->ipv4_src = ld32(lse) & FP_MPLS_LSE;
		h->mpls = l3;
		h->mpls_ttl = lse[3];
		__u8 *below = lse + 4;
		__u64 rest = len - l3 - 4;
		if (below + 4 <= end) {
			__u64 n = ld16(below + 2);
			if (n >= 20 && n < rest)
				h->trim |= TRIM_IPV4;
		}
		if (below + 6 <= end) {
			__u64 n = ld16(below + 4) + 40;
			if (n < rest)
				h->trim |= TRIM_IPV6;
		}
		return 0;
	}
	if (ty != ETH_P_IPV4)
		return 0;

	__u8 *ip = data + l3;
	if (ip + 20 > end)
		return -1;
	__u32 ihl = (ip[0] & 0x0f) * 4;
	if ((ip[0] >> 4) != 4 || ihl < 20)
		return -1;
	__u32 total = ld16(ip + 2);
	if (total < ihl || l3 + total > len)
		return -1;
	if (ld16(ip + 6) & 0x3fff)
		return -1;
	k->ip_tos = ip[1];
	k->ip_ttl = ip[8];
	k->ip_proto = ip[9];
	k->ipv4_src = ((__u32)ld16(ip + 12) << 16) | ld16(ip + 14);
	k->ipv4_dst = ((__u32)ld16(ip + 16) << 16) | ld16(ip + 18);
	h->l3 = l3;

	__u32 l4 = l3 + ihl;
	__u32 ip_end = l3 + total;
	__u8 *t = data + l4;
	switch (k->ip_proto) {
	case 6: {
		if (l4 + 20 > ip_end || t + 20 > end)
			return -1;
		__u32 doff = (t[12] >> 4) * 4;
		if (doff < 20 || l4 + doff > ip_end)
			return -1;
		k->tp_src = ld16(t);
		k->tp_dst = ld16(t + 2);
		k->tcp_flags = ld16(t + 12) & 0x0fff;
		if (ld16(t + 16) == pseudo_sum(ip, total - ihl))
			h->partial = 1;
		break;
	}
	case 17:
		if (l4 + 8 > ip_end || t + 8 > end)
			return -1;
		k->tp_src = ld16(t);
		k->tp_dst = ld16(t + 2);
		if (ld16(t + 6) == pseudo_sum(ip, total - ihl))
			h->partial = 1;
		break;
	case 1:
		if (l4 + 4 > ip_end || t + 4 > end)
			return -1;
		k->tp_src = t[0];
		k->tp_dst = t[1];
		break;
	case 132:
		return -1;
	default:
		return 0;
	}
	h->l4 = l4;
	h->seg = total - ihl;
	return 0;
}

#define L3_FLAGS (FP_SET_IPV4_SRC | FP_SET_IPV4_DST | FP_SET_TOS | FP_SET_TTL)
#define TP_FLAGS (FP_SET_TP_SRC | FP_SET_TP_DST)
// The rewrites of an MPLS frame's outermost entry (other than a pop).
#define MPLS_ENTRY_FLAGS (FP_MPLS_SET | FP_MPLS_TTL_SET | FP_MPLS_TTL_DEC)

// Whether the MPLS rewrites of `e` apply to the frame parsed as `h` (`len` bytes) as user
// space's do: a push onto a frame without a label stack; the rest on an MPLS frame, whose
// TTL a decrement on the decision's path leaves above zero, and whose pop needs no
// padding (the frame keeps 60 bytes, both pops counted in either order; a pop to MPLS
// pads nothing but after a VLAN pop) or trimming (hdrs.trim).
static __always_inline int can_rewrite_mpls(const struct fp_entry *e, const struct hdrs *h,
					    __u64 len)
{
	__u32 f = e->flags;
	if (f & FP_MPLS_PUSH)
		return h->mpls == 0;
	if (!(f & (FP_MPLS_POP | MPLS_ENTRY_FLAGS | FP_MPLS_TTL_CHECK)))
		return 1;
	if (!h->mpls)
		return 0;
	if ((f & (FP_MPLS_TTL_DEC | FP_MPLS_TTL_CHECK)) && h->mpls_ttl <= 1)
		return 0;
	if (!(f & FP_MPLS_POP))
		return 1;
	__u64 pops = (f & FP_VLAN_POP) ? 8 : 4;
	__u64 rest = len - h->mpls - 4;
	__u16 ty = e->tp_src;
	if (ty == ETH_P_MPLS || ty == ETH_P_MPLS_MC)
		return rest >= 4 && (!(f & FP_VLAN_POP) || len - pops >= 60);
	if (len - pops < 60)
		return 0;
	if (ty == ETH_P_IPV4 && (h->trim & TRIM_IPV4))
		return 0;
	if (ty == ETH_P_IPV6 && (h->trim & TRIM_IPV6))
		return 0;
	return 1;
}

// Whether every rewrite of `e` finds its header in the frame parsed as `k`/`h`.
static __always_inline int can_rewrite(const struct fp_entry *e, const struct fp_key *k,
				       const struct hdrs *h, __u64 len)
{
	__u32 f = e->flags;
	if ((f & L3_FLAGS) && h->l3 == 0)
		return 0;
	if ((f & TP_FLAGS) && (h->l4 == 0 || (k->ip_proto != 6 && k->ip_proto != 17)))
		return 0;
	if (!can_rewrite_mpls(e, h, len))
		return 0;
	int tagged = h->tagged;
	if (f & FP_VLAN_POP) {
		if (!tagged || len - 4 < 60)
			return 0;
		tagged = 0;
		len -= 4;
	}
	if (f & FP_VLAN_PUSH) {
		if (tagged)
			return 0;
		tagged = 1;
	}
	if ((f & FP_VLAN_SET) && !tagged)
		return 0;
	return 1;
}

// Step 4's MPLS rewrites, once can_rewrite said yes: a push (after the tag, if any); else
// a pop; else the outermost entry's label, TC and BoS, then its TTL set, then
// decremented. 0 on success, -1 if the frame turned out shorter than the parse saw.
static __always_inline int rewrite_mpls(struct xdp_md *ctx, const struct fp_entry *e,
					const struct hdrs *h)
{
	__u32 f = e->flags;
	__u32 w = ((__u32)e->tp_src << 16) | e->tp_dst;
	__u8 *data = (__u8 *)(long)ctx->data;
	__u8 *end = (__u8 *)(long)ctx->data_end;
	__u8 hdr[16];

	if (f & FP_MPLS_PUSH) {
		__u16 ty = (f & FP_MPLS_MCAST) ? ETH_P_MPLS_MC : ETH_P_MPLS;
		if (bpf_xdp_adjust_head(ctx, -4))
			return -1;
		data = (__u8 *)(long)ctx->data;
		end = (__u8 *)(long)ctx->data_end;
		// The MACs (and tag) move 4 bytes up; the ethertype and the entry follow them.
		if (h->tagged) {
			if (data + 22 > end)
				return -1;
			__builtin_memcpy(hdr, data + 4, 16);
			__builtin_memcpy(data, hdr, 16);
			st16(data + 16, ty);
			st16(data + 18, w >> 16);
			st16(data + 20, w & 0xffff);
		} else {
			if (data + 18 > end)
				return -1;
			__builtin_memcpy(hdr, data + 4, 12);
			__builtin_memcpy(data, hdr, 12);
			st16(data + 12, ty);
			st16(data + 14, w >> 16);
			st16(data + 16, w & 0xffff);
		}
		return 0;
	}
	if (f & FP_MPLS_POP) {
		// The ethertype goes over the entry's last two bytes, the MACs (and tag) 4 bytes
		// down, up to it; the frame then starts 4 bytes later.
		if (h->tagged) {
			if (data + 22 > end)
				return -1;
			st16(data + 20, e->tp_src);
			__builtin_memcpy(hdr, data, 16);
			__builtin_memcpy(data + 4, hdr, 16);
		} else {
			if (data + 18 > end)
				return -1;
			st16(data + 16, e->tp_src);
			__builtin_memcpy(hdr, data, 12);
			__builtin_memcpy(data + 4, hdr, 12);
		}
		return bpf_xdp_adjust_head(ctx, 4) ? -1 : 0;
	}
	if (f & MPLS_ENTRY_FLAGS) {
		__u8 *p = data + (h->mpls & 0x1f);
		if (p + 4 > end)
			return -1;
		__u32 lse = ld32(p);
		if (f & FP_MPLS_SET)
			lse = (lse & ~FP_MPLS_LSE) | (w & FP_MPLS_LSE);
		if (f & FP_MPLS_TTL_SET)
			lse = (lse & ~0xffU) | (w & 0xff);
		if (f & FP_MPLS_TTL_DEC)
			lse = (lse & ~0xffU) | (((lse & 0xff) - 1) & 0xff);
		st16(p, lse >> 16);
		st16(p + 2, lse & 0xffff);
	}
	return 0;
}

// Step 4's rewrites, once can_rewrite said yes. 0 on success, -1 if the frame turned out
// shorter than the parse saw (cannot happen; the frame is then dropped as aborted).
static __always_inline int rewrite(struct xdp_md *ctx, const struct fp_entry *e,
				   const struct fp_key *k, const struct hdrs *h)
{
	__u32 f = e->flags;
	__u8 *data = (__u8 *)(long)ctx->data;
	__u8 *end = (__u8 *)(long)ctx->data_end;

	if (f & L3_FLAGS) {
		__u32 l3 = h->l3 & 0x1f;
		__u8 *ip = data + l3;
		if (ip + 20 > end)
			return -1;
		// The transport checksum that covers the pseudo-header, if any.
		__u8 *tcs = 0;
		int udp = 0;
		if (h->l4 && (k->ip_proto == 6 || k->ip_proto == 17)) {
			__u32 l4 = h->l4 & 0x7f;
			__u8 *t = data + l4;
			if (t + 20 > end && k->ip_proto == 6)
				return -1;
			if (t + 8 > end)
				return -1;
			if (k->ip_proto == 6) {
				if (t + 18 > end)
					return -1;
				tcs = t + 16;
			} else {
				tcs = t + 6;
				udp = 1;
			}
		}
		if (f & FP_SET_IPV4_SRC) {
			__u16 n0 = e->ipv4_src >> 16, n1 = e->ipv4_src & 0xffff;
			__u64 d = delta2(ld16(ip + 12), ld16(ip + 14), n0, n1);
			st16(ip + 12, n0);
			st16(ip + 14, n1);
			csum_update(ip + 10, d);
			if (tcs) {
				if (ip + 20 > end || tcs + 2 > end)
					return -1;
				if (udp)
					csum_update_udp(tcs, d);
				else
					csum_update(tcs, d);
			}
		}
		if (f & FP_SET_IPV4_DST) {
			__u16 n0 = e->ipv4_dst >> 16, n1 = e->ipv4_dst & 0xffff;
			__u64 d = delta2(ld16(ip + 16), ld16(ip + 18), n0, n1);
			st16(ip + 16, n0);
			st16(ip + 18, n1);
			csum_update(ip + 10, d);
			if (tcs) {
				if (tcs + 2 > end)
					return -1;
				if (udp)
					csum_update_udp(tcs, d);
				else
					csum_update(tcs, d);
			}
		}
		if (f & FP_SET_TOS) {
			__u16 old = ld16(ip);
			__u16 new = (old & 0xff00) | e->ip_tos;
			__u64 d = delta1(old, new);
			ip[1] = e->ip_tos;
			csum_update(ip + 10, d);
		}
		if (f & FP_SET_TTL) {
			__u16 old = ld16(ip + 8);
			__u16 new = ((__u16)e->ip_ttl << 8) | (old & 0xff);
			__u64 d = delta1(old, new);
			ip[8] = e->ip_ttl;
			csum_update(ip + 10, d);
		}
	}

	if (f & TP_FLAGS) {
		__u32 l4 = h->l4 & 0x7f;
		__u8 *t = data + l4;
		if (t + 8 > end)
			return -1;
		int tcp = k->ip_proto == 6;
		if (tcp && t + 20 > end)
			return -1;
		if (f & FP_SET_TP_SRC) {
			__u64 d = delta1(ld16(t), e->tp_src);
			st16(t, e->tp_src);
			if (tcp) {
				if (t + 20 > end)
					return -1;
				csum_update(t + 16, d);
			} else {
				csum_update_udp(t + 6, d);
			}
		}
		if (f & FP_SET_TP_DST) {
			__u64 d = delta1(ld16(t + 2), e->tp_dst);
			st16(t + 2, e->tp_dst);
			if (tcp) {
				if (t + 20 > end)
					return -1;
				csum_update(t + 16, d);
			} else {
				csum_update_udp(t + 6, d);
			}
		}
	}

	if (data + 14 > end)
		return -1;
	if (f & FP_SET_ETH_DST)
		__builtin_memcpy(data, e->eth_dst, 6);
	if (f & FP_SET_ETH_SRC)
		__builtin_memcpy(data + 6, e->eth_src, 6);

	if ((f & (FP_MPLS_PUSH | FP_MPLS_POP | MPLS_ENTRY_FLAGS)) && rewrite_mpls(ctx, e, h))
		return -1;
	data = (__u8 *)(long)ctx->data;
	end = (__u8 *)(long)ctx->data_end;

	if (f & FP_VLAN_POP) {
		__u8 macs[12];
		if (data + 18 > end)
			return -1;
		__builtin_memcpy(macs, data, 12);
		__builtin_memcpy(data + 4, macs, 12);
		if (bpf_xdp_adjust_head(ctx, 4))
			return -1;
	}
	if (f & FP_VLAN_PUSH) {
		if (bpf_xdp_adjust_head(ctx, -4))
			return -1;
		data = (__u8 *)(long)ctx->data;
		end = (__u8 *)(long)ctx->data_end;
		if (data + 18 > end)
			return -1;
		__u8 macs[12];
		__builtin_memcpy(macs, data + 4, 12);
		__builtin_memcpy(data, macs, 12);
		st16(data + 12, e->vlan_tpid);
		st16(data + 14, e->vlan_tci);
	}
	if (f & FP_VLAN_SET) {
		data = (__u8 *)(long)ctx->data;
		end = (__u8 *)(long)ctx->data_end;
		if (data + 18 > end)
			return -1;
		__u16 tci = ld16(data + 14);
		st16(data + 14, (tci & 0x1000) | (e->vlan_tci & 0xefff));
	}
	return 0;
}

// A key seen as the five words the masks apply to.
union fp_words {
	struct fp_key key;
	__u64 w[5];
};
_Static_assert(sizeof(union fp_words) == sizeof(struct fp_key), "five words");

// Step 3: the entry of the current generation `version` for the key in `kw`, walking the
// masks in order; `*stale` is set if only entries of other generations were found.
static __always_inline const struct fp_entry *lookup(const union fp_words *kw, __u64 version,
						    int *stale)
{
	__u32 zero = 0;
	const struct fp_walk *w = bpf_map_lookup_elem(&walk, &zero);
	if (!w)
		return 0;
	__u32 n = w->n;
	for (__u32 i = 0; i < FP_MASKS; i++) {
		if (i >= n)
			break;
		__u32 slot = w->order[i];
		const union fp_words *m = bpf_map_lookup_elem(&masks, &slot);
		if (!m)
			continue;
		union fp_words mk;
		mk.w[0] = kw->w[0] & m->w[0];
		mk.w[1] = kw->w[1] & m->w[1];
		mk.w[2] = kw->w[2] & m->w[2];
		mk.w[3] = kw->w[3] & m->w[3];
		mk.w[4] = kw->w[4] & m->w[4];
		mk.key.pad = slot;
		const struct fp_entry *e = bpf_map_lookup_elem(&flows, &mk.key);
		if (!e)
			continue;
		if (e->version == version)
			return e;
		*stale = 1;
	}
	return 0;
}

// `x &= m`, kept although the compiler may think it implied: the verifier reads the AND
// as a bound (and forgets what it knew of `x` beyond it), which comparisons compiled in
// other forms may not give it.
#define BOUND(x, m)                          \
	do {                                 \
		asm volatile("" : "+r"(x));  \
		(x) &= (m);                  \
	} while (0)

// Finishes the checksum of a frame parsed with `partial` set: the one's-complement sum
// of its L4 segment (whose checksum field holds the pseudo-header's sum, so this is the
// full sum) is written, complemented, to the field (a UDP zero as 0xffff), unless the
// segment already sums to 0xffff (its checksum was correct). The segment is copied into
// `scratch` 512 bytes at a time (bpf_xdp_load_bytes, which also reads frames in several
// buffers) and summed there by bpf_csum_diff, the last piece padded with zeros to a
// whole word. The sum is taken in memory order throughout, which gives the same 16 bits
// a big-endian sum would, stored the same way. `l4` is the segment's offset, `tcp`
// whether it is TCP (else UDP). 0 on success, -1 for a segment longer than CSUM_MAX.
// A global function: the verifier checks it once, on its own.
__attribute__((noinline)) int finish_csum(struct xdp_md *ctx, __u32 l4, __u32 seg, __u32 tcp)
{
	if (seg > CSUM_MAX || seg < 8 || l4 > 127)
		return -1;
	__u32 zero = 0;
	__u8 *buf = bpf_map_lookup_elem(&scratch, &zero);
	if (!buf)
		return -1;
	__u64 sum = 0;
	__u32 off = 0;
	for (int i = 0; i < CSUM_MAX / 512; i++) {
		if (off + 512 > seg)
			break;
		if (bpf_xdp_load_bytes(ctx, l4 + off, buf, 512))
			return -1;
		long s = bpf_csum_diff(0, 0, (__u32 *)buf, 512, 0);
		if (s < 0)
			return -1;
		sum += (__u32)s;
		off += 512;
	}
	__u32 at = l4 + off;
	__u32 rest = seg - off;
	BOUND(at, 0x1fff);
	BOUND(rest, 0x1ff);
	if (rest) {
		// The word holding the segment's end is zeroed first: its bytes past the end
		// stay zero (they add nothing to the sum).
		__u32 last = rest & 0x1fc;
		*(__u32 *)(buf + last) = 0;
		if (bpf_xdp_load_bytes(ctx, at, buf, rest))
			return -1;
		__u32 n = rest + 3;
		BOUND(n, 0x3fc);
		if (n > 512)
			return -1;
		long s = bpf_csum_diff(0, 0, (__u32 *)buf, n, 0);
		if (s < 0)
			return -1;
		sum += (__u32)s;
	}
	__u16 total = fold(sum);
	if (total == 0xffff)
		return 0;
	__u16 check = ~total;
	if (!tcp && check == 0)
		check = 0xffff;
	if (bpf_xdp_store_bytes(ctx, l4 + (tcp ? 16 : 6), &check, 2))
		return -1;
	return 0;
}

// Meters a frame of `len` bytes at `now` (1/16 ns of the kernel's clock) with the
// `n` bands from cell `base` on, as crates/datapath/src/meter.rs does: every band whose
// bucket has room for the frame's cost takes it (compare-exchange on its word, which the
// workers update too); of the others, the one with the highest rate (the first of equal
// rates) applies. Returns that band's cell, or 0 when the frame passes. A band whose word
// changes under FP_CAS_TRIES attempts in a row counts as exceeded.
static __always_inline struct fp_band *meter(__u32 base, __u32 n, __u64 len, __u64 now)
{
	struct fp_band *applied = 0;
	__u64 applied_rate = 0;
	for (__u32 i = 0; i < FP_METER_BANDS; i++) {
		if (i >= n)
			break;
		__u32 idx = base + i;
		struct fp_band *b = bpf_map_lookup_elem(&bands, &idx);
		if (!b)
			break;
		__u64 cost = b->per_packet + ((len * b->per_byte) >> FP_BYTE_COST_SHIFT);
		if (cost > FP_NEVER)
			cost = FP_NEVER;
		__u64 tau = b->tau;
		__u64 cur = *(volatile __u64 *)&b->tat;
		int taken = 0;
		for (int t = 0; t < FP_CAS_TRIES; t++) {
			__u64 next = (cur > now ? cur : now) + cost;
			if (next - now > tau)
				break;
			__u64 seen = __sync_val_compare_and_swap(&b->tat, cur, next);
			if (seen == cur) {
				taken = 1;
				break;
			}
			cur = seen;
		}
		if (taken)
			continue;
		__u64 rate = b->action >> 32;
		if (!applied || rate > applied_rate) {
			applied = b;
			applied_rate = rate;
		}
	}
	return applied;
}

// A DSCP remark band: raises an AF code point's drop precedence by `prec` (capped at 3;
// other code points stay), updating the IPv4 header checksum, as user space's
// remark_dscp and rewrite do. `l3` is the IPv4 header's offset.
static __always_inline int remark(struct xdp_md *ctx, __u32 l3, __u32 prec)
{
	__u8 *data = (__u8 *)(long)ctx->data;
	__u8 *end = (__u8 *)(long)ctx->data_end;
	__u8 *ip = data + (l3 & 0x1f);
	if (ip + 20 > end)
		return -1;
	__u8 dscp = ip[1] >> 2;
	__u8 class = dscp >> 3, p = (dscp >> 1) & 3;
	if (class < 1 || class > 4 || (dscp & 1) || p < 1)
		return 0;
	p += prec;
	if (p > 3)
		p = 3;
	__u8 nd = (class << 3) | (p << 1);
	if (nd == dscp)
		return 0;
	__u16 old = ld16(ip);
	__u16 new = (old & 0xff03) | ((__u16)nd << 2);
	__u64 d = delta1(old, new);
	ip[1] = new & 0xff;
	csum_update(ip + 10, d);
	return 0;
}

static __always_inline long to_user(const struct fp_port *port, __u32 queue)
{
	return bpf_redirect_map(&xsks, port->xsk_base + queue, XDP_PASS);
}

static __always_inline long to_group(__u32 g)
{
	const __u64 f = BPF_F_BROADCAST | BPF_F_EXCLUDE_INGRESS;
	switch (g) {
	case 0: return bpf_redirect_map(&group0, 0, f);
	case 1: return bpf_redirect_map(&group1, 0, f);
	case 2: return bpf_redirect_map(&group2, 0, f);
	case 3: return bpf_redirect_map(&group3, 0, f);
	case 4: return bpf_redirect_map(&group4, 0, f);
	case 5: return bpf_redirect_map(&group5, 0, f);
	case 6: return bpf_redirect_map(&group6, 0, f);
	case 7: return bpf_redirect_map(&group7, 0, f);
	}
	// User space writes no other group.
	return XDP_ABORTED;
}

SEC("xdp")
int fastpath(struct xdp_md *ctx)
{
	__u32 ifindex = ctx->ingress_ifindex;
	__u32 queue = ctx->rx_queue_index;
	const struct fp_port *port = bpf_map_lookup_elem(&ports, &ifindex);
	if (!port)
		return XDP_PASS;
	if (queue >= port->queues) {
		count(EV_PASSED);
		return XDP_PASS;
	}

	union fp_words kw;
	struct fp_key *kp = &kw.key;
	struct hdrs h = {0};
	__builtin_memset(&kw, 0, sizeof(kw));
	kp->in_port = port->of_port;
	int parsed = parse(ctx, kp, &h);
	if (parsed) {
		count(EV_UNPARSED);
		return to_user(port, queue);
	}

	__u32 zero = 0;
	const struct fp_state *st = bpf_map_lookup_elem(&state, &zero);
	if (!st)
		return to_user(port, queue);
	// Left forwarding by a stopped switch past its grace: the interface is as without
	// a switch (its frames go to the host's stack).
	if (st->orphan_until && (bpf_ktime_get_ns() >> 30) > st->orphan_until)
		return XDP_PASS;
	int stale = 0;
	const struct fp_entry *e = lookup(&kw, st->version, &stale);
	if (!e) {
		count(stale ? EV_STALE : EV_MISS);
		return to_user(port, queue);
	}

	// From a native-mode port the frame goes to the outputs' XDP transmit, which drops
	// it where an interface takes no XDP frames: such frames go to user space, which
	// delivers them, until the interface takes them again.
	if ((port->flags & FP_PORT_NATIVE) && e->out != FP_DROP && !delivered(port, e->out)) {
		count(EV_UNDELIVERED);
		return to_user(port, queue);
	}

	__u64 len = (__u64)ctx->data_end - (__u64)ctx->data;
	if (!can_rewrite(e, kp, &h, len)) {
		count(EV_REWRITE_FAILED);
		return to_user(port, queue);
	}
	// Read what is needed after the rewrites (which may move the frame) now.
	__u32 out = e->out;
	__u32 slot = e->counter;
	__u32 slots = st->slots;
	if (h.partial) {
		if (!(port->flags & FP_PORT_NATIVE) ||
		    finish_csum(ctx, h.l4 & 0x7f, h.seg, kp->ip_proto == 6)) {
			count(EV_PARTIAL_CSUM);
			return to_user(port, queue);
		}
		count(EV_CSUM_FINISHED);
	}
	__u32 cpu = bpf_get_smp_processor_id();
	if (e->meter) {
		__u32 n = (e->flags >> FP_METER_SHIFT) & 7;
		__u32 dropped = e->dropped;
		__u32 base = (__u32)(e->meter - 1) * FP_METER_BANDS;
		count(EV_METERED);
		struct fp_band *b = meter(base, n, len, bpf_ktime_get_ns() * FP_UNITS_PER_NS);
		if (b) {
			__sync_fetch_and_add(&b->kernel_packets, 1);
			__sync_fetch_and_add(&b->kernel_bytes, len);
			__u64 action = b->action;
			if ((action & 0xff) != FP_BAND_REMARK) {
				count_hit(cpu, slots, slot, len);
				count_hit(cpu, slots, dropped, len);
				count(EV_METER_DROPPED);
				return XDP_DROP;
			}
			if (h.l3 && remark(ctx, h.l3, (action >> 8) & 0xff))
				return XDP_ABORTED;
		}
	}
	if (rewrite(ctx, e, kp, &h))
		return XDP_ABORTED;

	count_hit(cpu, slots, slot, len);
	count(EV_HIT);
	if (out == FP_DROP)
		return XDP_DROP;
	if (out & FP_GROUP)
		return to_group(out & ~FP_GROUP);
	return bpf_redirect_map(&tx_ports, out, 0);
}

// ---- Drops after the program (tracepoints) ----

// The records of the two tracepoints (their format files, after the 8 bytes of common
// fields).
struct devmap_xmit_args {
	__u64 common;
	int from_ifindex;
	__u32 act;
	int to_ifindex;
	int drops;
	int sent;
	int err;
};

struct redirect_err_args {
	__u64 common;
	int prog_id;
	__u32 act;
	int ifindex;
	int err;
	int to_ifindex;
	__u32 map_id;
	int map_index;
};

// Adds `n` to the lost count of the port on `to_ifindex` if the frames came in on one of
// the switch's ports (`from_ifindex`) and were bound for another.
static __always_inline void count_lost(int from_ifindex, int to_ifindex, int n)
{
	__u32 from = from_ifindex, to = to_ifindex;
	if (n <= 0 || !bpf_map_lookup_elem(&ports, &from))
		return;
	const struct fp_port *dst = bpf_map_lookup_elem(&ports, &to);
	if (!dst)
		return;
	__u32 slot = dst->xsk_base / QUEUES_PER_PORT;
	__u64 *c = bpf_map_lookup_elem(&lost, &slot);
	if (c)
		*c += n;
}

SEC("tracepoint/xdp/xdp_devmap_xmit")
int fastpath_xmit_drops(struct devmap_xmit_args *ctx)
{
	count_lost(ctx->from_ifindex, ctx->to_ifindex, ctx->drops);
	return 0;
}

SEC("tracepoint/xdp/xdp_redirect_err")
int fastpath_redirect_err(struct redirect_err_args *ctx)
{
	count_lost(ctx->ifindex, ctx->to_ifindex, 1);
	return 0;
}

// No GPL-only helpers are used.
char _license[] SEC("license") = "Apache-2.0";
