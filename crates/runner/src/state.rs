//! The switch's state saved at stop and restored at start, in its state directory
//! (`/var/lib/peregrine/NAME` by default):
//!
//! - `tables.ofp`: every meter, group and flow entry as OpenFlow 1.3 add messages
//!   (`switch::agent::Agent::saved_tables`), which `ovs-ofctl`-style tools and
//!   `peregrine ofp-parse` can read;
//! - `ports.json`: `{"version": 1, "ports": [PORT...]}`, the ports added at run time
//!   (`peregrine ctl add-port`) with their interface, backend and OpenFlow number, so
//!   that they come back with their numbers.
//!
//! Each file is written whole to a temporary file, synced and renamed over the old one,
//! so a crash leaves either the old state or the new one. A missing directory or file
//! is an empty state; a damaged one is an error that names the file.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::live_ports::Kept;

const TABLES: &str = "tables.ofp";
const PORTS: &str = "ports.json";
const VERSION: u32 = 1;

/// What is saved.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Saved {
    /// Ports added at run time.
    pub ports: Vec<Kept>,
    /// The tables as OpenFlow 1.3 messages.
    pub tables: Vec<u8>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PortsFile {
    version: u32,
    ports: Vec<Kept>,
}

/// Reads the state saved in `dir` (empty if nothing was).
pub fn load(dir: &Path) -> Result<Saved, String> {
    let tables = match std::fs::read(dir.join(TABLES)) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(format!("{}: {e}", dir.join(TABLES).display())),
    };
    let ports = match std::fs::read(dir.join(PORTS)) {
        Ok(b) => {
            let f: PortsFile = serde_json::from_slice(&b)
                .map_err(|e| format!("{}: {e}", dir.join(PORTS).display()))?;
            if f.version != VERSION {
                return Err(format!(
                    "{}: version {} (this switch reads version {VERSION})",
                    dir.join(PORTS).display(),
                    f.version
                ));
            }
            f.ports
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(format!("{}: {e}", dir.join(PORTS).display())),
    };
    Ok(Saved { ports, tables })
}

/// Saves `s` in `dir` (created if missing).
pub fn save(dir: &Path, s: &Saved) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    write_whole(&dir.join(TABLES), &s.tables)?;
    let ports = serde_json::to_vec_pretty(&PortsFile { version: VERSION, ports: s.ports.clone() })
        .map_err(|e| format!("encoding the ports: {e}"))?;
    write_whole(&dir.join(PORTS), &ports)
}

/// Writes `path` by a synced temporary file renamed over it.
fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let tmp = PathBuf::from(format!("{}.tmp", path.display()));
    let ctx = |e: std::io::Error| format!("{}: {e}", tmp.display());
    let mut f = std::fs::File::create(&tmp).map_err(ctx)?;
    f.write_all(bytes).map_err(ctx)?;
    f.sync_all().map_err(ctx)?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::BackendName;

    #[test]
    fn state_round_trips_and_damage_is_named() {
        let dir = std::env::temp_dir().join(format!("pg-state-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(load(&dir), Ok(Saved::default()), "nothing saved yet");
        let s = Saved {
            ports: vec![Kept {
                name: "veth9".into(),
                backend: BackendName::Afpacket,
                ofport: None,
                no: Some(9),
                from_file: false,
            }],
            tables: vec![4, 0, 0, 8, 0, 0, 0, 1],
        };
        save(&dir, &s).unwrap();
        assert_eq!(load(&dir), Ok(s));
        std::fs::write(dir.join(PORTS), b"{\"version\": 1, \"ports\": [{\"name\": 3}]}").unwrap();
        let e = load(&dir).unwrap_err();
        assert!(e.contains("ports.json") && e.contains("invalid type"), "{e}");
        std::fs::write(dir.join(PORTS), b"{\"version\": 2, \"ports\": []}").unwrap();
        assert!(load(&dir).unwrap_err().contains("version 2"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
