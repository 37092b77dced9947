//! Pcap ports: replay a capture as received traffic, record sent traffic to a capture.
//!
//! A pcap port has one handle (for worker 0). Replay delivers the file's frames once,
//! in file order, as fast as `recv` is called, then nothing; timestamps are ignored.
//! A record that is cut short in the capture (captured length below the original) is
//! skipped and counted as an rx error, and a damaged file ends the replay at the damage
//! (one rx error). Record appends every sent frame to a new file (created or truncated
//! at open) with the current time; the file is flushed when the handle is dropped.
//! Without a record file, sent frames are dropped and counted.
//!
//! Only classic pcap files with Ethernet link type are read (not pcapng).

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use datapath::packet::Packet;
use datapath::port::PortIo;
use pcap_file::pcap::{PcapPacket, PcapReader, PcapWriter};
use pcap_file::DataLink;

use crate::counters::PortCounters;
use crate::error::PortError;

/// The handle of a pcap port. See the module comment.
pub struct PcapPort {
    /// The capture being replayed; `None` once it has ended (or when there is none).
    replay: Option<PcapReader<BufReader<File>>>,
    record: Option<PcapWriter<BufWriter<File>>>,
    counters: Arc<PortCounters>,
}

impl PcapPort {
    /// Opens the replay file (if any) and creates the record file (if any).
    pub fn open(replay: Option<&Path>, record: Option<&Path>) -> Result<PcapPort, PortError> {
        let err = |path: &Path, reason: String| PortError::Pcap {
            path: path.to_path_buf(),
            reason,
        };
        let replay = match replay {
            None => None,
            Some(path) => {
                let file = File::open(path)
                    .map_err(|e| err(path, format!("cannot open for replay: {e}")))?;
                let reader = PcapReader::new(BufReader::new(file)).map_err(|e| {
                    err(
                        path,
                        format!("not a readable pcap file (pcapng is not supported): {e}"),
                    )
                })?;
                let link = reader.header().datalink;
                if link != DataLink::ETHERNET {
                    return Err(err(path, format!("link type {link:?} is not Ethernet")));
                }
                Some(reader)
            }
        };
        let record = match record {
            None => None,
            Some(path) => {
                let file = File::create(path)
                    .map_err(|e| err(path, format!("cannot create for recording: {e}")))?;
                Some(
                    PcapWriter::new(BufWriter::new(file))
                        .map_err(|e| err(path, format!("cannot write the pcap header: {e}")))?,
                )
            }
        };
        Ok(PcapPort {
            replay,
            record,
            counters: Arc::default(),
        })
    }

    /// This handle's counters.
    pub fn counters(&self) -> &Arc<PortCounters> {
        &self.counters
    }

    /// Whether the replay has delivered everything it will (true without a replay).
    pub fn replay_done(&self) -> bool {
        self.replay.is_none()
    }
}

impl PortIo for PcapPort {
    fn recv(&mut self, rx: &mut Vec<Packet>, max: usize, pool: &mut Vec<Packet>) -> usize {
        let Some(reader) = &mut self.replay else {
            return 0;
        };
        let (mut got, mut bytes, mut errors, mut ended) = (0usize, 0u64, 0u64, false);
        while got < max {
            match reader.next_packet() {
                None => {
                    ended = true;
                    break;
                }
                Some(Err(_)) => {
                    errors += 1;
                    ended = true;
                    break;
                }
                Some(Ok(pkt)) => {
                    if (pkt.data.len() as u64) < u64::from(pkt.orig_len) {
                        errors += 1;
                        continue;
                    }
                    let mut p = pool.pop().unwrap_or_default();
                    p.refill(&pkt.data);
                    bytes += p.len() as u64;
                    got += 1;
                    rx.push(p);
                }
            }
        }
        if ended {
            self.replay = None;
        }
        self.counters.add_rx_batch(got as u64, bytes, errors);
        got
    }

    fn send(&mut self, tx: &mut Vec<Packet>, pool: &mut Vec<Packet>) {
        let (mut sent, mut bytes, mut dropped, mut errors) = (0u64, 0u64, 0u64, 0u64);
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or(Duration::ZERO);
        for p in tx.drain(..) {
            match &mut self.record {
                None => dropped += 1,
                Some(w) => {
                    let len = p.len() as u32;
                    match w.write_packet(&PcapPacket::new(now, len, p.data())) {
                        Ok(_) => {
                            sent += 1;
                            bytes += u64::from(len);
                        }
                        Err(_) => errors += 1,
                    }
                }
            }
            pool.push(p);
        }
        self.counters.add_tx_batch(sent, bytes, dropped, errors);
    }

    fn rx_fd(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        None
    }
}

