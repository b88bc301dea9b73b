//! Per-slot statistics (`Connection::slot_stats`): for every new-data segment the connection
//! schedules, the chosen subflow's cwnd and srtt as the scheduler saw them. These give the OLMS
//! paper's evaluation metrics (olms.txt §VI-B): the selected path's throughput cwnd / srtt and
//! the scheduled path's smoothed RTT, averaged per time slot (packet transmission).
//!
//! Hand-checked cases: the initial window of one path, and minRTT on two idle established paths.

use crate::util::*;
use mpsched_transport::{Side, SlotStats};

/// cwnd × 8 × 10⁹ / srtt, bits per second, as the connection computes it per slot.
fn bw(cwnd: u64, srtt_ns: u64) -> u128 {
    cwnd as u128 * 8_000_000_000 / srtt_ns as u128
}

/// One path, RTT 100 ms, no rate limit: the 10 segments of the initial window all leave when the
/// SYN-ACK arrives, with cwnd = IW = 10 × 1448 bytes and srtt = the handshake's 100 ms sample,
/// i.e. 14 480 × 8 / 0.1 s = 1.1584 Mbit/s each. Later segments are counted once each
/// (retransmissions are not slots), with an srtt of at least the path's RTT.
#[test]
fn single_path_initial_window() {
    let mut p = Pair::new(linux_reno());
    p.client.write(10 * MSS);
    p.run_until_delivered(10 * MSS, at_ms(1000));
    let s = p.client.slot_stats(0);
    let (iw, rtt) = (10 * MSS, 100_000_000u64);
    assert_eq!(s, SlotStats { slots: 10, measured: 10, bw_bps_sum: 10 * bw(iw, rtt), srtt_ns_sum: 10 * rtt as u128 });
    assert!((s.mean_bw_mbps() - 1.1584).abs() < 1e-12 && (s.mean_srtt_ms() - 100.0).abs() < 1e-12);

    let mut p = Pair::new(linux_reno());
    p.client.write(200 * MSS);
    p.run_until_delivered(200 * MSS, at_ms(10_000));
    let s = p.client.slot_stats(0);
    assert_eq!((s.slots, s.measured), (200, 200));
    assert!(s.mean_srtt_ms() >= 100.0 && s.mean_bw_mbps() >= 1.1584, "{s:?}");
    assert_eq!(p.server.slot_stats(0), SlotStats::default(), "the receiver sends no data");
}

/// minRTT on two established idle paths (10 ms and 40 ms one-way): of 15 new segments, the
/// first cwnd₀ / MSS go to the lower-srtt subflow 0 with its (cwnd, srtt), the rest to
/// subflow 1 with its own; the sums are exactly those products.
#[test]
fn min_rtt_records_the_chosen_subflow() {
    let mut p = Pair::new(multipath_config("minrtt", 2, 1 << 20)).with_path(0, ms(10), None).with_path(1, ms(40), None);
    p.drive_until(at_ms(1000));
    assert!(p.client_sf(0).established && p.client_sf(1).established);
    let (a, b) = (p.client_sf(0), p.client_sf(1));
    assert!(a.srtt < b.srtt && a.outstanding == 0 && b.outstanding == 0);
    assert_eq!(p.client.slot_stats(0).slots + p.client.slot_stats(1).slots, 0, "no data yet");
    let n0 = a.cwnd / MSS;
    assert_eq!(n0, 10, "initial window");
    p.client.write(15 * MSS);
    p.flush();
    let (s0, s1) = (p.client.slot_stats(0), p.client.slot_stats(1));
    assert_eq!(
        s0,
        SlotStats {
            slots: 10,
            measured: 10,
            bw_bps_sum: 10 * bw(a.cwnd, a.srtt.0),
            srtt_ns_sum: 10 * a.srtt.0 as u128
        }
    );
    assert_eq!(
        s1,
        SlotStats { slots: 5, measured: 5, bw_bps_sum: 5 * bw(b.cwnd, b.srtt.0), srtt_ns_sum: 5 * b.srtt.0 as u128 }
    );
    // Connection totals: slot-weighted.
    let mut all = s0;
    all.add(&s1);
    let expect = (10.0 * s0.mean_bw_mbps() + 5.0 * s1.mean_bw_mbps()) / 15.0;
    assert!((all.mean_bw_mbps() - expect).abs() < 1e-9);
    assert_eq!(all.since(&s0), s1);
    p.run_until_delivered(15 * MSS, at_ms(3000));
    let _ = p.read(Side::Server, u64::MAX);
    assert_eq!(p.client.slot_stats(0).slots + p.client.slot_stats(1).slots, 15, "one slot per new segment");
}
