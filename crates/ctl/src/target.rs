//! The SWITCH argument of `peregrine ctl`: where the switch listens, parsed the way
//! `ovs-ofctl` parses its active connection methods, and opened as a blocking stream.
//!
//! - `tcp:HOST[:PORT]` (IPv6 literals in brackets, `tcp:[::1]:6653`); the port defaults
//!   to 6653, as in Open vSwitch;
//! - `unix:PATH`, or any argument containing a `/`: a Unix stream socket;
//! - a bare name `NAME`: the switch's management socket `RUNDIR/NAME.mgmt`, where
//!   RUNDIR is `$PEREGRINE_RUNDIR` or `/run/peregrine` (the switch listens there and
//!   speaks plain OpenFlow, like a passive controller listener).
//!
//! `ssl:` and the other methods ovs-ofctl knows are refused with a message.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

/// The default OpenFlow port (IANA), used when `tcp:HOST` names none.
pub const DEFAULT_PORT: u16 = 6653;

/// The directory of management sockets unless `$PEREGRINE_RUNDIR` says otherwise.
pub const DEFAULT_RUNDIR: &str = "/run/peregrine";

/// Where to connect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A host name or address literal, and a port.
    Tcp { host: String, port: u16 },
    /// A Unix stream socket.
    Unix(PathBuf),
}

impl Target {
    /// Parses a SWITCH argument; `rundir` is where bare names' `.mgmt` sockets live.
    pub fn parse(s: &str, rundir: &str) -> Result<Target, String> {
        if s.is_empty() {
            return Err("empty SWITCH argument".into());
        }
        if let Some(rest) = s.strip_prefix("tcp:") {
            return parse_tcp(rest).map_err(|e| format!("{s}: {e}"));
        }
        if let Some(path) = s.strip_prefix("unix:") {
            if path.is_empty() {
                return Err(format!("{s}: unix: needs a socket path"));
            }
            return Ok(Target::Unix(PathBuf::from(path)));
        }
        if let Some((method, _)) = s.split_once(':') {
            if !method.contains('/') {
                let why = match method {
                    "ssl" => "SSL connections are not supported (use tcp: or unix:)".into(),
                    "ptcp" | "pssl" | "punix" => {
                        "passive methods cannot reach a switch (use tcp: or unix:)".into()
                    }
                    m => format!("unknown connection method \"{m}\" (tcp:, unix:, a socket path or a bridge name)"),
                };
                return Err(format!("{s}: {why}"));
            }
        }
        match bare_name(s) {
            Some(name) => Ok(Target::Unix(PathBuf::from(rundir).join(format!("{name}.mgmt")))),
            None => Ok(Target::Unix(PathBuf::from(s))),
        }
    }

    /// Opens the connection; TCP connects give up after `timeout`.
    pub fn connect(&self, timeout: Duration) -> io::Result<Box<dyn Stream>> {
        match self {
            Target::Tcp { host, port } => {
                let mut last =
                    io::Error::new(io::ErrorKind::NotFound, format!("{host}: no address found"));
                for addr in (host.as_str(), *port).to_socket_addrs()? {
                    match TcpStream::connect_timeout(&addr, timeout) {
                        Ok(s) => {
                            let _ = s.set_nodelay(true);
                            return Ok(Box::new(s));
                        }
                        Err(e) => last = e,
                    }
                }
                Err(last)
            }
            Target::Unix(path) => Ok(Box::new(UnixStream::connect(path)?)),
        }
    }
}

/// `s` when it is a bare switch name (what [`Target::parse`] turns into `RUNDIR/s.mgmt`):
/// not empty, with neither a `:` (a connection method) nor a `/` (a socket path).
pub fn bare_name(s: &str) -> Option<&str> {
    (!s.is_empty() && !s.contains([':', '/'])).then_some(s)
}

/// `tcp:HOST:PORT` (an IPv6 host in brackets) or `unix:PATH`: a form [`Target::parse`]
/// reads back as the same target.
impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Tcp { host, port } if host.contains(':') => write!(f, "tcp:[{host}]:{port}"),
            Target::Tcp { host, port } => write!(f, "tcp:{host}:{port}"),
            Target::Unix(path) => write!(f, "unix:{}", path.display()),
        }
    }
}

fn parse_tcp(rest: &str) -> Result<Target, String> {
    let (host, port) = if let Some(after) = rest.strip_prefix('[') {
        let (h, tail) =
            after.split_once(']').ok_or_else(|| "unterminated [ in IPv6 address".to_string())?;
        match tail {
            "" => (h, None),
            t => match t.strip_prefix(':') {
                Some(p) => (h, Some(p)),
                None => return Err(format!("unexpected \"{t}\" after the address")),
            },
        }
    } else {
        match rest.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (rest, None),
        }
    };
    if host.is_empty() {
        return Err("tcp: needs a host".into());
    }
    let port = match port {
        None | Some("") => DEFAULT_PORT,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|&n| n != 0)
            .ok_or_else(|| format!("\"{p}\" is not a port number (1 to 65535)"))?,
    };
    Ok(Target::Tcp { host: host.to_string(), port })
}

