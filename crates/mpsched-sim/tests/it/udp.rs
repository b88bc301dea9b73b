//! `[[udp]]` flows: exact send times, one-way delays and drops against hand-computed values
//! and a reference model of a drop-tail FIFO link, determinism, and the scenario errors.

use std::collections::VecDeque;

use mpsched_sim::{run_text, Column, Format, Scenario, Sim, Table};

use super::common::{link_i64, run, run_seed};

/// A scenario of `duration` seconds with one path `p` (rate, delay, optional queue line) and
/// the given `[[udp]]` / `[[flows]]` text.
fn scenario(duration: f64, rate: f64, delay_ms: f64, queue: &str, rest: &str) -> String {
    format!(
        "[sim]\nduration_s = {duration}\n[[paths]]\nname = \"p\"\nrate_mbps = {rate}\ndelay_ms = {delay_ms}\n{queue}\n{rest}"
    )
}

fn opt_i64(t: &Table, col: &str) -> Vec<Option<i64>> {
    match t.column(col) {
        Some(Column::OptI64(v)) => v.clone(),
        _ => panic!("no nullable integer column {col}"),
    }
}

fn udp_i64(t: &Table, col: &str, row: usize) -> i64 {
    t.i64s(col)[row]
}

#[test]
fn probe_on_idle_link_sees_serialization_plus_propagation() {
    // 84-byte probes (ping's size) at 10 Mbit/s: 84 × 8 / 10^7 s = 67,200 ns on the wire.
    let toml =
        scenario(0.95, 10.0, 10.0, "", "[[udp]]\nname = \"ping\"\nkind = \"probe\"\npath = \"p\"\ninterval_ms = 100\n");
    let out = run(&toml);
    let probes = out.probes.expect("a probes table");
    assert_eq!(probes.i64s("send_ns"), (0..10).map(|k| k * 100_000_000).collect::<Vec<i64>>());
    let owd = 10_000_000 + 67_200;
    assert_eq!(opt_i64(&probes, "owd_ns"), vec![Some(owd); 10]);
    assert_eq!(opt_i64(&probes, "rtt_ns"), vec![Some(2 * owd); 10]);
    assert_eq!(opt_i64(&probes, "arrival_ns")[3], Some(300_000_000 + owd));
    let udp = out.udp_flows.expect("a udp_flows table");
    assert_eq!(udp.strs("kind"), ["probe"]);
    assert_eq!((udp_i64(&udp, "packets_sent", 0), udp_i64(&udp, "packets_received", 0)), (10, 10));
    assert_eq!(udp_i64(&udp, "packets_lost", 0), 0);
    let max = match udp.column("owd_max_ms") {
        Some(Column::OptF64(v)) => v[0],
        _ => panic!("owd_max_ms"),
    };
    assert_eq!(max, Some(owd as f64 / 1e6));
    // No TCP flow: the flows table is empty, and the run went to its duration.
    assert_eq!(out.flows.rows(), 0);
    assert!(out.summary_json.contains("\"udp_flows\""));
}

/// Reference model of a rate link's drop-tail FIFO: arrivals `(t, size, probe)` in time order;
/// a packet leaving at `t` frees its place before an arrival at `t` (a rate link decides
/// departures at enqueue, and one at `t` counts as done at `t`: link/serial.rs). Returns per arrival its service end (`None`: dropped).
fn fifo_model(arrivals: &[(u64, u32)], rate_bps: u64, cap_bytes: u64) -> Vec<Option<u64>> {
    let tx = |size: u32| (size as u64 * 8 * 1_000_000_000).div_ceil(rate_bps);
    let mut system: VecDeque<(u32, u64)> = VecDeque::new();
    let mut out = Vec::new();
    for &(t, size) in arrivals {
        while system.front().is_some_and(|&(_, done)| done <= t) {
            system.pop_front();
        }
        let waiting: u64 = system.iter().skip(1).map(|&(s, _)| s as u64).sum();
        if !system.is_empty() && waiting + size as u64 > cap_bytes {
            out.push(None);
            continue;
        }
        let done = system.back().map_or(t, |&(_, d)| d.max(t)) + tx(size);
        system.push_back((size, done));
        out.push(Some(done));
    }
    out
}

const CBR_PROBE: &str = r#"
[[udp]]
name = "cbr"
kind = "cbr"
path = "p"
rate_mbps = 5
stop_s = 1.2
"#;

