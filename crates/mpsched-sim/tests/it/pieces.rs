//! A run in pieces (`Sim::run_until` with the timeseries taken between pieces, as the Python
//! side streams it to disk) gives exactly the run in one go: same summary, same tables, the
//! taken timeseries rows followed by the remaining ones.

use std::path::Path;

use mpsched_sim::{parse_text, Format, RunOutput, Sim, Table};

fn scenario(name: &str, seed: u64) -> mpsched_sim::Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios").join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    parse_text(&text, name, Format::Toml, Some(seed)).unwrap()
}

/// Runs in pieces of `step_ns`, taking the timeseries after every other piece.
fn in_pieces(name: &str, seed: u64, step_ns: u64) -> (RunOutput, usize) {
    let mut sim = Sim::new(scenario(name, seed));
    let (mut taken, mut pieces) = (Table::default(), 0);
    while !sim.run_until(sim.now_ns() + step_ns) {
        pieces += 1;
        if pieces % 2 == 0 {
            taken.append(sim.take_timeseries());
        }
    }
    let mut out = sim.output();
    taken.append(std::mem::take(&mut out.timeseries));
    out.timeseries = taken;
    (out, pieces)
}

#[test]
fn a_run_in_pieces_is_the_run_in_one_go() {
    // A handoff scenario (outages, reinjection), concurrent flows with energy, OLMS, and a
    // host-controlled DRL-CC scenario (its controller runs at interval boundaries).
    for (name, step_ns) in [
        ("edar-handoff.toml", 777_777_777),
        ("mptcp-rl-dynamic-loss.toml", 123_456_789),
        ("olms-app1.toml", 333_333_333),
        ("drl-cc-scenario-6.toml", 250_000_000),
    ] {
        let whole = mpsched_sim::run(scenario(name, 3));
        let (pieces, n) = in_pieces(name, 3, step_ns);
        assert!(n >= 10, "{name}: {n} pieces");
        assert_eq!(pieces.summary_json, whole.summary_json, "{name}");
        assert_eq!(pieces.flows, whole.flows, "{name}");
        assert_eq!(pieces.subflows, whole.subflows, "{name}");
        assert_eq!(pieces.links, whole.links, "{name}");
        assert!(whole.timeseries.rows() > 0, "{name}");
        assert_eq!(pieces.timeseries, whole.timeseries, "{name}");
    }
}
