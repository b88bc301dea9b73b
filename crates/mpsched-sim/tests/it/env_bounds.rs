//! Reward terms stay within physical limits (property over random scenarios, fixed seeds): in
//! every step of a learning env, the payload that arrived at the receiver is at most what its
//! paths can carry in the interval, and the goodput term is at most that plus the data that was
//! already waiting at the receiver when the interval began (bytes released by filling a hole).
//! The same bounds hold for the host env over every flow of random hosts.

use mpsched_sim::env::{AnySpec, Env, EnvSpec, HostEnv, HostTerm, Term};

fn next(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn pick<'a>(s: &mut u64, xs: &[&'a str]) -> &'a str {
    xs[(next(s) % xs.len() as u64) as usize]
}

/// A random two-path scenario: rates, delays, loss, queue, congestion control, interval,
/// duration (half of them a whole number of intervals, the others ending in a partial one).
fn scenario(s: &mut u64) -> (String, [f64; 2], String, f64) {
    let rate = [1 + next(s) % 40, 1 + next(s) % 40];
    let delay = [2 + next(s) % 80, 2 + next(s) % 80];
    let loss = (next(s) % 4) as f64 / 100.0;
    let queue = 10_000 + next(s) % 400_000;
    let cc = pick(s, &["cubic", "newreno", "lia", "olia"]);
    let interval = 20 + next(s) % 180;
    // Half the durations are a whole number of intervals (the run ends on a boundary).
    let duration = match next(s) % 2 {
        0 => 1.0 + (next(s) % 2000) as f64 / 1000.0,
        _ => (interval * (5 + next(s) % 40)) as f64 / 1000.0,
    };
    let action = pick(s, &["mode", "weights", "select"]).to_string();
    let sched = if action == "mode" { "external" } else { "external-weights" };
    let text = format!(
        r#"
        [sim]
        duration_s = {duration}
        [[paths]]
        name = "a"
        rate_mbps = {}
        delay_ms = {}
        queue_bytes = {queue}
        [[paths]]
        name = "b"
        rate_mbps = {}
        delay_ms = {}
        queue_bytes = {queue}
        loss = {{ model = "bernoulli", p = {loss} }}
        [[flows]]
        name = "mp"
        paths = ["a", "b"]
        cc = "{cc}"
        scheduler = "{sched}"
        decision_interval_ms = {interval}
        "#,
        rate[0], delay[0], rate[1], delay[1]
    );
    (text, [rate[0] as f64, rate[1] as f64], action, interval as f64 / 1000.0)
}

fn arrived_and_delivered(env: &Env) -> (u64, u64) {
    let Some(r) = env.sim().receiver(0) else { return (0, 0) };
    let arrived = r.subflows().map(|(_, s)| s.bytes_arrived).sum();
    (arrived, r.info().bytes_delivered)
}

/// One step's figures: the paths' rates, the interval (nominal and real, s), the receiver's
/// (arrived, delivered) bytes before, and the bytes arrived after.
struct Step {
    rate_mbps: [f64; 2],
    nominal: f64,
    real: f64,
    before: (u64, u64),
    arrived: u64,
}

impl Step {
    /// Payload the paths carry in `len` s: MSS 1448 of each 1500-byte packet, plus one packet
    /// per path (a packet finishing serialization at the interval's start).
    fn capacity(&self, len: f64) -> f64 {
        self.rate_mbps.iter().map(|r| r * 1e6 / 8.0 * len * 1448.0 / 1500.0 + 1448.0).sum()
    }

    /// Arrivals within the capacity of the real interval; the goodput term (a rate) times the
    /// length it is measured over (at least the nominal interval) within what the paths carry
    /// in that time plus what was waiting at the receiver.
    fn check(&self, case: u64, goodput_mbps: f64) {
        let (arrived0, delivered0) = self.before;
        let arrived = (self.arrived - arrived0) as f64;
        let real = self.real;
        assert!(arrived <= self.capacity(real) + 1e-6, "case {case}: {arrived} B arrived in {real} s");
        let backlog = (arrived0 - delivered0) as f64;
        let len = real.max(self.nominal);
        let goodput = goodput_mbps * 1e6 / 8.0;
        assert!(
            goodput * len <= self.capacity(len) + backlog + 1e-6,
            "case {case}: goodput {goodput} B/s over {len} s (real {real} s), backlog {backlog}"
        );
    }
}

