//! A port as the user writes it: the interface, how it is opened ([`BackendName`]) and
//! the OpenFlow number asked for. The configuration file, `run --port`, `ctl add-port`
//! and the state saved across restarts all spell a port this way.

use serde::Deserialize;

/// How a port is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BackendName {
    /// AF_XDP where the kernel and driver support it in full, else AF_PACKET
    /// (`ports::auto`): the default.
    Auto,
    /// AF_XDP, attached natively where the driver allows, else generic.
    Afxdp,
    /// AF_XDP in native (driver) mode only.
    AfxdpNative,
    /// AF_XDP in generic (SKB) mode.
    AfxdpGeneric,
    Afpacket,
    Tap,
}

impl BackendName {
    const ALL: [BackendName; 6] = [
        BackendName::Auto,
        BackendName::Afxdp,
        BackendName::AfxdpNative,
        BackendName::AfxdpGeneric,
        BackendName::Afpacket,
        BackendName::Tap,
    ];

    pub fn parse(s: &str) -> Result<BackendName, String> {
        Self::ALL.into_iter().find(|b| b.as_str() == s).ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|b| b.as_str()).collect();
            format!("unknown backend {s:?} (one of: {})", names.join(", "))
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            BackendName::Auto => "auto",
            BackendName::Afxdp => "afxdp",
            BackendName::AfxdpNative => "afxdp-native",
            BackendName::AfxdpGeneric => "afxdp-generic",
            BackendName::Afpacket => "afpacket",
            BackendName::Tap => "tap",
        }
    }
}

/// One switch port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortConfig {
    pub name: String,
    pub backend: BackendName,
    /// The OpenFlow port number asked for (none: its place in the list).
    pub ofport: Option<u32>,
}

impl PortConfig {
    /// A port on `name` with the default backend and number.
    pub fn named(name: &str) -> PortConfig {
        PortConfig { name: name.to_string(), backend: BackendName::Auto, ofport: None }
    }
}

/// `IFACE[,backend=NAME][,ofport=N]` (as `--port` and `ctl add-port` write a port).
pub fn parse_port_flag(s: &str) -> Result<PortConfig, String> {
    let mut parts = s.split(',');
    let name = parts.next().unwrap_or_default().to_string();
    let mut port = PortConfig::named(&name);
    for opt in parts {
        match opt.split_once('=') {
            Some(("backend", b)) => port.backend = BackendName::parse(b)?,
            Some(("ofport", n)) => {
                port.ofport = Some(
                    n.parse()
                        .ok()
                        .filter(|n| (1..=datapath::action::port::MAX).contains(n))
                        .ok_or_else(|| {
                            format!("ofport={n}: a port number is 1 to 4294967040 (0xffffff00)")
                        })?,
                )
            }
            _ => return Err(format!("unknown option {opt:?} (backend=… or ofport=…)")),
        }
    }
    Ok(port)
}
