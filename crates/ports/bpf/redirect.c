// SPDX-License-Identifier: Apache-2.0
//
// The XDP program of the AF_XDP port backend (crates/ports/src/afxdp): every frame that
// arrives on rx queue q is redirected to the AF_XDP socket at index q of the `xsks` map.
// A queue without a socket in the map passes its frames to the kernel stack (the
// XDP_PASS in the flags of bpf_redirect_map is the action taken when the lookup fails).
//
// Compiled by scripts/bpf-build.sh (`clang -O2 -g -target bpf -c`) into the committed
// redirect.o, which the crate embeds. It includes no headers (libbpf's bpf_helpers.h is
// not assumed): the few uapi values it needs are declared below, with the names and
// numbers of <linux/bpf.h>.

typedef unsigned int __u32;
typedef unsigned long long __u64;

#define SEC(name) __attribute__((section(name), used))

// BTF-style map definitions (what libbpf's __uint/__type expand to).
#define __uint(name, val) int (*name)[val]

// enum bpf_map_type: BPF_MAP_TYPE_XSKMAP.
#define BPF_MAP_TYPE_XSKMAP 17
// enum xdp_action: XDP_PASS.
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

// Helper 51 (enum bpf_func_id: BPF_FUNC_redirect_map).
static long (*bpf_redirect_map)(void *map, __u64 key, __u64 flags) = (void *)51;

// AF_XDP sockets by rx queue index. Key and value are sized, not typed, as xdp-tools
// does for its XSKMAP: older kernels refuse BTF key/value types on this map type. The
// loader sets max_entries to the interface's rx queue count.
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, 64);
} xsks SEC(".maps");

SEC("xdp")
int redirect_to_xsk(struct xdp_md *ctx)
{
	return bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);
}

// bpf_redirect_map is not GPL-only; the string only matters to GPL-only helpers.
char _license[] SEC("license") = "Apache-2.0";