#[test]
fn reward_terms_are_bounded_by_physical_limits() {
    let mut steps_checked = 0;
    let mut released = 0;
    for case in 0..24u64 {
        let mut s = 0xB0_0000 + case;
        let (text, rate_mbps, action, nominal) = scenario(&mut s);
        let spec = serde_json::json!({
            "scenario": text, "source": "<random>", "format": "toml", "flow": 0, "action": action,
            "max_paths": 2, "history": 1, "max_flows": 1,
        });
        let mut env = Env::new(EnvSpec::from_json(&spec.to_string()).unwrap(), case).unwrap();
        let mut terms = vec![0.0; env.spec.terms_len()];
        loop {
            let (arrived0, delivered0) = arrived_and_delivered(&env);
            let a: Vec<f32> = (0..env.spec.action_len()).map(|_| (next(&mut s) % 1000) as f32 / 1000.0).collect();
            let st = env.step(&a);
            env.write_terms(&mut terms);
            let (arrived1, delivered1) = arrived_and_delivered(&env);
            let real = terms[Term::IntervalS as usize];
            let step = Step { rate_mbps, nominal, real, before: (arrived0, delivered0), arrived: arrived1 };
            step.check(case, terms[Term::GoodputMbps as usize]);
            released += u64::from((delivered1 - delivered0) as f64 > step.capacity(real));
            steps_checked += 1;
            if st.terminated || st.truncated {
                break;
            }
        }
    }
    assert!(steps_checked > 500, "{steps_checked}");
    println!("{steps_checked} steps, {released} released a backlog above one interval's capacity");
}

/// Bytes that arrived on every subflow, and were delivered, over every flow of a host env.
fn host_arrived_and_delivered(env: &HostEnv) -> (u64, u64) {
    let n = env.sim().scenario().flows.len();
    let recv = (0..n).filter_map(|f| env.sim().receiver(f));
    recv.map(|r| (r.subflows().map(|(_, s)| s.bytes_arrived).sum::<u64>(), r.info().bytes_delivered))
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
}

/// The same bounds for the host env, over random hosts: the random two-path MPTCP flow, a TCP
/// flow on path a and a second MPTCP download arriving later; random window or path actions.
#[test]
fn host_reward_terms_are_bounded_by_physical_limits() {
    let mut steps_checked = 0;
    for case in 0..16u64 {
        let mut s = 0xB1_0000 + case;
        let (text, rate_mbps, _, nominal) = scenario(&mut s);
        let text = text.replace("scheduler = \"external\"", "").replace("scheduler = \"external-weights\"", "")
            + "[[flows]]\nname = \"tcp\"\npath = \"a\"\n[[flows]]\nname = \"late\"\npaths = [\"a\", \"b\"]\nstart_s = 0.3\nsize_bytes = 300000\n";
        let action = pick(&mut s, &["cwnd", "weights", "select"]);
        let spec = serde_json::json!({
            "kind": "host", "scenario": text, "source": "<random>", "format": "toml", "action": action,
            "target": pick(&mut s, &["rotate", "all"]), "interval_ms": nominal * 1000.0,
            "max_flows": 3, "max_subflows": 2,
        });
        let AnySpec::Host(spec) = AnySpec::from_json(&spec.to_string()).unwrap() else { unreachable!() };
        let mut env = HostEnv::new(spec, case).unwrap();
        let mut terms = vec![0.0; env.spec.terms_len()];
        loop {
            let (arrived0, delivered0) = host_arrived_and_delivered(&env);
            let a: Vec<f32> = (0..env.spec.action_len()).map(|_| (next(&mut s) % 2000) as f32 / 1000.0 - 1.0).collect();
            let st = env.step(&a);
            env.write_terms(&mut terms);
            let (arrived1, _) = host_arrived_and_delivered(&env);
            let real = terms[HostTerm::IntervalS as usize];
            let step = Step { rate_mbps, nominal, real, before: (arrived0, delivered0), arrived: arrived1 };
            step.check(case, terms[HostTerm::GoodputMbps as usize]);
            assert!(terms[HostTerm::Loss as usize] <= 1.0 && terms[HostTerm::EnergyJ as usize] == 0.0);
            steps_checked += 1;
            if st.terminated || st.truncated {
                break;
            }
        }
    }
    assert!(steps_checked > 300, "{steps_checked}");
}
