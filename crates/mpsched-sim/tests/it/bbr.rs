//! BBR v1 (`cc = "bbr"`) end to end: utilisation and standing queue of a single flow, sharing
//! between two flows, and per-subflow BBR over MPTCP (issue 19's acceptance).
//!
//! The path is 10 Mbit/s with 25 ms one-way delay (RTT 50 ms, BDP 62 500 bytes), with a
//! drop-tail queue of 4 BDP so that the queue limit is not what keeps BBR's queue small.

use mpsched_sim::{parse_text, Format, Sim};

use crate::common::*;

const RATE_BPS: f64 = 10e6;
/// Bandwidth-delay product of the 50 ms RTT, bytes.
const BDP: f64 = RATE_BPS / 8.0 * 0.050;

fn path(name: &str) -> String {
    format!("[[paths]]\nname = \"{name}\"\nrate_mbps = 10\ndelay_ms = 25\nqueue_bytes = 250000\n")
}

/// Steps `sim` 1 ms at a time from `t0_ms` to `t1_ms`; returns the link utilisation of path 0
/// over that window (wire bytes out of the bottleneck / capacity), the largest of the minimum
/// queue occupancies over consecutive 500 ms (10-round) windows, and the mean occupancy, both
/// in BDPs.
fn measure(sim: &mut Sim, t0_ms: u64, t1_ms: u64) -> (f64, f64, f64) {
    const MS: u64 = 1_000_000;
    sim.advance(t0_ms * MS);
    let out0 = sim.path_device_bytes(0).0;
    let (mut worst_min, mut sum, mut n) = (0u64, 0u64, 0u64);
    let mut win_min = u64::MAX;
    for t in t0_ms + 1..=t1_ms {
        sim.advance(t * MS);
        let q = sim.path_queued_bytes(0);
        win_min = win_min.min(q);
        sum += q;
        n += 1;
        if (t - t0_ms).is_multiple_of(500) {
            worst_min = worst_min.max(win_min);
            win_min = u64::MAX;
        }
    }
    let out = sim.path_device_bytes(0).0 - out0;
    let util = out as f64 * 8.0 / (RATE_BPS * (t1_ms - t0_ms) as f64 / 1e3);
    (util, worst_min as f64 / BDP, sum as f64 / n as f64 / BDP)
}

fn sim(text: &str) -> Sim {
    Sim::new(parse_text(text, "<test>", Format::Toml, None).unwrap())
}

/// One bulk BBR flow: from 5 s (startup and drain long over) to 30 s, the bottleneck is busy
/// ≥ 95 % of the time (two ProbeRTT episodes included) and the standing queue (the minimum
/// over each 10-round window) stays below 1 BDP, as does the mean queue.
#[test]
fn single_flow_fills_the_pipe_with_a_small_queue() {
    let mut s =
        sim(&format!("[sim]\nduration_s = 30\n{}\n[[flows]]\nname = \"x\"\npath = \"a\"\ncc = \"bbr\"\n", path("a")));
    let (util, standing, mean) = measure(&mut s, 5_000, 30_000);
    eprintln!("bbr single flow: utilisation {util:.4}, standing queue {standing:.3} BDP, mean queue {mean:.3} BDP");
    assert!(util >= 0.95, "utilisation {util:.4}");
    assert!(standing < 1.0, "standing queue {standing:.3} BDP");
    assert!(mean < 1.0, "mean queue {mean:.3} BDP");
}

/// Two BBR flows on one bottleneck (the second starts 1 s later): Jain's index of their
/// goodputs over 10–60 s ≥ 0.9.
#[test]
fn two_flows_share_fairly() {
    let out = run(&format!(
        "[sim]\nduration_s = 60\n{}\n[[flows]]\nname = \"x\"\npath = \"a\"\ncc = \"bbr\"\n[[flows]]\nname = \"y\"\npath = \"a\"\ncc = \"bbr\"\nstart_s = 1\n",
        path("a")
    ));
    let g = [
        series_mean(&out, "x", "flow_goodput_mbps", 10.0, 60.0),
        series_mean(&out, "y", "flow_goodput_mbps", 10.0, 60.0),
    ];
    let j = jain(&g);
    eprintln!("bbr two flows: goodput {:.3} / {:.3} Mbit/s, Jain {j:.4}", g[0], g[1]);
    assert!(j >= 0.9, "Jain {j:.4} of {g:?}");
    assert!(g[0] + g[1] >= 9.0, "total {:.2} Mbit/s", g[0] + g[1]);
}

/// MPTCP with per-subflow BBR over two disjoint 10 Mbit/s paths: both subflows carry data and
/// the connection aggregates both paths.
#[test]
fn mptcp_bbr_aggregates_two_paths() {
    let out = run(&format!(
        "[sim]\nduration_s = 20\n{}{}\n[[flows]]\nname = \"mp\"\npaths = [\"a\", \"b\"]\nscheduler = \"minrtt\"\ncc = \"bbr\"\n",
        path("a"),
        path("b").replace("delay_ms = 25", "delay_ms = 50")
    ));
    let g = series_mean(&out, "mp", "flow_goodput_mbps", 5.0, 20.0);
    eprintln!("mptcp-bbr two paths: goodput {g:.3} Mbit/s");
    assert!(g >= 17.0, "aggregate goodput {g:.2} Mbit/s");
}

/// The contrast that makes the queue assertion meaningful: CUBIC on the same path fills the
/// 4-BDP buffer and keeps a standing queue above 1 BDP.
#[test]
fn cubic_keeps_a_standing_queue_on_the_same_path() {
    let mut s =
        sim(&format!("[sim]\nduration_s = 30\n{}\n[[flows]]\nname = \"x\"\npath = \"a\"\ncc = \"cubic\"\n", path("a")));
    let (util, standing, mean) = measure(&mut s, 5_000, 30_000);
    eprintln!("cubic single flow: utilisation {util:.4}, standing queue {standing:.3} BDP, mean queue {mean:.3} BDP");
    assert!(standing > 1.0 && mean > 1.0, "standing {standing:.3}, mean {mean:.3} BDP");
}
