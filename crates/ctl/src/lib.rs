//! `peregrine ctl`: an OpenFlow client with the commands, arguments and output of
//! `ovs-ofctl` (Open vSwitch 3.1), so that a script written for ovs-ofctl works with the
//! command name changed.
//!
//! ```text
//! peregrine ctl [-O VERSIONS] [--strict] [--bundle] [--readd] [--json] [--timeout SECS]
//!               [--sort[=F]] [--rsort[=F]] [--no-stats] COMMAND SWITCH [ARGS...]
//! ```
//!
//! It is a plain OpenFlow client: it connects to SWITCH ([`target`]), exchanges hellos
//! ([`openflow::versions`]), sends requests and prints the replies ([`conn`], [`print`](mod@print)). It uses
//! no Open vSwitch extension, so it works with any OpenFlow 1.0/1.3/1.4 switch (bundles
//! over 1.3 use the ONF extension that OpenFlow 1.4's bundles come from, as ovs-ofctl).
//!
//! Commands: `show`, `dump-desc`, `dump-tables`, `dump-ports [PORT]`,
//! `dump-ports-desc [PORT]`, `mod-port PORT ACTION`, `dump-flows [FLOW]`,
//! `dump-aggregate [FLOW]`, `add-flow FLOW`, `add-flows FILE`, `mod-flows FLOW`,
//! `del-flows [FLOW]`, `replace-flows FILE`, `add-group GROUP`, `add-groups FILE`,
//! `mod-group GROUP`, `del-groups [GROUP]`, `dump-groups [GROUP]`, `dump-group-stats [GROUP]`,
//! `dump-group-features`, `add-meter METER`, `mod-meter METER`, `del-meter[s] [METER]`,
//! `dump-meter[s] [METER]`, `meter-stats [METER]`, `meter-features`,
//! `packet-out IN_PORT ACTIONS PACKET...` or `packet-out "in_port=..,packet=..,actions=.."`,
//! `monitor [MISS-LEN]`, `probe`; and peregrine's own `dump-fastpath` (the in-kernel
//! fast tier's entries, hit counts and events; OpenFlow 1.3) and, over the management
//! socket, `add-port IFACE[,backend=B][,ofport=N]`, `del-port IFACE|N`, `list-ports`
//! and `reload` (ports while the switch runs; see `commands::ports`). A FLOW or GROUP argument of `-` reads a file of them
//! from standard input. As ovs-ofctl with OpenFlow 1.0 and 1.3, `dump-ports-desc` and
//! `dump-groups` accept a PORT or GROUP but list everything (the requests have no such
//! field before OpenFlow 1.5). `dump-table-features` is not implemented. See `commands`
//! for each.
//!
//! Where we differ from ovs-ofctl, on purpose:
//! - Versions: with no `-O`, we offer OpenFlow 1.0, 1.3 and 1.4 and use what the
//!   switch picks (ovs-ofctl offers only 1.0 by default). `-O OpenFlow10`, `OpenFlow13`
//!   or `OpenFlow14` (comma separated) narrows the offer; other versions are refused.
//! - Over OpenFlow 1.0 we use standard 1.0 only: what needs Open vSwitch's Nicira
//!   extensions (tables other than 0, cookie masks, IPv6 fields, ...) is an error that
//!   says to use `-O OpenFlow13`; flow dumps are headed `OFPST_FLOW reply` (ovs-ofctl
//!   asks Open vSwitch for `NXST_FLOW`, which adds `idle_age`). `dump-ports-desc` over
//!   1.0 lists the ports of the features reply under ovs-ofctl's `OFPST_PORT_DESC
//!   reply` heading. `monitor` asks for no Nicira packet-in format, so packet-ins print
//!   as `OFPT_PACKET_IN` where ovs-ofctl shows Open vSwitch's `NXT_PACKET_IN2`.
//! - Flows, actions and fields are parsed and printed by `openflow::text`, which speaks
//!   OpenFlow 1.3: Open vSwitch's extension fields and actions (`tcp_flags`, `nw_ttl`
//!   matches, `enqueue` in 1.3, ...) are refused, and such items in a switch's replies
//!   print in their generic form.
//! - A switch's error reply always makes the exit status 1 (ovs-ofctl exits 0 when a
//!   dump command gets one) and is printed on standard error.
//! - `add-flows` (and `add-groups`) send everything, then one barrier, and report every
//!   error, each after `FILE:LINE:` (ovs-ofctl stops at the first). Bad lines are
//!   reported before anything is sent.
//! - `--bundle` ([`bundle`]): as ovs-ofctl, flow and group changes (`add-flow(s)`,
//!   `mod-flows`, `del-flows`, `replace-flows`, `add-group(s)`, `mod-group`,
//!   `del-groups`) go in one atomic, ordered bundle over OpenFlow 1.4, or over 1.3 in
//!   the ONF extension's form. Where ovs-ofctl, given `-O` without 1.3 or later,
//!   quietly offers 1.4 instead, we stop with an error saying bundles need 1.3 or
//!   later, and likewise when the switch picks 1.0; `--bundle` with any other command
//!   is an error (ovs-ofctl ignores it). Refusals are reported as for `add-flows`
//!   (ovs-ofctl prints `Error NAME for: MESSAGE`), then a line saying that the bundle
//!   was not committed.
//! - `replace-flows` (see `commands::replace`) compares flows as ovs-ofctl does, but
//!   sends all deletions first and then the additions in file order (ovs-ofctl goes
//!   table by table), and refuses a file line that starts with a command word other
//!   than `add`.
//! - Port names (`--names`), `diff-flows`, `bundle FILE` and Nicira-only commands are
//!   not supported.
//!   Output never uses port names, as ovs-ofctl's output when not on a terminal.
//! - Xids: ours count 1 (hello), 2, ... per run; ovs-ofctl spends some on looking up
//!   port and table names first, so its xids can be higher.
//! - `monitor` prints, as ovs-ofctl, to standard error; with `--timeout` it ends
//!   cleanly (status 0) when the time is up.
//!
//! `--json` prints one JSON document on standard output instead of the text
//! (`monitor`: one JSON object per line, per message):
//! - `show`: `{"features": F, "ports": [PORT...], "config": {"frags", "miss_send_len"}}`
//!   with F = `{"datapath_id": "000...", "n_tables", "n_buffers", "auxiliary_id",
//!   "capabilities": [..], "actions": [..] (1.0 only)}`.
//! - `dump-desc`: `{"manufacturer", "hardware", "software", "serial_num",
//!   "dp_description"}`.
//! - `dump-tables`: `[{"table_id", "active_count", "lookup_count", "matched_count"}]`
//!   (1.0 adds `"name"`, `"max_entries"`, `"wildcards"`).
//! - `dump-ports`: `[{"port": "1", "rx_packets", "rx_bytes", "rx_dropped", "rx_errors",
//!   "rx_frame_err", "rx_over_err", "rx_crc_err", "tx_packets", "tx_bytes",
//!   "tx_dropped", "tx_errors", "collisions", "duration_sec", "duration_nsec"}]`;
//!   counters the switch does not have are `null`.
//! - `dump-ports-desc`: `[{"port", "name", "hw_addr", "config": [..], "state": [..],
//!   "current": [..], "advertised": [..], "supported": [..], "peer": [..],
//!   "curr_speed_kbps", "max_speed_kbps"}]`.
//! - `dump-flows`: `[{"table", "priority", "cookie": "0x..", "duration_sec",
//!   "duration_nsec", "n_packets", "n_bytes", "idle_timeout", "hard_timeout",
//!   "flags": [..], "match": {FIELD: VALUE}, "actions": [..], "text", "version"}]`:
//!   `match` maps ovs-ofctl field names to the values ovs-ofctl prints (shorthands such
//!   as `tcp` become `dl_type` and `nw_proto`), `actions` lists ovs-ofctl action
//!   strings (instructions such as `goto_table:1` included), `text` is the
//!   ovs-ofctl line. Sorted when `--sort`/`--rsort` are given.
//! - `dump-aggregate`: `{"packet_count", "byte_count", "flow_count"}`.
//! - `dump-groups`: `[{"group_id", "type", "buckets": [{"weight", "watch_port",
//!   "watch_group" (`null` for any), "actions": [..]}], "text"}]`; `dump-group-stats`: `[{"group_id",
//!   "duration_sec", "duration_nsec", "ref_count", "packet_count", "byte_count",
//!   "buckets": [{"packet_count", "byte_count"}]}]`; `dump-group-features`:
//!   `{"types": [..], "capabilities": [..], "groups": {TYPE: {"max_groups",
//!   "actions": [..]}}}`.
//! - `dump-meters`: `[{"meter_id", "flags": [..], "bands": [{"type", "rate",
//!   "burst_size", "prec_level"?}]}]`; `meter-stats`: `[{"meter_id", "flow_count",
//!   "packet_in_count", "byte_in_count", "duration_sec", "duration_nsec", "bands":
//!   [{"packet_count", "byte_count"}]}]`; `meter-features`: `{"max_meter", "max_bands",
//!   "max_color", "band_types": [..], "capabilities": [..]}`.
//! - Modifications (`add-flow`, `del-groups`, `mod-port`, `packet-out`, ...):
//!   `{"ok": BOOL, "errors": [{"line"?, "error": NAME, "type", "code", "text"}]}`.
//! - A switch error on a query: `{"error": NAME, "type", "code", "text"}`.
//! - `monitor`: `{"type": "packet_in", "version", "xid", "total_len", "reason",
//!   "table_id", "cookie", "buffer_id", "match", "data" (hex), "packet" (its flow),
//!   "text"}`, `{"type": "flow_removed", ..., "match", "reason", ...}`,
//!   `{"type": "port_status", "reason", "port": PORT}`, or `{"type": NAME, "text"}`
//!   for anything else.
//!
//! Exit status: 0 on success, 1 for bad arguments (with what is wrong and where),
//! connection failures, timeouts and switch errors.

