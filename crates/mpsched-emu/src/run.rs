//! The real-time loop: packets read from the TUN devices enter the model at the wall-clock time
//! they were read; deliveries are written to the other end's TUN device when the model's time
//! comes, and their lateness is recorded.

use std::io::Result;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::Ordering;
use std::time::Instant;

use serde_json::{json, Value};

use crate::lateness::Lateness;
use crate::net::{Delivery, EmuNet, NO_TAG};
use crate::sys;

/// The TUN devices of one path: client end (its packets go forward) and server end.
pub struct PathTun {
    /// Client-side device.
    pub client: OwnedFd,
    /// Server-side device.
    pub server: OwnedFd,
}

/// Settings of a run.
pub struct RunConfig {
    /// Stop after this long (ns since the start).
    pub end_ns: u64,
    /// Busy-wait (poll without sleeping) this long before a due event (ns).
    pub spin_ns: u64,
}

/// Counters of a run besides the links'.
#[derive(Default)]
pub struct RunCounters {
    /// Per path: packets read from the client and from the server device.
    pub packets_read: Vec<[u64; 2]>,
    /// Largest packet read (bytes): above the MTU would mean segmentation offload.
    pub max_packet_bytes: usize,
    /// Packets read that were not IPv4 (dropped).
    pub non_ipv4: u64,
    /// Writes the kernel refused.
    pub write_errors: u64,
    /// Lateness of every delivery.
    pub lateness: Lateness,
    /// Time the loop ran (ns).
    pub ran_ns: u64,
    /// Stopped by a signal or by stdin closing.
    pub interrupted: bool,
}

/// Runs the loop until `cfg.end_ns`, a signal, or `stdin` (if given) closing.
pub fn run(net: &mut EmuNet<Vec<u8>>, tuns: &[PathTun], cfg: &RunConfig, stdin: Option<i32>) -> Result<RunCounters> {
    let mut c = RunCounters { packets_read: vec![[0; 2]; tuns.len()], ..Default::default() };
    let mut fds: Vec<libc::pollfd> = tuns
        .iter()
        .flat_map(|t| [t.client.as_raw_fd(), t.server.as_raw_fd()])
        .chain(stdin)
        .map(|fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 })
        .collect();
    let t0 = Instant::now();
    let mut out: Vec<Delivery<Vec<u8>>> = Vec::new();
    let mut buf = vec![0u8; 65536];
    loop {
        let now = t0.elapsed().as_nanos() as u64;
        if now >= cfg.end_ns || sys::STOP.load(Ordering::SeqCst) {
            c.interrupted = now < cfg.end_ns;
            c.ran_ns = now;
            return Ok(c);
        }
        net.advance(now, &mut out);
        deliver(&mut out, tuns, &mut c, t0);
        if stdin.is_some() && fds.last().is_some_and(|p| p.revents & (libc::POLLIN | libc::POLLHUP) != 0) {
            c.interrupted = true;
            c.ran_ns = now;
            return Ok(c);
        }
        read_all(net, tuns, &fds, now, &mut buf, &mut c)?;
        let next = net.next_time().map(|t| t.min(cfg.end_ns)).unwrap_or(cfg.end_ns);
        let now = t0.elapsed().as_nanos() as u64;
        let timeout = next.saturating_sub(now).saturating_sub(cfg.spin_ns);
        sys::wait(&mut fds, Some(timeout))?;
    }
}

/// Writes every delivery to its destination device, recording how late it is.
fn deliver(out: &mut Vec<Delivery<Vec<u8>>>, tuns: &[PathTun], c: &mut RunCounters, t0: Instant) {
    for d in out.drain(..) {
        let t = &tuns[d.path as usize];
        let fd = if d.to_server { t.server.as_raw_fd() } else { t.client.as_raw_fd() };
        if sys::write_packet(fd, &d.payload).is_err() {
            c.write_errors += 1;
        }
        let at = t0.elapsed().as_nanos() as u64;
        c.lateness.record(at.saturating_sub(d.due_ns));
    }
}

/// Reads every waiting packet of the readable devices into the model at `now`.
fn read_all(
    net: &mut EmuNet<Vec<u8>>,
    tuns: &[PathTun],
    fds: &[libc::pollfd],
    now: u64,
    buf: &mut [u8],
    c: &mut RunCounters,
) -> Result<()> {
    for (i, p) in fds.iter().take(2 * tuns.len()).enumerate() {
        if p.revents & libc::POLLIN == 0 {
            continue;
        }
        let (path, to_server) = (i / 2, i % 2 == 0);
        while let Some(n) = sys::read_packet(p.fd, buf)? {
            c.packets_read[path][i % 2] += 1;
            c.max_packet_bytes = c.max_packet_bytes.max(n);
            if n == 0 || buf[0] >> 4 != 4 {
                c.non_ipv4 += 1;
                continue;
            }
            let tag = data_port(&buf[..n], to_server);
            net.offer(now, path as u16, to_server, tag, buf[..n].to_vec());
        }
    }
    Ok(())
}

/// The server-side port of a TCP segment that carries data (the port of the flow: its
/// destination going to the server, its source coming back), or [`NO_TAG`] for anything else
/// (pure ACKs, other protocols): the simulator counts a flow's dropped data packets.
pub fn data_port(pkt: &[u8], to_server: bool) -> u32 {
    if pkt.len() < 20 || pkt[9] != 6 {
        return NO_TAG;
    }
    let ihl = (pkt[0] & 0x0f) as usize * 4;
    let total = u16::from_be_bytes([pkt[2], pkt[3]]) as usize;
    if pkt.len() < ihl + 20 {
        return NO_TAG;
    }
    let tcp = &pkt[ihl..];
    let data_off = (tcp[12] >> 4) as usize * 4;
    if total <= ihl + data_off {
        return NO_TAG;
    }
    let at = if to_server { 2 } else { 0 };
    u16::from_be_bytes([tcp[at], tcp[at + 1]]) as u32
}

/// The links table rows (the simulator's columns, `Sim::link_rows`) at `end` ns.
pub fn link_rows(net: &mut EmuNet<Vec<u8>>, end: u64) -> Vec<Value> {
    net.links_mut()
        .iter_mut()
        .map(|l| {
            let cap = l.capacity_bytes(end);
            let s = l.stats;
            json!({
                "name": l.name, "packets_sent": s.packets_out, "bytes_delivered": s.bytes_out,
                "packets_dropped_queue": s.dropped_queue, "packets_dropped_loss": s.dropped_loss,
                "packets_dropped_outage": s.dropped_outage, "max_queue_bytes": s.max_queue_bytes,
                "utilization": if cap > 0.0 { s.bytes_out as f64 / cap } else { 0.0 },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(len: usize, sport: u16, dport: u16) -> Vec<u8> {
        let mut p = vec![0u8; 40 + len];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&((40 + len) as u16).to_be_bytes());
        p[9] = 6;
        p[20..22].copy_from_slice(&sport.to_be_bytes());
        p[22..24].copy_from_slice(&dport.to_be_bytes());
        p[32] = 5 << 4;
        p
    }

    #[test]
    fn data_segments_are_tagged_with_the_server_port() {
        assert_eq!(data_port(&tcp(1000, 40000, 5001), true), 5001);
        assert_eq!(data_port(&tcp(1000, 5001, 40000), false), 5001);
        assert_eq!(data_port(&tcp(0, 40000, 5001), true), NO_TAG, "a pure ACK");
        let mut udp = tcp(100, 1, 2);
        udp[9] = 17;
        assert_eq!(data_port(&udp, true), NO_TAG);
    }
}