impl Drop for PcapPort {
    fn drop(&mut self) {
        if let Some(w) = self.record.take() {
            let _ = w.into_writer().flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file path unique to this test process and name, removed on drop.
    struct TempFile(std::path::PathBuf);

    impl TempFile {
        fn new(tag: &str) -> TempFile {
            TempFile(
                std::env::temp_dir()
                    .join(format!("peregrine-ports-{}-{tag}.pcap", std::process::id())),
            )
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn frames() -> Vec<Packet> {
        (0..100u32)
            .map(|i| {
                let mut f = vec![0u8; 60 + (i as usize * 13) % 1400];
                f[..4].copy_from_slice(&i.to_be_bytes());
                Packet::from_slice(&f)
            })
            .collect()
    }

    #[test]
    fn record_then_replay_gives_the_same_frames() {
        let file = TempFile::new("roundtrip");
        let sent = frames();
        {
            let mut rec = PcapPort::open(None, Some(&file.0)).unwrap();
            let mut pool = Vec::new();
            for chunk in sent.chunks(32) {
                let mut tx = chunk.to_vec();
                rec.send(&mut tx, &mut pool);
                assert!(tx.is_empty());
            }
            assert_eq!(pool.len(), sent.len());
            let s = rec.counters().snapshot();
            assert_eq!(s.tx_packets, 100);
            assert_eq!(s.tx_bytes, sent.iter().map(|p| p.len() as u64).sum::<u64>());
            // Nothing to replay.
            assert_eq!(rec.recv(&mut Vec::new(), 32, &mut pool), 0);
        }
        let mut port = crate::open(
            "p0",
            crate::Backend::Pcap {
                replay: Some(file.0.clone()),
                record: None,
            },
            4,
        )
        .unwrap();
        assert_eq!(port.handles.len(), 1, "pcap has one handle, for worker 0");
        assert_eq!(port.info.ifindex, 0);
        let (mut rx, mut pool) = (Vec::new(), Vec::new());
        let mut calls = 0;
        while port.handles[0].recv(&mut rx, 32, &mut pool) > 0 {
            calls += 1;
            assert!(calls < 100);
        }
        assert_eq!(rx, sent);
        assert_eq!(
            port.handles[0].recv(&mut rx, 32, &mut pool),
            0,
            "replayed once"
        );
        assert_eq!(port.stats().rx_packets, 100);
        // No record file: sent frames are dropped and counted.
        port.handles[0].send(&mut rx, &mut pool);
        assert_eq!(port.stats().tx_dropped, 100);
    }

    #[test]
    fn damaged_files_end_the_replay_without_panicking() {
        let file = TempFile::new("damaged");
        {
            let mut rec = PcapPort::open(None, Some(&file.0)).unwrap();
            rec.send(&mut frames()[..3].to_vec(), &mut Vec::new());
        }
        let mut bytes = std::fs::read(&file.0).unwrap();
        // Cut the last record short.
        bytes.truncate(bytes.len() - 10);
        std::fs::write(&file.0, &bytes).unwrap();
        let mut port = PcapPort::open(Some(&file.0), None).unwrap();
        let (mut rx, mut pool) = (Vec::new(), Vec::new());
        assert_eq!(port.recv(&mut rx, 32, &mut pool), 2);
        assert!(port.replay_done());
        assert_eq!(port.recv(&mut rx, 32, &mut pool), 0);
        assert_eq!(port.counters().snapshot().rx_errors, 1);
        assert_eq!(rx, frames()[..2].to_vec());
    }

    #[test]
    fn open_errors_name_the_file_and_the_problem() {
        let missing = std::path::Path::new("/nonexistent/dir/x.pcap");
        let err = PcapPort::open(Some(missing), None).err().unwrap();
        assert!(err.to_string().contains("/nonexistent/dir/x.pcap"), "{err}");
        assert!(PcapPort::open(None, Some(missing)).is_err());

        let garbage = TempFile::new("garbage");
        std::fs::write(&garbage.0, b"this is not a capture file at all").unwrap();
        let err = PcapPort::open(Some(&garbage.0), None).err().unwrap();
        assert!(
            err.to_string().contains("not a readable pcap file"),
            "{err}"
        );

        // A valid capture of another link type (raw IP).
        let raw = TempFile::new("rawip");
        {
            let header = pcap_file::pcap::PcapHeader {
                datalink: DataLink::RAW,
                ..Default::default()
            };
            PcapWriter::with_header(File::create(&raw.0).unwrap(), header).unwrap();
        }
        let err = PcapPort::open(Some(&raw.0), None).err().unwrap();
        assert!(err.to_string().contains("not Ethernet"), "{err}");
    }
}
