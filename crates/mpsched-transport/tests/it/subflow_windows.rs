//! The linux profile's per-subflow receive windows, measured on the kernel engine (Linux 6.18,
//! docs/fidelity.md `mptcp-het-256k`, `mpsched_transport::rcvspace`): a subflow that joins after
//! the connection's receive buffer stopped growing keeps `tcp_rmem[1]` (131,072 bytes) and offers
//! at most 80,896 bytes of its own beyond DATA_ACK (the send-side window and its raise have unit
//! tests in subflow.rs).

use crate::util::*;
use mpsched_transport::rcvspace::LINUX_TCP_RMEM_DEFAULT;
use mpsched_transport::{ConnConfig, SubflowConfig};

/// Path 0 (20 Mbit/s, 10 ms one way) is a backup: it carries the data until the join over path
/// 1 (5 Mbit/s, 100 ms) completes, long after the connection's buffer first grew; from then on
/// path 1 carries everything, and its ACKs offer the windows.
fn backup_first(subflow: SubflowConfig, rcv_buf: u64) -> Pair {
    let cfg = ConnConfig { subflow, backup: vec![true, false], ..multipath_config("upstream", 2, rcv_buf) };
    let mut p = Pair::new(cfg).with_delay(ms(10)).with_rate(20_000_000).with_path(1, ms(100), Some(5_000_000));
    p.client.write(2000 * 1424);
    p.drive_until(at_ms(2500));
    p
}

/// The windows of the server's pure ACKs on path 1 sent after `from_ms`.
fn windows_on_path_1(p: &Pair, from_ms: u64) -> Vec<u64> {
    let acks = p.pure_acks(Dir::S2C).filter(|s| s.path == 1 && s.at >= at_ms(from_ms));
    acks.map(|s| s.seg.wnd as u64).collect()
}

#[test]
fn a_subflow_joined_after_the_buffer_stopped_growing_offers_tcp_rmem_defaults_share() {
    // 256 KB: the connection's buffer reaches it within the first RTTs of path 0, before the
    // join over path 1 completes; the joined subflow keeps 131,072 bytes: 131,072 × 158 / 256.
    assert_eq!(LINUX_TCP_RMEM_DEFAULT, 131_072);
    let p = backup_first(SubflowConfig::linux(), 256 * 1024);
    let w = windows_on_path_1(&p, 1000);
    assert!(w.len() > 100, "{} ACKs", w.len());
    assert!(w.iter().all(|&w| w == 80_896), "{w:?}");
    // Path 0 offered the whole buffer's payload share while it carried the data.
    let first = p.pure_acks(Dir::S2C).filter(|s| s.path == 0).map(|s| s.seg.wnd).max();
    assert_eq!(first, Some(161_792));
    // Once the edges path 0 offered are used up, the connection's window is the joined
    // subflow's: never more than 80,896 bytes in flight. The segment at the window's edge is
    // cut to it (`mptcp_check_allowed_size`), so more than 56 whole segments' worth.
    let in_flight = p.client_data_on(1).filter(|d| d.at >= at_ms(1500)).map(|d| {
        let acked = p.pure_acks(Dir::S2C).filter(|a| a.arrival.is_some_and(|t| t <= d.at)).map(|a| a.seg.data_ack);
        d.seg.dsn + d.seg.len as u64 - acked.max().unwrap_or(0)
    });
    let most = in_flight.max().unwrap();
    assert!(most <= 80_896 && most > 80_896 / 1424 * 1424, "{most}");
}

#[test]
fn a_subflow_joined_while_the_buffer_grows_follows_it() {
    // 16 MB: the connection's buffer is still growing when the join completes; its next growth
    // takes the joined subflow's buffer along (tcp_rcvbuf_grow), past tcp_rmem[1].
    let p = backup_first(SubflowConfig::linux(), 16 << 20);
    assert!(windows_on_path_1(&p, 1000).iter().all(|&w| w > 80_896));
}

#[test]
fn without_a_subflow_buffer_the_joined_subflow_offers_the_connections_window() {
    let cfg = SubflowConfig { subflow_rcv_buf: None, ..SubflowConfig::linux() };
    let w = windows_on_path_1(&backup_first(cfg, 256 * 1024), 1000);
    assert!(!w.is_empty() && w.iter().all(|&w| w > 150_000), "{w:?}");
}
