//! Checks that the committed XDP object (bpf/redirect.o, embedded by
//! src/afxdp/program.rs) was compiled from the committed source: the SHA-256 of
//! bpf/redirect.c must be the one recorded in bpf/redirect.c.sha256, which
//! scripts/bpf-build.sh writes with the object. Nothing is compiled here, so a build
//! needs no clang; that the object is what clang makes of the source is a system test
//! (crates/xdp/tests/bpf_object.rs).

#[path = "bpf/check_object.rs"]
mod check_object;

fn main() {
    check_object::check_object("ports", "redirect");
}
