//! The `peregrine` command line: one subcommand per job, each a thin shell over a library
//! crate.

#![forbid(unsafe_code)]

mod bench_cmd;
mod bench_study;
mod demo;
mod ofp_parse;
mod trace_cmd;

use clap::{Parser, Subcommand};

/// jemalloc: a switch's memory comes in many small pieces (flow entries and their rules)
/// that come and go by the million; jemalloc keeps them with less waste than the C
/// library's allocator and, with its background thread, gives memory freed by a bulk
/// delete back to the system instead of keeping it. Its settings are built in
/// (`.cargo/config.toml` says which and why).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;
use std::path::PathBuf;
use std::process::ExitCode;

/// peregrine: a high-performance OpenFlow software switch for Linux.
#[derive(Parser)]
#[command(name = "peregrine", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once per run: the size of the `run` flags does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Decode a file of concatenated binary OpenFlow messages (1.0 and 1.3) and print
    /// each one in ovs-ofctl style.
    OfpParse {
        /// File of raw OpenFlow messages, back to back.
        file: PathBuf,
        /// Re-encode every decoded message and report any byte that differs.
        #[arg(long)]
        roundtrip: bool,
    },
    /// Run the switch on network interfaces (standalone learning switch unless a
    /// controller programs it).
    Run(runner::config::RunFlags),
    /// Three hosts in network namespaces on a peregrine switch: ping, iperf3, per-port
    /// statistics; everything is removed afterwards.
    Demo(demo::DemoArgs),
    /// An OpenFlow client with ovs-ofctl's commands, arguments and output.
    Ctl(ctl::CtlArgs),
    /// Trace a flow (ovs-ofctl syntax) or a captured packet through a running switch's
    /// pipeline: every table, matched flow, action and output.
    Trace(trace_cmd::TraceArgs),
    /// Benchmarks (see `peregrine bench datapath --help`).
    #[command(subcommand)]
    Bench(bench_cmd::BenchCommand),
}

/// Turns jemalloc's background thread on: freed memory goes back to the system within
/// seconds, even while idle. And after a bulk delete, the threads that freed it empty
/// their caches of freed objects, which would otherwise keep the pages under them.
fn give_memory_back() {
    if let Err(e) = tikv_jemalloc_ctl::background_thread::write(true) {
        eprintln!("peregrine: memory is given back only while busy: {e}");
    }
    datapath::reap::set_trim(empty_thread_cache);
}

/// Empties this thread's jemalloc cache (turning it off flushes it; it is turned on
/// again at once, empty).
fn empty_thread_cache() {
    use tikv_jemalloc_ctl::{Access, AsName};
    let enabled = b"thread.tcache.enabled\0".name();
    if enabled.write(false).is_ok() {
        let _ = enabled.write(true);
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run(flags) => {
            give_memory_back();
            runner::run::main(&flags)
        }
        Command::Demo(args) => demo::main(&args),
        Command::Ctl(args) => ctl::main(&args),
        Command::Trace(args) => trace_cmd::main(&args),
        Command::Bench(b) => {
            // The study runs peregrine in this process and reads its memory as `run`'s.
            give_memory_back();
            match bench_cmd::run(b) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("peregrine bench: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::OfpParse { file, roundtrip } => {
            let bytes = match std::fs::read(&file) {
                Ok(b) => b,
                Err(e) => {
                    eprintln!("peregrine ofp-parse: {}: {e}", file.display());
                    return ExitCode::FAILURE;
                }
            };
            let stdout = std::io::stdout();
            let report = ofp_parse::run(&bytes, roundtrip, &mut stdout.lock());
            if report.failures > 0 {
                eprintln!(
                    "peregrine ofp-parse: {}: {} of {} messages failed",
                    file.display(),
                    report.failures,
                    report.messages
                );
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
    }
}

#[cfg(test)]
mod tests {
    /// The settings `.cargo/config.toml` gives jemalloc are built in and in force.
    #[test]
    fn jemalloc_runs_with_the_switch_settings() {
        let conf = tikv_jemalloc_ctl::config::malloc_conf::read().unwrap();
        for setting in ["slab_sizes:1-4096:16", "dirty_decay_ms:2000", "tcache_nslots_small_max:32"]
        {
            assert!(conf.contains(setting), "jemalloc built without {setting}: {conf:?}");
        }
        assert_eq!(tikv_jemalloc_ctl::opt::tcache_max::read().unwrap(), 1024);
    }

    /// Emptying a thread's cache leaves it on: the thread goes on allocating as fast.
    #[test]
    fn an_emptied_thread_cache_is_on_again() {
        use tikv_jemalloc_ctl::{Access, AsName};
        let enabled = b"thread.tcache.enabled\0".name();
        let kept: Vec<Box<[u8; 48]>> = (0..1000).map(|_| Box::new([0; 48])).collect();
        drop(kept);
        super::empty_thread_cache();
        let on: bool = enabled.read().unwrap();
        assert!(on, "the thread's cache stayed off");
    }
}