#[test]
fn cbr_over_a_slower_link_delivers_what_the_link_serves() {
    // 1500-byte packets every 2.4 ms (5 Mbit/s) into a 4 Mbit/s link (3 ms per packet) with a
    // 15,100-byte queue: ten packets wait at most.
    let toml = scenario(2.0, 4.0, 10.0, "queue_bytes = 15100", CBR_PROBE);
    let out = run(&toml);
    let arrivals: Vec<(u64, u32)> = (0..500).map(|k| (k * 2_400_000, 1500)).collect();
    let model = fifo_model(&arrivals, 4_000_000, 15_100);
    let accepted = model.iter().filter(|d| d.is_some()).count() as i64;
    let udp = out.udp_flows.as_ref().unwrap();
    assert_eq!(udp_i64(udp, "packets_sent", 0), 500);
    assert_eq!(udp_i64(udp, "packets_received", 0), accepted);
    assert_eq!(udp_i64(udp, "packets_lost", 0), 500 - accepted);
    assert_eq!(link_i64(&out, "p.fwd", "packets_dropped_queue"), 500 - accepted);
    // Backlogged from the first packet: the link served one packet per 3 ms up to the last
    // send at 1197.6 ms (399 of them), and the eleven in it then (ten waiting, one on the
    // wire) drained afterwards.
    assert_eq!(accepted, 399 + 11);
    assert!(out.probes.is_none());
}

#[test]
fn probe_behind_cbr_waits_the_queues_sojourn() {
    let probe =
        "[[udp]]\nname = \"ping\"\nkind = \"probe\"\npath = \"p\"\ninterval_ms = 100\nstart_s = 0.05\nstop_s = 1.2\n";
    let toml = scenario(2.0, 4.0, 10.0, "queue_bytes = 15100", &format!("{CBR_PROBE}{probe}"));
    let sc = Scenario::from_toml(&toml, "<test>").unwrap();
    let mut sim = Sim::new(sc);
    sim.run();
    // Arrivals in event order: a probe's send never ties with a CBR send (50 + 100k ms is not
    // a multiple of 2.4 ms).
    let mut arrivals: Vec<(u64, u32)> = (0..500).map(|k| (k * 2_400_000, 1500)).collect();
    arrivals.extend((0..12).map(|k| (50_000_000 + k * 100_000_000, 84)));
    arrivals.sort();
    let model = fifo_model(&arrivals, 4_000_000, 15_100);
    let want: Vec<u64> = arrivals
        .iter()
        .zip(&model)
        .filter(|((_, size), _)| *size == 84)
        .map(|((t, _), done)| done.expect("probes fit the queue") + 10_000_000 - t)
        .collect();
    assert_eq!(sim.udp_delays_ns(1), want.as_slice());
    // Behind about ten 3 ms packets: the sojourn adds ~30 ms to the idle 10.168 ms.
    let idle = 10_000_000 + 168_000;
    assert!(want.iter().skip(1).all(|&d| d > idle + 25_000_000), "{want:?}");
    let cbr_accepted = arrivals.iter().zip(&model).filter(|((_, s), d)| *s == 1500 && d.is_some()).count() as u64;
    assert_eq!(sim.udp_counts(0), (500, cbr_accepted, 500 - cbr_accepted));
}

#[test]
fn onoff_sends_exactly_within_its_on_periods() {
    // 1.2 Mbit/s of 1500-byte packets: one every 10 ms; on 100 ms, off 200 ms.
    let onoff = "[[udp]]\nname = \"burst\"\nkind = \"onoff\"\npath = \"p\"\nrate_mbps = 1.2\non_s = 0.1\noff_s = 0.2\n";
    let sc = Scenario::from_toml(&scenario(1.0, 100.0, 1.0, "", onoff), "<test>").unwrap();
    let mut sim = Sim::new(sc);
    let sent_by = |sim: &mut Sim, t: u64| {
        sim.run_until(t);
        sim.udp_counts(0).0
    };
    assert_eq!(sent_by(&mut sim, 90_000_000), 10); // 0, 10, ..., 90 ms
    assert_eq!(sent_by(&mut sim, 299_999_999), 10); // nothing at 100 ms (the on period's end)
    assert_eq!(sent_by(&mut sim, 300_000_000), 11); // the next on period starts at 300 ms
    assert_eq!(sent_by(&mut sim, 690_000_000), 30);
    assert_eq!(sent_by(&mut sim, 899_999_999), 30);
    sim.run();
    assert_eq!(sim.udp_counts(0).0, 40);
    // An idle 100 Mbit/s link: every packet takes 120 µs + 1 ms.
    assert!(sim.udp_delays_ns(0).iter().all(|&d| d == 1_120_000));
}

#[test]
fn exponential_onoff_is_deterministic_per_seed() {
    let onoff = "[[udp]]\nname = \"burst\"\nkind = \"onoff\"\npath = \"p\"\nrate_mbps = 1.2\non_s = 0.1\noff_s = 0.2\non_off = \"exponential\"\n";
    let toml = scenario(5.0, 100.0, 1.0, "", onoff);
    let (a, b, c) = (run_seed(&toml, 3), run_seed(&toml, 3), run_seed(&toml, 4));
    assert_eq!(a.udp_flows, b.udp_flows);
    assert_eq!(a.summary_json, b.summary_json);
    assert_ne!(a.udp_flows, c.udp_flows);
    // Fixed periods send 170 packets in 5 s (17 on periods of 10); drawn ones differ.
    let sent = a.udp_flows.unwrap().i64s("packets_sent")[0];
    assert!(sent > 0 && sent != 170, "{sent}");
}

