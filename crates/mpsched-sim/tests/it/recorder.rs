//! The sender-side recorder (`mpsched_transport::observe::Recorder`, what a policy deployed as a
//! scheduler observes) sees exactly what the env observes, for every feature a sender can
//! compute: a probe scheduler records at its own 50 ms timer while a minRTT-like connection
//! runs, and an env with the same flow, stepping every 50 ms with the action "normal" (the same
//! sending behaviour), gives the same frames at the same instants; the features a sender cannot
//! compute are 0 in the recorder's frames.

use std::sync::{Arc, Mutex};

use mpsched_sim::env::{Env, EnvSpec};
use mpsched_transport::observe::{sender_computes, Recorder, RecorderConfig};
use mpsched_transport::sched::{SchedStart, SchedView, Scheduler, SubflowSet, Verdict};
use mpsched_transport::{Instant, SchedSpec};

const INTERVAL_NS: u64 = 50_000_000;
const MAX_PATHS: usize = 3;
const HISTORY: usize = 2;

type Log = Arc<Mutex<Vec<(u64, Vec<f32>)>>>;

/// minRTT without opportunistic retransmission (as `external-mode` in normal mode), recording
/// an observation every 50 ms.
struct Probe {
    rec: Option<Recorder>,
    next: Option<Instant>,
    log: Log,
}

impl Scheduler for Probe {
    fn name(&self) -> &'static str {
        "probe"
    }
    fn get_send(&mut self, _now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        v.send_min_rtt(out)
    }
    fn redundant_min_rtt_first(&self) -> bool {
        true
    }
    fn start(&mut self, s: &SchedStart) {
        let cfg = RecorderConfig { max_paths: MAX_PATHS, history: HISTORY, mss: s.mss, rcv_buf: s.rcv_buf };
        self.rec = Some(Recorder::new(cfg, s.now));
        self.next = Some(s.now + mpsched_transport::Duration(INTERVAL_NS));
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.next
    }
    fn handle_timeout(&mut self, now: Instant, v: &SchedView) {
        let rec = self.rec.as_mut().unwrap();
        rec.record(now, v);
        rec.set_interval(INTERVAL_NS);
        let mut obs = vec![0.0; rec.layout().size()];
        rec.observe(v, &mut obs);
        self.log.lock().unwrap().push((now.0, obs));
        self.next = Some(now + mpsched_transport::Duration(INTERVAL_NS));
    }
}

fn scenario(scheduler: &str, extra: &str) -> String {
    format!(
        r#"
        [sim]
        duration_s = 4
        seed = 3
        [[paths]]
        name = "a"
        rate_mbps = 10
        delay_ms = 10
        loss = {{ model = "bernoulli", p = 0.01 }}
        [[paths]]
        name = "b"
        rate_mbps = 6
        delay_ms = 30
        [[events]]
        at_s = 1.5
        path = "b"
        state = "down"
        [[events]]
        at_s = 2.5
        path = "b"
        state = "up"
        [[flows]]
        name = "mp"
        paths = ["a", "b"]
        start_s = 0.2
        scheduler = "{scheduler}"
        {extra}
        [[flows]]
        name = "tcp"
        path = "a"
        "#
    )
}

#[test]
fn the_recorder_sees_what_the_env_sees_for_sender_features() {
    let log: Log = Arc::default();
    let l2 = log.clone();
    SchedSpec::register_plugin(
        "recorder-probe",
        Arc::new(move || Box::new(Probe { rec: None, next: None, log: l2.clone() })),
    )
    .unwrap();
    let sc =
        mpsched_sim::parse_text(&scenario("recorder-probe", ""), "<test>", mpsched_sim::Format::Toml, None).unwrap();
    mpsched_sim::run(sc);
    let probe = log.lock().unwrap().clone();
    assert!(probe.len() > 70, "{} boundaries", probe.len());

    let v = serde_json::json!({
        "scenario": scenario("external-mode", "decision_interval_ms = 50"), "source": "<test>", "format": "toml",
        "flow": 0, "action": "mode", "max_paths": MAX_PATHS, "history": HISTORY,
    });
    let mut env = Env::new(EnvSpec::from_json(&v.to_string()).unwrap(), 3).unwrap();
    let layout = env.spec.layout();
    let mut obs = vec![0.0f32; env.spec.obs_len()];
    let (mut compared, mut nonzero) = (0usize, 0usize);
    for (at, rec) in &probe {
        let st = env.status();
        if st.terminated || st.truncated {
            break;
        }
        assert_eq!(env.sim().now_ns(), *at, "boundaries at the same instants");
        env.observe(&mut obs);
        assert_eq!(rec.len(), obs.len());
        for k in 0..obs.len() {
            let name = mpsched_transport::observe::feature_name(&layout, k);
            if sender_computes(&layout, k).unwrap() {
                assert_eq!(rec[k], obs[k], "{name} at {at} ns");
                nonzero += usize::from(obs[k] != 0.0);
            } else {
                assert_eq!(rec[k], 0.0, "{name}: not a sender feature");
            }
        }
        compared += 1;
        env.step(&[0.0]);
    }
    assert!(compared > 70 && nonzero > 1000, "{compared} frames, {nonzero} non-zero values");
    SchedSpec::unregister_plugin("recorder-probe");
}
