//! `cargo run --release --example bench [NAME...]`: the `mpsched bench` scenarios without Python.
//!
//! `bench --count NAME [--trace-packets]`: runs NAME once (with every flow's packet trace) through `bench::event_loop` and prints its counters
//! (events, packets, delivered data packets, output digest); `bench/instructions.sh` runs this
//! under callgrind. `bench --sizes`: the in-memory sizes of the per-connection structures.
fn main() {
    let mut names: Vec<String> = std::env::args().skip(1).collect();
    if names.first().is_some_and(|a| a == "--sizes") {
        for (name, bytes) in mpsched_transport::layout::sizes() {
            println!("{name:<28} {bytes:>5} B");
        }
        return;
    }
    if names.first().is_some_and(|a| a == "--count") {
        let n = names.get(1).expect("--count NAME");
        let trace = names.get(2).is_some_and(|a| a == "--trace-packets");
        let r = mpsched_sim::bench::counted_run_traced(n, trace).unwrap_or_else(|| panic!("unknown bench {n}"));
        println!("events {} packets {} delivered {} digest {:016x}", r.events, r.packets, r.delivered, r.digest);
        return;
    }
    if names.is_empty() {
        names = mpsched_sim::bench::names().into_iter().map(String::from).collect();
    }
    let decisions = names.iter().any(|n| n == "decisions");
    names.retain(|n| n != "decisions");
    if decisions {
        let d = mpsched_sim::bench::decision_overhead(5);
        println!(
            "decisions      {} per-packet pauses, built-in {:.4} s, paused {:.4} s, overhead {:.0} ns per decision",
            d.decisions,
            d.wall_builtin,
            d.wall_paused,
            d.ns_per_decision()
        );
    }
    for n in names {
        let r = mpsched_sim::bench::run_bench(&n, 3).unwrap_or_else(|| panic!("unknown bench {n}"));
        println!(
            "{:<14} sim {:>5.1} s  wall {:>9.6} s  {:>8.0}x real time  {:>6.1} ns/event  {:>5.2} Mevents/s  {:>5.2} Mpkts/s",
            r.name, r.sim_seconds, r.wall_seconds, r.realtime_factor(), r.ns_per_event(), r.events_per_s() / 1e6, r.packets_per_s() / 1e6
        );
    }
}
