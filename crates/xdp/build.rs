//! Checks that the committed XDP object (bpf/fastpath.o, embedded by src/program.rs) was
//! compiled from the committed source: the SHA-256 of bpf/fastpath.c must be the one
//! recorded in bpf/fastpath.c.sha256, which scripts/bpf-build.sh writes with the object.
//! Nothing is compiled here, so a build needs no clang; that the object is what clang
//! makes of the source is a system test (tests/bpf_object.rs).

#[path = "../ports/bpf/check_object.rs"]
mod check_object;

fn main() {
    check_object::check_object("xdp", "fastpath");
}