#![forbid(unsafe_code)]

pub mod bundle;
pub mod commands;
pub mod compat10;
pub mod conn;
pub mod flow_file;
pub mod json;
pub mod ports;
pub mod sort;
pub mod target;

use std::cell::Cell;
use std::process::ExitCode;
use std::rc::Rc;
use std::time::{Duration, Instant};

use conn::{Limits, Received};
use openflow::Versions;
use target::Target;

/// How long a reply may keep us waiting without `--timeout`: no byte from the switch
/// for this long ends the wait.
const DEFAULT_IDLE: Duration = Duration::from_secs(60);

/// Options and arguments of `peregrine ctl`.
#[derive(Clone, Debug, clap::Args)]
#[command(after_help = "Commands (ovs-ofctl's): show, dump-desc, dump-tables, \
dump-ports [PORT], dump-ports-desc [PORT], mod-port PORT ACTION, dump-flows [FLOW], \
dump-aggregate [FLOW], add-flow FLOW, add-flows FILE, mod-flows FLOW, del-flows [FLOW], \
replace-flows FILE, add-group GROUP, add-groups FILE, mod-group GROUP, del-groups [GROUP], \
dump-groups [GROUP], \
dump-group-stats [GROUP], dump-group-features, add-meter METER, mod-meter METER, \
del-meters [METER], dump-meters [METER], meter-stats [METER], meter-features, \
packet-out IN_PORT ACTIONS PACKET... | packet-out \"in_port=P,packet=HEX,actions=A\", \
monitor [MISS-LEN], probe; peregrine's own: dump-fastpath, add-port IFACE[,backend=B][,ofport=N], \
del-port IFACE|N, list-ports, reload (these four over the management socket).\n\nSWITCH: tcp:HOST[:PORT] (port 6653 by default), \
unix:PATH, a socket path, or a switch name NAME for its management socket \
$PEREGRINE_RUNDIR/NAME.mgmt (/run/peregrine/NAME.mgmt).")]
pub struct CtlArgs {
    /// OpenFlow versions to offer: OpenFlow10, OpenFlow13, OpenFlow14, comma separated
    /// (default: all three; the switch picks).
    #[arg(short = 'O', long = "protocols", value_name = "VERSIONS")]
    pub protocols: Option<String>,
    /// mod-flows and del-flows match flows strictly (priority and match exactly).
    #[arg(long)]
    pub strict: bool,
    /// Flow and group changes go in one atomic bundle (OpenFlow 1.4, or 1.3's ONF
    /// extension with -O OpenFlow13): all of them take effect, or none.
    #[arg(long)]
    pub bundle: bool,
    /// replace-flows: add every flow of the file, also those the switch has already.
    #[arg(long)]
    pub readd: bool,
    /// Print JSON instead of ovs-ofctl's text.
    #[arg(long)]
    pub json: bool,
    /// Give up after SECS seconds (monitor: stop after SECS seconds).
    #[arg(short = 't', long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// dump-flows: sort ascending by FIELD (priority when none); may repeat.
    #[arg(long, value_name = "FIELD", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub sort: Vec<String>,
    /// dump-flows: sort descending by FIELD (priority when none); may repeat.
    #[arg(long, value_name = "FIELD", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub rsort: Vec<String>,
    /// dump-flows: leave out the statistics (and the reply heading).
    #[arg(long)]
    pub no_stats: bool,
    /// COMMAND SWITCH [ARGS...]
    #[arg(value_name = "COMMAND SWITCH [ARGS]", required = true, num_args = 1..)]
    pub args: Vec<String>,
}