/// A connected byte stream with settable timeouts (TCP or Unix).
pub trait Stream: Read + Write {
    fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()>;
    fn set_write_timeout(&self, t: Option<Duration>) -> io::Result<()>;
    fn set_nonblocking(&self, on: bool) -> io::Result<()>;
}

/// Implements [`Stream`] for each type by its own (inherent) methods of those names.
macro_rules! stream_by_inherent_methods {
    ($($t:ident),*) => {$(
        impl Stream for $t {
            fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
                $t::set_read_timeout(self, t)
            }
            fn set_write_timeout(&self, t: Option<Duration>) -> io::Result<()> {
                $t::set_write_timeout(self, t)
            }
            fn set_nonblocking(&self, on: bool) -> io::Result<()> {
                $t::set_nonblocking(self, on)
            }
        }
    )*};
}

stream_by_inherent_methods!(TcpStream, UnixStream);

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Target, String> {
        Target::parse(s, "/run/peregrine")
    }

    fn tcp(host: &str, port: u16) -> Target {
        Target::Tcp { host: host.into(), port }
    }

    #[test]
    fn tcp_targets() {
        assert_eq!(p("tcp:127.0.0.1"), Ok(tcp("127.0.0.1", 6653)));
        assert_eq!(p("tcp:127.0.0.1:6633"), Ok(tcp("127.0.0.1", 6633)));
        assert_eq!(p("tcp:[::1]:7000"), Ok(tcp("::1", 7000)));
        assert_eq!(p("tcp:[fe80::1]"), Ok(tcp("fe80::1", 6653)));
        assert_eq!(p("tcp:switch.example:16653"), Ok(tcp("switch.example", 16653)));
        let e = p("tcp:1.2.3.4:http").unwrap_err();
        assert!(e.contains("\"http\" is not a port number"), "{e}");
        assert!(p("tcp:1.2.3.4:0").is_err());
        assert!(p("tcp:1.2.3.4:65536").is_err());
        assert!(p("tcp:").unwrap_err().contains("needs a host"));
        assert!(p("tcp:[::1").unwrap_err().contains("unterminated"));
    }

    #[test]
    fn unix_paths_and_bridge_names() {
        assert_eq!(p("unix:/tmp/s"), Ok(Target::Unix("/tmp/s".into())));
        assert_eq!(p("/var/run/x.mgmt"), Ok(Target::Unix("/var/run/x.mgmt".into())));
        assert_eq!(p("./rel/sock"), Ok(Target::Unix("./rel/sock".into())));
        assert_eq!(p("br0"), Ok(Target::Unix("/run/peregrine/br0.mgmt".into())));
        assert_eq!(Target::parse("sw1", "/tmp/rd"), Ok(Target::Unix("/tmp/rd/sw1.mgmt".into())));
        assert!(p("unix:").is_err());
    }

    #[test]
    fn bare_names_and_how_targets_print() {
        assert_eq!(bare_name("br0"), Some("br0"));
        assert_eq!(bare_name("x.mgmt"), Some("x.mgmt"));
        assert_eq!(bare_name("./br0"), None);
        assert_eq!(bare_name("tcp:1.2.3.4"), None);
        assert_eq!(bare_name(""), None);
        for s in ["tcp:10.0.0.1:6633", "tcp:[::1]:6653", "unix:/tmp/s.mgmt"] {
            let t = p(s).unwrap();
            assert_eq!(t.to_string(), s);
            assert_eq!(p(&t.to_string()), Ok(t));
        }
        assert_eq!(p("tcp:h").unwrap().to_string(), "tcp:h:6653");
        assert_eq!(p("br0").unwrap().to_string(), "unix:/run/peregrine/br0.mgmt");
    }

    #[test]
    fn other_methods_are_refused_with_a_reason() {
        assert!(p("ssl:1.2.3.4:6653").unwrap_err().contains("SSL"));
        assert!(p("ptcp:6653").unwrap_err().contains("passive"));
        assert!(p("udp:1.2.3.4").unwrap_err().contains("unknown connection method"));
        assert!(p("").is_err());
    }

    #[test]
    fn connect_to_missing_socket_fails() {
        let t = Target::Unix(format!("/nonexistent-{}/sock", std::process::id()).into());
        assert!(t.connect(Duration::from_secs(1)).is_err());
    }
}
