//! The host env (`mpsched_sim::env::host`): slots for flows that come and go, the rotation of
//! DRL-CC's target flow, exact window and path actions, per-subflow features at their named
//! offsets, energy with promotion and tail, determinism, and the vector env over host specs.

use mpsched_sim::env::features::{FlowFeature as Fl, SubflowFeature as S};
use mpsched_sim::env::{AnySpec, HostEnv, HostSpec, HostTerm, VecEnv, VecOut, HOST_TERMS};

/// Two 10 Mbit/s paths (10 and 30 ms one way, no loss, 120 ms queues); `mp1` (MPTCP, greedy)
/// and `tcp` (path a) from the start, `mp2` (MPTCP, 500 KB) from 1 s.
const HOST: &str = r#"
[sim]
duration_s = 6
seed = 1
[[paths]]
name = "a"
rate_mbps = 10
delay_ms = 10
queue_bytes = 150000
[[paths]]
name = "b"
rate_mbps = 10
delay_ms = 30
queue_bytes = 150000
[[flows]]
name = "mp1"
paths = ["a", "b"]
[[flows]]
name = "tcp"
path = "a"
[[flows]]
name = "mp2"
paths = ["a", "b"]
start_s = 1.0
size_bytes = 500000
"#;

fn spec(scenario: &str, extra: serde_json::Value) -> HostSpec {
    let mut v = serde_json::json!({
        "scenario": scenario, "source": "<test>", "format": "toml", "action": "cwnd",
        "interval_ms": 100, "max_flows": 4, "max_subflows": 2,
    });
    v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    HostSpec::from_json(&v.to_string()).unwrap()
}

fn obs(env: &HostEnv) -> Vec<f32> {
    let mut o = vec![0.0; env.spec.layout().size()];
    env.observe(&mut o);
    o
}

fn terms(env: &HostEnv) -> Vec<f64> {
    let mut t = vec![0.0; env.spec.terms_len()];
    env.write_terms(&mut t);
    t
}

fn names(env: &HostEnv) -> Vec<Option<&str>> {
    let flows = &env.sim().scenario().flows;
    env.slot_flows().iter().map(|s| s.map(|f| flows[f].name.as_str())).collect()
}

/// The flow slot marked as the next target in the newest frame.
fn targets(env: &HostEnv) -> Vec<usize> {
    let l = env.spec.layout();
    let o = obs(env);
    let base = l.frame(l.history - 1);
    (0..l.max_flows).filter(|&j| o[base + l.flow(j, Fl::Target)] == 1.0).collect()
}

/// Flows take the lowest free slot when they start (mp2 one interval ahead, set up for
/// control before it starts), TCP is observed but not controlled, the rotation visits the
/// running MPTCP flows in turn, and a completed flow frees its slot.
#[test]
fn slots_follow_flows_and_the_target_rotates_over_controlled_flows() {
    let mut env = HostEnv::new(spec(HOST, serde_json::json!({})), 1).unwrap();
    assert_eq!(names(&env), [Some("mp1"), Some("tcp"), None, None]);
    assert_eq!(targets(&env), [0], "only mp1 runs and is controlled");
    let sc = |env: &HostEnv, f: usize| env.sim().connection(f).unwrap().cc_name();
    assert_eq!((sc(&env, 0), sc(&env, 1)), ("external", "cubic"));
    let mut seen = Vec::new();
    let mut freed_at = None;
    for step in 1..60 {
        env.step(&[0.0, 0.0]);
        let t = env.sim().now_ns();
        if t == 900_000_000 {
            // mp2 starts at 1.0 s, before the next boundary: it has a slot, not yet a flow.
            assert_eq!(names(&env)[2], Some("mp2"));
            let l = env.spec.layout();
            assert_eq!(obs(&env)[l.flow_mask_offset() + 2], 0.0);
        }
        if env.sim().connection(2).is_some() && !env.sim().flow_done(2) {
            assert_eq!(sc(&env, 2), "external");
            seen.push(targets(&env)[0]);
        }
        if env.sim().flow_done(2) && freed_at.is_none() {
            freed_at = Some(step);
            assert_eq!(names(&env), [Some("mp1"), Some("tcp"), None, None]);
            assert_eq!(targets(&env), [0]);
        }
    }
    assert!(seen.len() > 6, "mp2 ran for {} steps", seen.len());
    assert!(seen.windows(2).all(|w| w[0] != w[1] && w[0] != 1 && w[1] != 1), "{seen:?}");
    assert!(freed_at.is_some(), "mp2 (500 KB) completed");
}

