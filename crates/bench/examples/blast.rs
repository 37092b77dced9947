//! `blast NS IFNAME SECONDS CPU FLOWS`: sends 64-byte IPv4/UDP frames (FLOWS distinct
//! UDP source ports, to a MAC nobody has, so switches flood them) from interface IFNAME
//! in network namespace NS through AF_XDP, as fast as the socket takes them, for
//! SECONDS, on CPU CPU; prints what was sent. For measurements the study does not
//! cover (scripts/fastpath/flood_throughput.sh). Needs root.

use std::process::ExitCode;
use std::time::Duration;

fn frame(sport: u16) -> Vec<u8> {
    let mut f = bench::dut::NOBODY.to_vec();
    f.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x08, 0x00]);
    let mut ip = [0x45, 0, 0, 46, 0, 1, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
    let mut sum: u32 = ip.chunks(2).map(|c| u32::from(u16::from_be_bytes([c[0], c[1]]))).sum();
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    f.extend_from_slice(&ip);
    // UDP, checksum 0 (none), 18 bytes of zero payload: 60 bytes, 64 on the wire.
    let mut udp = [0u8; 26];
    udp[0..2].copy_from_slice(&sport.to_be_bytes());
    udp[2..4].copy_from_slice(&9u16.to_be_bytes());
    udp[4..6].copy_from_slice(&26u16.to_be_bytes());
    f.extend_from_slice(&udp);
    f
}

fn run(args: &[String]) -> Result<(), String> {
    let [ns, ifname, seconds, cpu, flows] = args else {
        return Err("usage: blast NS IFNAME SECONDS CPU FLOWS".into());
    };
    let seconds: f64 = seconds
        .parse()
        .ok()
        .filter(|s: &f64| *s > 0.0 && s.is_finite())
        .ok_or_else(|| format!("SECONDS: {seconds:?} is not a positive number"))?;
    let cpu: usize = cpu.parse().map_err(|_| format!("CPU: {cpu:?} is not a CPU number"))?;
    let flows: u16 = flows
        .parse()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("FLOWS: {flows:?} is not a number from 1 to 65535"))?;
    let frames = (0..flows).map(|i| frame(1024u16.wrapping_add(i))).collect();
    let backend = ports::Backend::AfXdp { mode: ports::afxdp::AttachMode::Auto };
    let sent = bench::blast::start(
        backend,
        ns,
        ifname,
        frames,
        Duration::from_secs_f64(seconds),
        Some(cpu),
    )
    .join()
    .map_err(|_| "the sending thread panicked".to_string())?
    .map_err(|e| format!("sending from {ifname} in {ns}: {e}"))?;
    println!(
        "sent {} dropped {} in {:.2} s",
        sent.packets,
        sent.dropped,
        sent.elapsed.as_secs_f64()
    );
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("blast: {e}");
            ExitCode::FAILURE
        }
    }
}
