//! The Linux bridge as a device under test: a bridge `<prefix>br` in the root namespace
//! enslaving the hosts' root-side ends, either learning (the default) or with learning
//! off and static FDB entries for every host. The setup's extra FDB entries (the table
//! size experiment's random MACs) point at the sink's port, loaded with one
//! `bridge -batch`. The bridge is deleted on drop; the topology also tracks it, so it
//! goes even if the driver is leaked.

use super::Setup;
use crate::topo::{ip, Host, Topology};

/// How the bridge knows where hosts are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fdb {
    /// It learns source MACs (the kernel default).
    Learned,
    /// Learning off on both ports; one static entry per host.
    Static,
}

/// A running bridge.
#[derive(Debug)]
pub struct Bridge {
    name: String,
}

/// The `bridge` commands that pin host `h`'s MAC to its port with learning off.
pub fn static_commands(h: &Host) -> Vec<Vec<String>> {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        s(&["link", "set", "dev", &h.port, "learning", "off"]),
        s(&["fdb", "replace", &h.mac, "dev", &h.port, "master", "static"]),
    ]
}

/// The `bridge -batch` lines pinning each of `macs` to `port` as static entries.
pub fn fdb_batch(macs: &[[u8; 6]], port: &str) -> String {
    let mut s = String::with_capacity(macs.len() * 64);
    for m in macs {
        let mac = m.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(":");
        s.push_str(&format!("fdb replace {mac} dev {port} master static\n"));
    }
    s
}

impl Bridge {
    /// Creates the bridge on the setup's hosts' root-side ends and brings it up.
    pub fn start(topo: &mut Topology, fdb: Fdb, setup: &Setup) -> Result<Bridge, String> {
        let name = format!("{}br", topo.prefix());
        ip(&["link", "add", "name", &name, "type", "bridge"]).map_err(|e| e.to_string())?;
        topo.track_link(&name);
        let br = Bridge { name };
        let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{}/disable_ipv6", br.name), "1");
        for h in setup.hosts() {
            ip(&["link", "set", &h.port, "master", &br.name]).map_err(|e| e.to_string())?;
            if fdb == Fdb::Static {
                for c in static_commands(h) {
                    let args: Vec<&str> = c.iter().map(String::as_str).collect();
                    crate::topo::run("bridge", &args).map_err(|e| e.to_string())?;
                }
            }
        }
        if !setup.fdb.is_empty() {
            super::run_batch(
                "bridge",
                &["-batch", "-"],
                &fdb_batch(&setup.fdb, &setup.sink.port),
                "loading FDB entries",
            )?;
        }
        ip(&["link", "set", &br.name, "up"]).map_err(|e| e.to_string())?;
        Ok(br)
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        if std::path::Path::new(&format!("/sys/class/net/{}", self.name)).exists() {
            let _ = ip(&["link", "del", &self.name]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_entries_name_the_port_and_mac() {
        let h = Host {
            ns: "n".into(),
            port: "pg1x0h1".into(),
            ip: "10.1.0.1".into(),
            mac: "02:00:00:00:00:01".into(),
        };
        let c = static_commands(&h);
        assert_eq!(c[0].join(" "), "link set dev pg1x0h1 learning off");
        assert_eq!(c[1].join(" "), "fdb replace 02:00:00:00:00:01 dev pg1x0h1 master static");
        assert_eq!(
            fdb_batch(&[[2, 0, 0, 0, 0xab, 1], [2, 0, 0, 0, 0, 2]], "p2"),
            "fdb replace 02:00:00:00:ab:01 dev p2 master static\n\
             fdb replace 02:00:00:00:00:02 dev p2 master static\n"
        );
    }
}
