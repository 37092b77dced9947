//! Compiles the fast tier's XDP program (bpf/fastpath.c) into OUT_DIR with clang, for
//! `include_bytes!` in src/program.rs. The compiler is `clang` on PATH, or the one named
//! by the CLANG environment variable.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let src = "bpf/fastpath.c";
    println!("cargo:rerun-if-changed={src}");
    println!("cargo:rerun-if-env-changed=CLANG");
    let clang = env::var("CLANG").unwrap_or_else(|_| "clang".to_string());
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("fastpath.o");
    let result = Command::new(&clang)
        .args(["-O2", "-g", "-Wall", "-target", "bpf", "-c", src, "-o"])
        .arg(&out)
        .output();
    match result {
        Err(e) => panic!(
            "cannot run {clang:?} ({e}): the xdp crate compiles its XDP program (crates/xdp/{src}) \
             with clang. Install clang (Debian/Ubuntu: `apt-get install clang`), or set CLANG to a \
             clang binary that can target bpf."
        ),
        Ok(o) if !o.status.success() => panic!(
            "{clang} failed to compile crates/xdp/{src} for the bpf target ({}):\n{}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        ),
        Ok(o) => {
            let warnings = String::from_utf8_lossy(&o.stderr);
            for line in warnings.lines() {
                println!("cargo:warning={line}");
            }
        }
    }
}