/// Why a run failed. Every failure exits with status 1.
#[derive(Debug)]
pub enum CtlError {
    /// A message for `peregrine ctl: ...`.
    Fatal(String),
    /// Waiting for the switch took too long.
    Timeout(String),
    /// Text already in its final form (may be empty when it was printed already).
    Reported(String),
    /// The switch answered a query with an error message.
    Switch(Box<Received>),
}

impl CtlError {
    pub fn fatal(msg: impl Into<String>) -> CtlError {
        CtlError::Fatal(msg.into())
    }

    pub fn reported(text: impl Into<String>) -> CtlError {
        CtlError::Reported(text.into())
    }

    pub fn is_timeout(&self) -> bool {
        matches!(self, CtlError::Timeout(_))
    }
}

/// Everything a command needs besides its arguments.
pub struct Ctx {
    /// The SWITCH argument as given.
    pub switch: String,
    pub target: Target,
    pub versions: Versions,
    pub xids: conn::Xids,
    pub limits: Limits,
    pub json: bool,
    pub strict: bool,
    /// `--bundle`: modifications go in one bundle ([`bundle`]).
    pub bundle: bool,
    /// `--readd`: replace-flows adds the flows the switch has already.
    pub readd: bool,
    pub show_stats: bool,
    pub sort: Vec<sort::SortKey>,
}

