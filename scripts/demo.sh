#!/usr/bin/env bash
# The README's first command: peregrine's demo on a Debian or Ubuntu machine that has
# Rust. Installs with apt what the build and the demo need and the machine lacks (a C
# compiler and linker if there is no `cc`: gcc, libc6-dev; the demo's iproute2,
# iputils-ping, iperf3), builds peregrine (`cargo build --release`) and runs
# `peregrine demo` with this script's arguments. Run it as root, or as the user who
# installed Rust: then apt and the demo (which needs root) run through sudo. Running it
# again installs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
# `su` without `-` leaves the sbin directories out of PATH; ip lives there.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

as_root() {
    if [ "$(id -u)" = 0 ]; then
        "$@"
    elif command -v sudo >/dev/null; then
        sudo "$@"
    else
        echo "demo.sh: run this as root (the demo makes network namespaces; sudo is not installed)" >&2
        exit 1
    fi
}

# command, Debian packages that provide it
NEEDS=("cc gcc libc6-dev" "ip iproute2" "ping iputils-ping" "iperf3 iperf3")
missing=()
for n in "${NEEDS[@]}"; do
    read -r cmd pkgs <<<"$n"
    command -v "$cmd" >/dev/null || missing+=($pkgs)
done
if [ ${#missing[@]} -gt 0 ]; then
    if ! command -v apt-get >/dev/null; then
        echo "demo.sh: missing ${missing[*]} (the Debian package names); install them and run this again" >&2
        exit 1
    fi
    echo "demo.sh: installing ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
command -v cargo >/dev/null || {
    echo "demo.sh: cargo not found: install Rust (https://rustup.rs) and run this as the user who did" >&2
    exit 1
}
cargo build --release --locked -p peregrine
as_root target/release/peregrine demo "$@"
