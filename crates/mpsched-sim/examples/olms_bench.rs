//! Per-slot decision overhead of the OLMS scheduler, in µs.
//!
//! `cargo run --release -p mpsched-sim --example olms_bench [scenario.toml]`
//!
//! 1. Isolated: `get_send` on a fixed 4-path view (the paper's Application I RTTs), 200 000
//!    slots, for minRTT, OLMS (LP every slot) and OLMS with cyclic LP solving (cycle = 5).
//! 2. In the simulator: the scenario (default scenarios/olms-app1.toml) with OLMS and with
//!    minRTT, fastest of 3 runs each; extra wall time per transmitted segment.

use mpsched_sim::scenario::Scenario;
use mpsched_sim::sim::Sim;
use mpsched_transport::connection::ConnInfo;
use mpsched_transport::sched::{AnySched, SchedSubflow, SchedView, Scheduler, SubflowSet};
use mpsched_transport::{Duration, Instant, SubflowInfo};

fn subflow(srtt_ms: u64, cwnd: u64) -> SchedSubflow {
    SchedSubflow {
        info: SubflowInfo { established: true, srtt: Duration::from_millis(srtt_ms), cwnd, ..SubflowInfo::default() },
        usable: true,
        available: true,
        space: cwnd,
        ..SchedSubflow::default()
    }
}

fn isolated(name: &str, slots: u32) -> f64 {
    let mut s = AnySched::by_name(name).unwrap();
    s.seed(1);
    let subs = [subflow(20, 30_000), subflow(30, 30_000), subflow(50, 60_000), subflow(60, 60_000)];
    let conn = ConnInfo::default();
    let v = SchedView {
        subflows: &subs,
        conn: &conn,
        seg_len: 1448,
        reinjection: false,
        unsent: 1 << 20,
        send_window: 1 << 30,
        preference: None,
        changed: SubflowSet::ALL,
    };
    let mut best = f64::MAX;
    for _ in 0..3 {
        let t0 = std::time::Instant::now();
        for _ in 0..slots {
            let mut out = SubflowSet::default();
            std::hint::black_box(s.get_send(Instant::ZERO, &v, &mut out));
        }
        best = best.min(t0.elapsed().as_secs_f64() * 1e6 / slots as f64);
    }
    best
}

fn in_sim(text: &str, scheduler: &str) -> (f64, u64) {
    let text = text.replace("scheduler = \"olms\"", &format!("scheduler = \"{scheduler}\""));
    let sc = Scenario::from_toml(&text, "bench").unwrap();
    let mut best = f64::MAX;
    let mut segs = 0;
    for _ in 0..3 {
        let mut sim = Sim::new(sc.clone());
        let t0 = std::time::Instant::now();
        sim.run();
        best = best.min(t0.elapsed().as_secs_f64());
        segs = (0..4).map(|i| sim.connection(0).map(|c| c.subflow_info(i).segments_sent).unwrap_or(0)).sum();
    }
    (best, segs)
}

fn main() {
    let path = std::env::args().nth(1).unwrap_or_else(|| "scenarios/olms-app1.toml".into());
    let text = std::fs::read_to_string(&path).expect("scenario file");
    let n = 200_000;
    let (m, o, c) = (isolated("minrtt", n), isolated("olms", n), isolated("olms:cycle=5", n));
    println!("isolated get_send, 4 paths, best of 3 x {n} slots:");
    println!("  minrtt          {m:8.3} us/slot");
    println!("  olms            {o:8.3} us/slot  ({:.0}x minrtt)", o / m);
    println!("  olms cycle=5    {c:8.3} us/slot  ({:.2}x olms)", c / o);
    let (wm, sm) = in_sim(&text, "minrtt");
    let (wo, so) = in_sim(&text, "olms");
    println!("simulation {path}, best of 3:");
    println!("  minrtt  {:.3} s wall, {sm} segments", wm);
    println!("  olms    {:.3} s wall, {so} segments", wo);
    println!(
        "  olms extra per segment: {:.2} us ({:.2}x minrtt wall)",
        (wo - wm).max(0.0) * 1e6 / so.max(1) as f64,
        wo / wm
    );
}
