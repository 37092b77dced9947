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
//! Only classic pcap files with Ethernet link type are read (not pcapng). [`nth_packet`]
//! reads one packet of such a capture (`peregrine trace --pcap`).

use std::fs::File;
use std::io::{BufReader, BufWriter, Cursor, Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use datapath::packet::Packet;
use datapath::port::PortIo;
use pcap_file::pcap::{PcapPacket, PcapReader, PcapWriter};
use pcap_file::{DataLink, PcapError};

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
        let err =
            |path: &Path, reason: String| PortError::Pcap { path: path.to_path_buf(), reason };
        let replay = match replay {
            None => None,
            Some(path) => {
                let file = File::open(path)
                    .map_err(|e| err(path, format!("cannot open for replay: {e}")))?;
                let reader = PcapReader::new(BufReader::new(file)).map_err(|e| {
                    err(path, format!("not a readable pcap file (pcapng is not supported): {e}"))
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
        Ok(PcapPort { replay, record, counters: Arc::default() })
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
        let now =
            SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or(Duration::ZERO);
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

/// One packet of a capture: the bytes captured and the length it had on the wire
/// (never below the bytes captured).
#[derive(Debug, PartialEq, Eq)]
pub struct Captured {
    pub data: Vec<u8>,
    pub orig_len: usize,
}

/// Packet `n` (from 1) of the classic pcap file at `path` (Ethernet link type); the
/// error names the file and says what is wrong.
pub fn packet_of_file(path: &Path, n: usize) -> Result<Captured, String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    nth_packet(BufReader::new(file), n).map_err(|e| format!("{}: {e}", path.display()))
}

/// Packet `n` (from 1) of a classic pcap stream (microsecond or nanosecond, either byte
/// order, Ethernet link type). A pcapng stream is refused with a hint to convert it.
pub fn nth_packet(mut r: impl Read, n: usize) -> Result<Captured, String> {
    if n == 0 {
        return Err("packets are counted from 1".into());
    }
    let mut magic = [0u8; 4];
    r.read_exact(&mut magic).map_err(|_| "too short for a pcap file".to_string())?;
    if magic == [0x0a, 0x0d, 0x0d, 0x0a] {
        return Err("a pcapng file, which is not supported: convert it with \
                    `editcap -F pcap IN OUT` (or `tcpdump -r IN -w OUT`)"
            .into());
    }
    let mut reader = PcapReader::new(Cursor::new(magic).chain(r)).map_err(|e| match e {
        PcapError::IncompleteBuffer | PcapError::IoError(_) => {
            "too short for a pcap file".to_string()
        }
        _ => "not a pcap file (unknown magic number)".to_string(),
    })?;
    let link = reader.header().datalink;
    if link != DataLink::ETHERNET {
        return Err(format!(
            "link type {} is not Ethernet (1): only Ethernet captures can be traced",
            u32::from(link)
        ));
    }
    for i in 1..=n {
        let packet = match reader.next_packet() {
            None => {
                let s = if i == 2 { "" } else { "s" };
                return Err(format!("no packet {n}: the capture has {} packet{s}", i - 1));
            }
            Some(Err(PcapError::InvalidField(what))) => {
                return Err(format!("packet {i} is damaged ({what})"))
            }
            Some(Err(_)) => return Err(format!("the capture is cut short in packet {i}")),
            Some(Ok(p)) => p,
        };
        if i == n {
            return Ok(Captured {
                orig_len: (packet.orig_len as usize).max(packet.data.len()),
                data: packet.data.into_owned(),
            });
        }
    }
    Err(format!("no packet {n}"))
}

/// Writes `frames` as a new classic pcap file (Ethernet, microseconds, timestamps 0, 1,
/// … seconds) at `path`, replacing what was there.
pub fn write_frames(path: &Path, frames: &[&[u8]]) -> Result<(), String> {
    let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let file = File::create(path).map_err(|e| fail(&e))?;
    let mut w = PcapWriter::new(BufWriter::new(file)).map_err(|e| fail(&e))?;
    for (i, data) in frames.iter().enumerate() {
        let packet = PcapPacket::new(Duration::from_secs(i as u64), data.len() as u32, data);
        w.write_packet(&packet).map_err(|e| fail(&e))?;
    }
    w.into_writer().flush().map_err(|e| fail(&e))
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
            crate::Backend::Pcap { replay: Some(file.0.clone()), record: None },
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
        assert_eq!(port.handles[0].recv(&mut rx, 32, &mut pool), 0, "replayed once");
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
        assert!(err.to_string().contains("not a readable pcap file"), "{err}");

        // A valid capture of another link type (raw IP).
        let raw = TempFile::new("rawip");
        {
            let header =
                pcap_file::pcap::PcapHeader { datalink: DataLink::RAW, ..Default::default() };
            PcapWriter::with_header(File::create(&raw.0).unwrap(), header).unwrap();
        }
        let err = PcapPort::open(Some(&raw.0), None).err().unwrap();
        assert!(err.to_string().contains("not Ethernet"), "{err}");
    }

    /// A microsecond pcap of `frames` (each `(captured, original length)`), big- or
    /// little-endian.
    fn pcap(frames: &[(&[u8], u32)], big: bool) -> Vec<u8> {
        let w32 = |v: u32| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let w16 = |v: u16| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let mut f = Vec::new();
        f.extend_from_slice(&w32(0xa1b2_c3d4));
        f.extend_from_slice(&w16(2));
        f.extend_from_slice(&w16(4));
        f.extend_from_slice(&[0; 8]);
        f.extend_from_slice(&w32(65535));
        f.extend_from_slice(&w32(1));
        for (i, (data, orig)) in frames.iter().enumerate() {
            f.extend_from_slice(&w32(i as u32));
            f.extend_from_slice(&w32(0));
            f.extend_from_slice(&w32(data.len() as u32));
            f.extend_from_slice(&w32(*orig));
            f.extend_from_slice(data);
        }
        f
    }

    #[test]
    fn reads_the_packet_asked_in_either_byte_order() {
        for big in [false, true] {
            let file = pcap(&[(&[1, 2, 3], 3), (&[4, 5], 60)], big);
            let p = nth_packet(&file[..], 2).unwrap();
            assert_eq!(p, Captured { data: vec![4, 5], orig_len: 60 });
            assert_eq!(nth_packet(&file[..], 1).unwrap().data, vec![1, 2, 3]);
            let e = nth_packet(&file[..], 3).unwrap_err();
            assert_eq!(e, "no packet 3: the capture has 2 packets");
        }
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        let file = pcap(&[(&[1, 2, 3, 4], 4)], false);
        assert!(nth_packet(&file[..file.len() - 1], 1)
            .unwrap_err()
            .contains("cut short in packet 1"));
        assert!(nth_packet(&file[..], 0).unwrap_err().contains("from 1"));
        let mut ng = file.clone();
        ng[..4].copy_from_slice(&[0x0a, 0x0d, 0x0d, 0x0a]);
        assert!(nth_packet(&ng[..], 1).unwrap_err().contains("pcapng"));
        let mut raw = file.clone();
        raw[20..24].copy_from_slice(&101u32.to_le_bytes());
        assert!(nth_packet(&raw[..], 1).unwrap_err().contains("link type 101"));
        assert!(nth_packet(&[0u8; 10][..], 1).unwrap_err().contains("too short"));
        let e = nth_packet(&pcap(&[], false)[..], 1).unwrap_err();
        assert_eq!(e, "no packet 1: the capture has 0 packets");
    }
}