#[test]
fn udp_flow_on_a_disjoint_path_leaves_tcp_results_alone() {
    let base = "[sim]\nduration_s = 3\n[[paths]]\nname = \"a\"\nrate_mbps = 10\ndelay_ms = 20\n[[paths]]\nname = \"b\"\nrate_mbps = 10\ndelay_ms = 20\n[[flows]]\nname = \"tcp\"\npath = \"a\"\n";
    let with = format!("{base}{}", "[[udp]]\nname = \"cbr\"\nkind = \"cbr\"\npath = \"b\"\nrate_mbps = 8\n");
    let (x, y) = (run(base), run(&with));
    assert_eq!(x.flows, y.flows);
    assert_eq!(x.subflows, y.subflows);
    assert!(x.udp_flows.is_none() && y.udp_flows.is_some());
    let udp = y.udp_flows.as_ref().unwrap();
    let col = |c: &str| udp.i64s(c)[0];
    assert_eq!(col("packets_received") + col("packets_in_flight") + col("packets_lost"), col("packets_sent"));
    assert_eq!(link_i64(&y, "b.fwd", "packets_dropped_queue"), col("packets_lost"));
}

#[test]
fn udp_errors_name_the_field() {
    let err = |udp: &str| {
        let toml = scenario(1.0, 10.0, 10.0, "", &format!("[[udp]]\nname = \"u\"\npath = \"p\"\n{udp}"));
        run_text(&toml, "s.toml", Format::Toml, None).err().expect("an error").0
    };
    assert_eq!(err("kind = \"tcp\""), "s.toml: udp[0].kind: expected \"cbr\", \"onoff\" or \"probe\", got \"tcp\"");
    assert_eq!(err("kind = \"cbr\""), "s.toml: udp[0].rate_mbps: missing: expected the sending rate in Mbit/s");
    assert_eq!(err("kind = \"cbr\"\nrate_mbps = 1\non_s = 1"), "s.toml: udp[0].on_s: not used by kind \"cbr\"");
    assert_eq!(
        err("kind = \"probe\"\nrate_mbps = 1"),
        "s.toml: udp[0].rate_mbps: not used by a probe (it sends one packet per interval_ms)"
    );
    assert_eq!(
        err("kind = \"onoff\"\nrate_mbps = 1\non_s = 1"),
        "s.toml: udp[0].off_s: missing: expected the off period in seconds"
    );
    assert_eq!(
        err("kind = \"onoff\"\nrate_mbps = 1\non_s = 1\noff_s = 1\non_off = \"pareto\""),
        "s.toml: udp[0].on_off: expected \"fixed\" or \"exponential\", got \"pareto\""
    );
    assert_eq!(
        err("kind = \"cbr\"\nrate_mbps = 1\npacket_bytes = 20"),
        "s.toml: udp[0].packet_bytes: expected 28..=65535 bytes (IP and UDP headers included), got 20"
    );
    assert!(err("kind = \"probe\"\ninterval_ms = 0").starts_with("s.toml: udp[0].interval_ms: expected a duration"));
    assert!(
        err("kind = \"cbr\"\nrate_mbps = 1\nstop_s = 0").starts_with("s.toml: udp[0].stop_s: expected a time after")
    );
    let toml = scenario(1.0, 10.0, 10.0, "", "[[udp]]\nname = \"u\"\npath = \"q\"\nkind = \"cbr\"\nrate_mbps = 1\n");
    assert_eq!(
        run_text(&toml, "s.toml", Format::Toml, None).err().unwrap().0,
        "s.toml: udp[0].path: unknown path \"q\""
    );
    let toml = scenario(
        1.0,
        10.0,
        10.0,
        "",
        "[[flows]]\nname = \"u\"\npath = \"p\"\n[[udp]]\nname = \"u\"\npath = \"p\"\nkind = \"probe\"\n",
    );
    assert_eq!(
        run_text(&toml, "s.toml", Format::Toml, None).err().unwrap().0,
        "s.toml: udp[0].name: duplicate flow name \"u\""
    );
}

#[test]
fn resolved_copy_reads_back_with_defaults() {
    let toml = scenario(1.0, 10.0, 10.0, "", "[[udp]]\nname = \"ping\"\nkind = \"probe\"\npath = \"p\"\n");
    let sc = Scenario::from_toml(&toml, "<test>").unwrap();
    let text = sc.resolved_toml();
    assert!(text.contains("packet_bytes = 84") && text.contains("interval_ms = 1000.0"), "{text}");
    let again = Scenario::from_toml(&text, "<again>").unwrap();
    assert_eq!(again.resolved_toml(), text);
}
