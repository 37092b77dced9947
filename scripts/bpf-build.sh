#!/usr/bin/env bash
# Compiles peregrine's XDP programs (crates/*/bpf/*.c) into the objects committed next
# to them, which the crates embed (their build.rs compiles nothing, so a build needs no
# clang). Run it after editing a program and commit the .c, the .o and the .c.sha256
# together; build.rs refuses a source whose SHA-256 differs from the one recorded in the
# .c.sha256.
#
#   scripts/bpf-build.sh           rewrite crates/*/bpf/NAME.o and NAME.c.sha256
#   scripts/bpf-build.sh OUTDIR    only compile, into OUTDIR/NAME.o (for the check test)
#
# The compiler is `clang`, or the one CLANG names. The committed objects are Debian 12's
# clang 14: the system tests (`cargo test --workspace -- --ignored`, run by .ci/run)
# compile the sources again and require the same bytes, so an object made by another
# clang version fails them. The output depends only on the source and the compiler: it
# is compiled from the crate directory by a relative path, and
# -fdebug-compilation-dir=. keeps the working directory out of the debug info (whose
# BTF, from -g, the loaders need for the BTF-style map definitions).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
CLANG=${CLANG:-clang}
OUTDIR=${1:-}
if [ -n "$OUTDIR" ]; then
    mkdir -p "$OUTDIR"
    OUTDIR=$(cd "$OUTDIR" && pwd)
fi
command -v "$CLANG" >/dev/null || {
    echo "bpf-build.sh: $CLANG not found (Debian/Ubuntu: apt-get install clang)" >&2
    exit 1
}

# crate directory, program name, extra flags (the fast path's meters compare-exchange,
# an instruction of BPF's v3)
PROGRAMS=("crates/xdp fastpath -mcpu=v3" "crates/ports redirect")

for p in "${PROGRAMS[@]}"; do
    read -r dir name flags <<<"$p"
    cd "$ROOT/$dir"
    if [ -n "$OUTDIR" ]; then
        out="$OUTDIR/$name.o"
    else
        out="bpf/$name.o"
    fi
    "$CLANG" -O2 -g -Wall -target bpf $flags -fdebug-compilation-dir=. -c "bpf/$name.c" -o "$out"
    if [ -z "$OUTDIR" ]; then
        (cd bpf && sha256sum "$name.c" >"$name.c.sha256")
        echo "$dir/$out ($("$CLANG" --version | head -n1))"
    else
        echo "$out"
    fi
done
