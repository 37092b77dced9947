// Shared by the build scripts of the ports and xdp crates (`#[path]`): the check that a
// committed XDP object was compiled from the committed source.

use sha2::{Digest, Sha256};

/// Fails the build when `bpf/NAME.c` is not the source `bpf/NAME.o` was compiled from.
pub fn check_object(krate: &str, name: &str) {
    let (src, obj, sum) =
        (format!("bpf/{name}.c"), format!("bpf/{name}.o"), format!("bpf/{name}.c.sha256"));
    for f in [&src, &obj, &sum] {
        println!("cargo:rerun-if-changed={f}");
    }
    let read = |f: &str| std::fs::read(f).unwrap_or_else(|e| panic!("crates/{krate}/{f}: {e}"));
    let actual = format!("{:x}", Sha256::digest(read(&src)));
    let recorded =
        String::from_utf8_lossy(&read(&sum)).split_whitespace().next().unwrap_or("").to_string();
    // The object is there (include_bytes! would say so less clearly).
    read(&obj);
    if actual != recorded {
        // cargo::error fails the build with this message alone (no panic backtrace).
        println!(
            "cargo::error=crates/{krate}/{src} is not the source crates/{krate}/{obj} was \
             compiled from (its SHA-256 is {actual}; crates/{krate}/{sum} records {recorded}). \
             Recompile the committed XDP objects with `scripts/bpf-build.sh` (needs clang; \
             the committed ones are Debian 12's clang 14) and commit the .c, .o and \
             .c.sha256 together."
        );
    }
}