impl Ctx {
    /// Opens a new connection to the switch.
    pub fn open(&self) -> Result<conn::Conn, CtlError> {
        conn::Conn::open(&self.target, &self.switch, self.versions, self.xids.clone(), self.limits)
    }
}

/// Builds the context from the options; `raw_args` are the process arguments (for the
/// order of `--sort`/`--rsort`).
pub fn context(
    a: &CtlArgs,
    switch: &str,
    raw_args: impl IntoIterator<Item = String>,
) -> Result<Ctx, CtlError> {
    let versions = match &a.protocols {
        Some(p) => Versions::parse(p).map_err(|e| CtlError::fatal(format!("-O: {e}")))?,
        None => Versions::default(),
    };
    if a.bundle && versions.max() < openflow::OFP13_VERSION {
        return Err(CtlError::fatal(format!(
            "--bundle: bundles need OpenFlow 1.3 or later, but -O {} allows only {versions} \
             (use -O OpenFlow14 or -O OpenFlow13)",
            a.protocols.as_deref().unwrap_or_default()
        )));
    }
    let rundir =
        std::env::var("PEREGRINE_RUNDIR").unwrap_or_else(|_| target::DEFAULT_RUNDIR.into());
    let target = Target::parse(switch, &rundir).map_err(CtlError::Fatal)?;
    let deadline = match a.timeout {
        Some(t) if !(t.is_finite() && t > 0.0) => {
            return Err(CtlError::fatal(format!(
                "--timeout {t}: must be a positive number of seconds"
            )))
        }
        Some(t) => Some(Instant::now() + Duration::from_secs_f64(t.min(1e9))),
        None => None,
    };
    let sort = sort::keys_from_args(raw_args).map_err(CtlError::Fatal)?;
    Ok(Ctx {
        switch: switch.to_string(),
        target,
        versions,
        xids: Rc::new(Cell::new(1)),
        limits: Limits { deadline, idle: DEFAULT_IDLE },
        json: a.json,
        strict: a.strict,
        bundle: a.bundle,
        readd: a.readd,
        show_stats: !a.no_stats,
        sort,
    })
}

/// Runs `peregrine ctl`.
pub fn main(a: &CtlArgs) -> ExitCode {
    let result = (|| {
        let (cmd, rest) =
            a.args.split_first().ok_or_else(|| CtlError::fatal("missing COMMAND (see --help)"))?;
        commands::check_arity(cmd, rest.len())?;
        if a.bundle {
            commands::check_bundle(cmd)?;
        }
        let switch = rest
            .first()
            .ok_or_else(|| CtlError::fatal(format!("'{cmd}' needs a SWITCH argument")))?;
        let ctx = context(a, switch, std::env::args())?;
        commands::run(&ctx, cmd, &rest[1..])
    })();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            report(&e, a.json);
            ExitCode::FAILURE
        }
    }
}

/// Prints a failure on standard error (and, for switch errors under `--json`, the
/// error as JSON on standard output).
fn report(e: &CtlError, json: bool) {
    match e {
        CtlError::Fatal(m) | CtlError::Timeout(m) => eprintln!("peregrine ctl: {m}"),
        CtlError::Reported(t) => {
            if !t.is_empty() {
                eprint!("{t}");
            }
        }
        CtlError::Switch(r) => {
            eprint!("{}", openflow::text::print::raw(&r.bytes, 1));
            if json {
                let version = r.bytes.first().copied().unwrap_or(4);
                println!("{}", json::error(&r.bytes, version));
            }
        }
    }
}
