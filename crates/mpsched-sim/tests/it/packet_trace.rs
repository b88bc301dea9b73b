//! The packet trace: exact rows at exact times for a one-path transfer, outage drops named,
//! and a traced run's outputs equal to the untraced run's.

use mpsched_sim::{Scenario, Sim, Table};

/// One NewReno flow of 2 segments over 10 Mbit/s, 10 ms one-way: a 52-byte SYN takes 41.6 us
/// to serialize, a 1500-byte data segment (1448 + 52) 1.2 ms.
const ONE_PATH: &str = r#"
[sim]
name = "one"
duration_s = 2.0
seed = 1

[[paths]]
name = "p"
rate_mbps = 10.0
delay_ms = 10.0

[[flows]]
name = "f"
path = "p"
cc = "newreno"
size_bytes = 2896
"#;

fn traced(text: &str) -> (Sim, Table) {
    let mut sim = Sim::new(Scenario::from_toml(text, "t").unwrap());
    sim.trace_packets_named(&["all".to_string()]).unwrap();
    let mut rows = Table::default();
    while !sim.run_until(sim.now_ns() + 50_000_000) {
        rows.append(sim.take_packets());
    }
    rows.append(sim.take_packets());
    (sim, rows)
}

#[test]
fn one_path_transfer_rows_are_exact() {
    let (_, t) = traced(ONE_PATH);
    let (ts, ev, seq, len, ack) = (t.i64s("t_ns"), t.strs("event"), t.i64s("seq"), t.i64s("len"), t.i64s("ack"));
    let rows: Vec<(i64, &str, i64, i64, i64)> =
        (0..ts.len()).map(|i| (ts[i], ev[i].as_str(), seq[i], len[i], ack[i])).collect();
    assert_eq!(
        &rows[..9],
        &[
            (0, "send", 0, 0, 0),            // SYN
            (10_041_600, "arrive", 0, 0, 0), // 10 ms + 41.6 us
            (10_041_600, "send", 0, 0, 1),   // SYN-ACK
            (20_083_200, "arrive", 0, 0, 1),
            (20_083_200, "send", 1, 0, 1),    // the third ACK
            (20_083_200, "send", 1, 1448, 1), // two data segments, back to back
            (20_083_200, "send", 1449, 1448, 1),
            (30_124_800, "arrive", 1, 0, 1),    // the ACK: 41.6 us behind
            (31_324_800, "arrive", 1, 1448, 1), // 1.2 ms each behind the ACK
        ]
    );
    assert_eq!((rows[9].0, rows[9].1), (32_524_800, "arrive"));
    let reasons: Vec<&str> = t.strs("reason").iter().map(String::as_str).collect();
    assert_eq!(&reasons[5..7], &["new", "new"]);
}

#[test]
fn outage_drops_are_named() {
    let text = ONE_PATH.replace("size_bytes = 2896", "size_bytes = 2000000")
        + "\n[[events]]\nat_s = 0.5\npath = \"p\"\nstate = \"down\"\n[[events]]\nat_s = 0.8\npath = \"p\"\nstate = \"up\"\n";
    let (mut sim, t) = traced(&text);
    let out = sim.output();
    let drops = t.strs("drop_reason").iter().filter(|r| r.as_str() == "outage").count() as i64;
    assert!(drops > 0);
    assert_eq!(drops, out.links.i64s("packets_dropped_outage").iter().sum::<i64>());
}

#[test]
fn tracing_changes_no_output() {
    let mut plain = Sim::new(Scenario::from_toml(ONE_PATH, "t").unwrap());
    plain.run();
    let (mut traced, _) = traced(ONE_PATH);
    let (a, b) = (plain.output(), traced.output());
    assert_eq!(a.summary_json, b.summary_json);
    assert_eq!((a.flows, a.subflows, a.links), (b.flows, b.subflows, b.links));
}