/// With one slot fewer than the flows, the flow that starts while every slot is taken runs its
/// own congestion control and is counted as unslotted.
#[test]
fn flows_beyond_the_slots_run_their_own_algorithms() {
    let mut env = HostEnv::new(spec(HOST, serde_json::json!({"max_flows": 2})), 1).unwrap();
    for _ in 0..15 {
        env.step(&[0.0, 0.0]);
    }
    assert_eq!(names(&env), [Some("mp1"), Some("tcp")]);
    assert_eq!(env.sim().connection(2).unwrap().cc_name(), "cubic");
    assert_eq!(terms(&env)[HostTerm::Unslotted as usize], 1.0);
}

/// A window action of +1 (rotation: the target's subflows) adds exactly `cwnd_step` segments to
/// each subflow's window on a lossless path: the external controller holds it otherwise.
#[test]
fn window_actions_set_the_target_flows_windows_exactly() {
    let mut env = HostEnv::new(spec(HOST, serde_json::json!({"cwnd_step": 3.0})), 1).unwrap();
    for _ in 0..5 {
        env.step(&[0.0, 0.0]);
    }
    let c = |env: &HostEnv| {
        let c = env.sim().connection(0).unwrap();
        [c.subflow_info(0).cwnd, c.subflow_info(1).cwnd]
    };
    // A segment of the multipath flow: 1,448 less the DSS option (linux profile).
    let mss = env.sim().connection(0).unwrap().mss() as u64;
    assert_eq!(mss, 1424);
    let before = c(&env);
    assert_eq!(targets(&env), [0]);
    env.step(&[1.0, -0.5]);
    let after = c(&env);
    assert_eq!(after[0], before[0] + 3 * mss);
    assert_eq!(after[1], (before[1] as f64 - 1.5 * mss as f64).max(2.0 * mss as f64) as u64);
    // The step's `prev_share` features show the action applied to flow slot 0.
    let l = env.spec.layout();
    let o = obs(&env);
    let base = l.frame(l.history - 1);
    assert_eq!(o[base + l.subflow(0, 0, S::PrevShare)], 1.0);
    assert_eq!(o[base + l.subflow(0, 1, S::PrevShare)], -0.5);
}

/// `target = "all"`: one row per flow slot, every controlled flow set at once, TCP untouched.
#[test]
fn all_target_sets_every_controlled_flow() {
    let mut env = HostEnv::new(spec(HOST, serde_json::json!({"target": "all", "cwnd_step": 2.0})), 1).unwrap();
    for _ in 0..12 {
        env.step(&[0.0; 8]);
    }
    assert_eq!(targets(&env), [0, 2]);
    let w = |env: &HostEnv, f: usize, i: usize| env.sim().connection(f).unwrap().subflow_info(i).cwnd;
    let (a, b, tcp) = (w(&env, 0, 1), w(&env, 2, 0), w(&env, 1, 0));
    let mss = 1424; // 1,448 less the DSS option of a multipath segment (linux profile)
    env.step(&[0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0]);
    assert_eq!(w(&env, 0, 1), a + 2 * mss);
    assert_eq!(w(&env, 2, 0), b + 2 * mss);
    assert_ne!(w(&env, 1, 0), tcp + 2 * mss, "TCP runs CUBIC, the agent's row 1 is ignored");
}

