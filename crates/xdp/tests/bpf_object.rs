//! The committed XDP objects, which the crates embed (crates/xdp/bpf/fastpath.o,
//! crates/ports/bpf/redirect.o), are exactly what clang makes of their sources with the
//! flags of scripts/bpf-build.sh. (The builds themselves only check each source's SHA-256
//! against its NAME.c.sha256.)

use std::path::Path;
use std::process::Command;

#[test]
#[ignore = "needs clang: Debian 12's clang 14, which .ci/run installs"]
fn committed_objects_are_what_clang_compiles_from_their_sources() {
    check_object("xdp", "fastpath");
    check_object("ports", "redirect");
}

/// Compiles the programs into a temporary directory with scripts/bpf-build.sh and
/// compares `NAME.o` with the committed `crates/KRATE/bpf/NAME.o` byte for byte.
fn check_object(krate: &str, name: &str) {
    let krate = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(krate);
    let out = std::env::temp_dir().join(format!("peregrine-bpf-{}-{name}", std::process::id()));
    let result = Command::new(krate.join("../../scripts/bpf-build.sh"))
        .arg(&out)
        .output()
        .expect("run scripts/bpf-build.sh");
    let built = std::fs::read(out.join(format!("{name}.o")));
    let _ = std::fs::remove_dir_all(&out);
    assert!(
        result.status.success(),
        "scripts/bpf-build.sh {}: {}",
        result.status,
        String::from_utf8_lossy(&result.stderr)
    );
    let built = built.expect("the compiled object");
    let committed = std::fs::read(krate.join(format!("bpf/{name}.o"))).expect("committed object");
    assert!(
        built == committed,
        "{}/bpf/{name}.o is not what clang compiles from bpf/{name}.c: the committed object \
         ({} bytes, by {}) differs from this compiler's ({} bytes, by {}). Recompile it with \
         scripts/bpf-build.sh, using Debian 12's clang 14, and commit it.",
        krate.display(),
        committed.len(),
        producer(&committed),
        built.len(),
        producer(&built)
    );
}

/// The compiler named in an object's debug info ("Debian clang version 14.0.6").
fn producer(object: &[u8]) -> String {
    let key = b"clang version";
    let Some(at) = object.windows(key.len()).position(|w| w == key) else {
        return "an unnamed compiler".to_string();
    };
    let start = object[..at].iter().rposition(|&b| b == 0).map_or(0, |i| i + 1);
    let end = object[at..].iter().position(|&b| b == 0).map_or(object.len(), |i| at + i);
    String::from_utf8_lossy(&object[start..end]).into_owned()
}