/// Path selection: selecting only subflow 1 of both MPTCP flows stops new data on subflow 0
/// (what it still sends is retransmission of what was in flight), and the subflow mask is the
/// action mask (a TCP flow has one subflow slot usable).
#[test]
fn select_actions_choose_each_flows_subflows() {
    let mut env = HostEnv::new(spec(HOST, serde_json::json!({"action": "select"})), 1).unwrap();
    let l = env.spec.layout();
    for _ in 0..5 {
        env.step(&[1.0; 8]);
    }
    let o = obs(&env);
    let m = l.subflow_mask_offset();
    assert_eq!(&o[m..m + 8], &[1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    let sent0 = |env: &HostEnv| {
        let s = env.sim().connection(0).unwrap().subflow_info(0);
        s.segments_sent - s.segments_retransmitted
    };
    env.step(&[0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    let mut before = sent0(&env);
    for _ in 0..5 {
        env.step(&[0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        let o = obs(&env);
        let base = l.frame(l.history - 1);
        assert!(o[base + l.subflow(0, 1, S::Throughput)] > 0.5, "10 Mbit/s path b carries the flow");
        assert_eq!(sent0(&env), before, "no new segment on the deselected subflow");
        before = sent0(&env);
    }
}

/// New segments (retransmissions excluded) flow `f` has sent on subflow `i`.
fn new_segments(env: &HostEnv, f: usize, i: usize) -> u64 {
    let s = env.sim().connection(f).unwrap().subflow_info(i);
    s.segments_sent - s.segments_retransmitted
}

/// `paths` (MPTCP-RL): one value per path slot shared by both MPTCP flows, set as each flow's
/// path preference under `dmptcp`; TCP keeps its scheduler. Preferring only path b stops new
/// data on mp1's subflow 0; negative, NaN and infinite values count as 0; a flow whose
/// positively valued paths are none usable (mp2: its join on b waits behind full queues) gets
/// no preference, and neither does a row with nothing positive (dmptcp's own order: both
/// subflows again). The queues fill because every flow's CUBIC runs without HyStart here
/// (`hystart = false`): with it, slow start ends before the queues fill and mp2's join would
/// complete in time.
#[test]
fn paths_actions_set_every_controlled_flows_path_preference() {
    let scenario = HOST.replace("[[flows]]\n", "[[flows]]\ncc = \"cubic:hystart=false\"\n");
    assert_eq!(scenario.matches("hystart=false").count(), 3);
    let mut env = HostEnv::new(spec(&scenario, serde_json::json!({"action": "paths"})), 1).unwrap();
    assert_eq!(env.spec.action_len(), 2);
    let sched = |env: &HostEnv, f: usize| env.sim().connection(f).unwrap().scheduler_name();
    for _ in 0..14 {
        env.step(&[1.0, 1.0]);
    }
    // Flow 1 (TCP) keeps the linux profile's default scheduler, the upstream kernel's.
    assert_eq!((sched(&env, 0), sched(&env, 1), sched(&env, 2)), ("dmptcp", "upstream", "dmptcp"));
    assert_eq!(targets(&env), [0, 2], "the controlled, running flows");
    let pref = |env: &HostEnv, f: usize| env.sim().connection(f).unwrap().path_preference().map(<[f32]>::to_vec);
    assert!(env.sim().subflow_usable(0, 1) && !env.sim().subflow_usable(2, 1));
    env.step(&[f32::INFINITY, 0.5]);
    assert_eq!((pref(&env, 0), pref(&env, 1), pref(&env, 2)), (Some(vec![0.0, 0.5]), None, None));
    let (a_before, b_before) = (new_segments(&env, 0, 0), new_segments(&env, 0, 1));
    for _ in 0..3 {
        env.step(&[-1.0, 0.5]);
        assert_eq!(new_segments(&env, 0, 0), a_before, "path a gets no new data from mp1");
    }
    assert!(new_segments(&env, 0, 1) > b_before + 100, "path b carries mp1");
    env.step(&[f32::NAN, -2.0]);
    assert_eq!(pref(&env, 0), None, "nothing positive: no preference");
    for _ in 0..3 {
        env.step(&[f32::NAN, -2.0]);
    }
    assert!(new_segments(&env, 0, 0) > a_before, "mp1 uses path a again");
}

/// `control = "none"`: every flow keeps its scenario's algorithms and actions are ignored (the
/// run is the plain simulation), while the flows are observed.
#[test]
fn control_none_observes_the_scenarios_own_schedulers() {
    let mut env = HostEnv::new(spec(HOST, serde_json::json!({"action": "paths", "control": "none"})), 1).unwrap();
    for _ in 0..20 {
        env.step(&[0.0, 1.0]);
    }
    // The scenario names no scheduler: the linux profile's default, the upstream kernel's.
    assert_eq!(env.sim().connection(0).unwrap().scheduler_name(), "upstream");
    assert_eq!(env.sim().connection(2).unwrap().scheduler_name(), "upstream");
    assert_eq!(targets(&env), [] as [usize; 0], "no flow is the agent's");
    assert!(new_segments(&env, 0, 0) > 0 && new_segments(&env, 0, 1) > 0);
}

/// A `paths` env over flows whose scenario names a host path policy as their scheduler takes
/// them from it: the env's preference holds (not the policy's constant (0, 1)), and the
/// controller left without flows is gone (no `policies` row).
#[test]
fn a_paths_env_takes_its_flows_from_a_host_path_policy() {
    let dir = std::env::temp_dir().join(format!("mpsched-env-paths-policy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let layout = mpsched_transport::observe::HostLayout { max_flows: 4, max_subflows: 2, history: 1 };
    let obs = serde_json::json!({"env": "host", "action": "paths", "interval": 100.0, "max_flows": 4,
        "max_subflows": 2, "history": 1, "sender_only": true});
    let path = super::policy_sched::constant_policy(&dir, "pref-b", layout.size(), &[0.0, 1.0], obs);
    let scenario =
        HOST.replace("paths = [\"a\", \"b\"]", &format!("paths = [\"a\", \"b\"]\nscheduler = \"policy:{path}\""));
    assert_eq!(scenario.matches("policy:").count(), 2);
    let mut env = HostEnv::new(spec(&scenario, serde_json::json!({"action": "paths"})), 1).unwrap();
    for _ in 0..15 {
        env.step(&[1.0, 0.0]);
    }
    let pref = |f: usize| env.sim().connection(f).unwrap().path_preference().map(<[f32]>::to_vec);
    assert_eq!((pref(0), pref(2)), (Some(vec![1.0, 0.0]), Some(vec![1.0, 0.0])));
    let s: serde_json::Value = serde_json::from_str(&env.output().summary_json).unwrap();
    assert!(s.get("policies").is_none_or(|p| p.as_array().is_some_and(|a| a.is_empty())), "{s}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Flow and subflow features are the simulation's state at their named offsets.
#[test]
fn features_sit_at_their_named_offsets() {
    let mut env = HostEnv::new(spec(HOST, serde_json::json!({"history": 2})), 1).unwrap();
    let mut mean = 0.0;
    for _ in 0..20 {
        env.step(&[0.0, 0.0]);
        mean += terms(&env)[HostTerm::GoodputMbps as usize] / 20.0;
    }
    let l = env.spec.layout();
    let (o, t) = (obs(&env), terms(&env));
    let base = l.frame(1);
    let k = HOST_TERMS.len();
    for (j, f) in [(0usize, 0usize), (1, 1), (2, 2)] {
        let c = env.sim().connection(f).unwrap();
        let at = |g: Fl| o[base + l.flow(j, g)];
        assert_eq!(at(Fl::Multipath), [1.0, 0.0, 1.0][j]);
        assert_eq!(at(Fl::Subflows), c.subflow_count() as f32);
        assert_eq!(at(Fl::Goodput), (t[k + j] / 10.0) as f32);
        for i in 0..c.subflow_count() {
            let s = c.subflow_info(i);
            let sat = |g: S| o[base + l.subflow(j, i, g)];
            assert_eq!(sat(S::Srtt), (s.srtt.0 as f64 / 1e8) as f32);
            assert_eq!(sat(S::Rttvar), (s.rttvar.0 as f64 / 1e8) as f32);
            assert_eq!(sat(S::Cwnd), (s.cwnd as f64 / c.mss() as f64 / 100.0) as f32);
            assert_eq!(sat(S::Inflight), (s.pipe as f64 / c.mss() as f64 / 100.0) as f32);
            assert_eq!(sat(S::EnergyJ), 0.0, "no energy model");
        }
    }
    // Empty slot 3 and the second subflow slot of the TCP flow are zeros.
    assert!(o[base + l.flow_slot(3)..base + l.flow_slot(4)].iter().all(|&x| x == 0.0));
    assert!(o[base + l.subflow_slot(1, 1)..base + l.flow_slot(2)].iter().all(|&x| x == 0.0));
    let goodput: f64 = (0..4).map(|j| t[k + j]).sum();
    assert!((t[HostTerm::GoodputMbps as usize] - goodput).abs() < 1e-9);
    assert!(mean > 10.0 && mean <= 20.0, "mean goodput {mean} Mbit/s over 2 s, two 10 Mbit/s paths");
    assert_eq!(t[HostTerm::CapacityMbps as usize], 20.0);
    assert_eq!(t[HostTerm::Flows as usize], 3.0);
}

/// WiFi + LTE with promotion and tail states; one 500 KB download at 0.2 s; run to the end.
const RADIO: &str = r#"
[sim]
duration_s = 4
seed = 1
energy_states = true
stop_when_done = false
[[paths]]
name = "wifi"
interface = "wifi"
rate_mbps = 10
delay_ms = 20
[[paths]]
name = "lte"
interface = "lte"
rate_mbps = 10
delay_ms = 40
[[flows]]
name = "dl"
paths = ["wifi", "lte"]
start_s = 0.2
size_bytes = 500000
"#;

/// WiFi + LTE with promotion and tail states, one 500 KB download at 0.2 s, intervals equal to
/// the sample interval, run to the end: the env charges the subflows every joule the run's summary gives the
/// interfaces outside idle (active, promotion, tail), tail included after the download ended.
#[test]
fn energy_includes_promotion_and_tail() {
    let mut env = HostEnv::new(spec(RADIO, serde_json::json!({})), 1).unwrap();
    let (mut total, mut after_done) = (0.0, 0.0);
    loop {
        let st = env.step(&[0.0, 0.0]);
        let t = terms(&env);
        total += t[HostTerm::EnergyJ as usize];
        if env.sim().flow_done(0) && t[HostTerm::GoodputMbps as usize] == 0.0 {
            after_done += t[HostTerm::EnergyJ as usize];
        }
        if !env.sim().flow_done(0) {
            // While the flow runs, its subflows' features add up to the term.
            let l = env.spec.layout();
            let o = obs(&env);
            let sub_j: f64 = (0..2).map(|i| o[l.frame(0) + l.subflow(0, i, S::EnergyJ)] as f64).sum();
            assert!((sub_j - t[HostTerm::EnergyJ as usize]).abs() < 1e-6, "{sub_j} vs {t:?}");
        }
        if st.terminated || st.truncated {
            break;
        }
    }
    let out = env.output();
    let want = charged_j(&out);
    assert!((total - want).abs() < 1e-6 * want, "env {total} J vs summary {want} J");
    // LTE's tail (11.6 s at 1.06 W) outlasts the run: > 2 s of it after the download.
    assert!(after_done > 2.0, "tail charged after the download: {after_done} J");
}

/// The interfaces' energy outside idle in a run's summary (J).
fn charged_j(out: &mpsched_sim::RunOutput) -> f64 {
    let summary: serde_json::Value = serde_json::from_str(&out.summary_json).unwrap();
    let ifaces = summary["interfaces"].as_array().unwrap();
    let j = |i: &serde_json::Value, k: &str| i[k].as_f64().unwrap();
    ifaces.iter().map(|i| j(i, "active_j") + j(i, "promotion_j") + j(i, "tail_j")).sum()
}

/// The flow env's `energy_j` term has the same model (it used to charge active power only):
/// with an interface that costs nothing but a 1 J promotion (0.5 s at 2 W), the first interval
/// with traffic is charged exactly 1 J, and the download nothing more while it keeps the
/// interface busy.
#[test]
fn flow_env_energy_includes_promotion() {
    let scenario = r#"
    [sim]
    duration_s = 3
    [[paths]]
    name = "a"
    rate_mbps = 10
    delay_ms = 20
    queue_bytes = 1000000
    energy = { alpha_up = 0, alpha_down = 0, beta = 0, promotion_s = 0.5, promotion_mw = 2000 }
    [[flows]]
    name = "dl"
    paths = ["a"]
    start_s = 0.2
    size_bytes = 300000
    scheduler = "external-weights"
    decision_interval_ms = 100
    "#;
    let v = serde_json::json!({
        "scenario": scenario, "source": "<t>", "format": "toml", "flow": 0, "action": "weights", "max_paths": 1,
    });
    let mut env = mpsched_sim::env::Env::new(mpsched_sim::env::EnvSpec::from_json(&v.to_string()).unwrap(), 1).unwrap();
    let mut t = vec![0.0; env.spec.terms_len()];
    let mut energy = Vec::new();
    // The reset's observation covers the run up to the first boundary (0.3 s).
    env.write_terms(&mut t);
    energy.push(t[mpsched_sim::env::Term::EnergyJ as usize]);
    loop {
        let st = env.step(&[1.0]);
        env.write_terms(&mut t);
        energy.push(t[mpsched_sim::env::Term::EnergyJ as usize]);
        if st.terminated || st.truncated {
            break;
        }
    }
    assert!(energy.len() > 2, "{energy:?}");
    assert_eq!(energy[0], 1.0);
    assert!(energy[1..].iter().all(|&e| e == 0.0), "{energy:?}");
}

/// Same spec and seed, same actions: identical observations and terms.
#[test]
fn host_env_is_deterministic() {
    let run = || {
        let mut env = HostEnv::new(spec(HOST, serde_json::json!({"action": "weights"})), 7).unwrap();
        let mut out = Vec::new();
        for k in 0..30 {
            let a: Vec<f32> = (0..8).map(|i| ((k * 7 + i * 3) % 5) as f32 / 4.0).collect();
            env.step(&a);
            out.extend(obs(&env));
            out.extend(terms(&env).iter().map(|&x| x as f32));
        }
        out
    };
    assert_eq!(run(), run());
}

/// The vector env takes host specs (`"kind": "host"`) and its results do not depend on threads.
#[test]
fn vector_env_steps_host_envs_identically_on_any_thread_count() {
    let v = serde_json::json!({
        "kind": "host", "scenario": HOST, "source": "<t>", "format": "toml", "action": "cwnd",
        "target": "all", "interval_ms": 100, "max_flows": 4, "max_subflows": 2,
    });
    let run = |threads| {
        let spec = AnySpec::from_json(&v.to_string()).unwrap();
        let (d, a, t) = (spec.obs_len(), spec.action_len(), spec.terms_len());
        let mut venv = VecEnv::new(spec, 3, 5, threads).unwrap();
        let (mut obs, mut terms) = (vec![0.0f32; 3 * d], vec![0.0; 3 * t]);
        let (mut te, mut tr) = (vec![false; 3], vec![false; 3]);
        venv.reset(None, &mut obs).unwrap();
        let acts: Vec<f32> = (0..3 * a).map(|i| (i % 3) as f32 - 1.0).collect();
        for _ in 0..20 {
            let out = VecOut { obs: &mut obs, terms: &mut terms, terminated: &mut te, truncated: &mut tr };
            venv.step(&acts, out).unwrap();
        }
        (obs, terms)
    };
    assert_eq!(run(1), run(2));
    let bad = AnySpec::from_json(r#"{"kind": "hosts"}"#).unwrap_err().0;
    assert_eq!(bad, r#"env spec: kind: expected "host" or none, got "hosts""#);
}
