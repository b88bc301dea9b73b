//! Recording an interval: the controlled flow's counters since the last boundary become the
//! newest frame of the observation (features in [`super::features`] order) and the reward
//! terms ([`Term`]).

use mpsched_transport::observe::flow_sums;
use mpsched_transport::observe::sample::{
    delta, delta_f, fill, jitter_ns, shift_frames, shift_rates, ConnSample, SubSnap, SubflowDelta, SubflowSample,
};
use mpsched_transport::SubflowInfo;

use super::energy::EnergyMeter;
use super::features::{ConnFeature, FlowFeature, SubflowFeature};
use super::terms::{Term, TERMS};
use super::{Env, MBPS};
use crate::sim::Sim;

/// Cumulative counters of a flow at the last boundary.
#[derive(Clone, Debug, Default)]
pub(super) struct FlowSnap {
    pub(super) subs: Vec<SubSnap>,
    pub(super) delivered: u64,
    ooo_byte_s: f64,
    full_s: f64,
    blocked_s: f64,
    redundant: u64,
}

/// Sums over the controlled flow's subflows in one interval.
#[derive(Default)]
pub(super) struct Interval {
    /// Length rates are computed over (s): the real length, at least the nominal interval.
    pub(super) dt: f64,
    /// Real length of the interval (s).
    pub(super) real: f64,
    pub(super) sent: u64,
    pub(super) recv: u64,
    pub(super) pipe: u64,
    pub(super) peer_wnd: u64,
    pub(super) energy_j: f64,
    /// Sums of smoothed RTTs and of their changes (ms) over established subflows.
    pub(super) delay_sum: f64,
    pub(super) jitter_sum: f64,
    pub(super) n_est: usize,
    /// Segments detected lost and segments sent.
    pub(super) seg_lost: u64,
    pub(super) seg_sent: u64,
    /// Receiver-side throughput per subflow slot (Mbit/s).
    pub(super) sub_tput: [f64; 8],
    /// Bytes delivered to the receiving application.
    pub(super) delivered: u64,
}

impl Interval {
    /// Adds one subflow's interval to the sums.
    pub(super) fn add(&mut self, s: &SubflowInfo, d: &SubflowDelta) {
        self.sent += d.sent;
        self.recv += d.recv;
        self.seg_lost += d.seg_lost;
        self.seg_sent += d.seg_sent;
        self.pipe += s.pipe;
        self.peer_wnd = self.peer_wnd.max(s.peer_wnd);
        if s.established && s.srtt.0 > 0 {
            self.delay_sum += s.srtt.0 as f64 / 1e6;
            self.jitter_sum += jitter_ns(s, d) / 1e6;
            self.n_est += 1;
        }
    }

    /// Megabits per second of `bytes` over the interval.
    pub(super) fn mbps(&self, bytes: u64) -> f64 {
        bytes as f64 * 8.0 / self.dt / MBPS
    }
}

/// Where one flow's subflow slots go: its slots of the newest frame (contiguous, one
/// [`SubflowFeature`] group each), its delivery-rate history (newest last) and the previous
/// action per slot.
pub(super) struct SlotOut<'a> {
    pub(super) frame: &'a mut [f32],
    pub(super) rates: &'a mut [[u64; 8]],
    pub(super) prev: &'a [f32],
}

/// Records flow `f`'s subflows over the interval: advances `snap`, adds every subflow to `iv`
/// (its energy from `meter`, its received throughput in `iv.sub_tput`) and writes the
/// features of the subflows that have a slot into `out`.
pub(super) fn record_flow_subflows(
    sim: &Sim,
    f: usize,
    snap: &mut FlowSnap,
    meter: &EnergyMeter,
    iv: &mut Interval,
    out: SlotOut<'_>,
) {
    let Some(c) = sim.connection(f) else { return };
    let rx = sim.receiver(f);
    let mss = c.mss().max(1) as f64;
    let slots = (out.frame.len() / SubflowFeature::COUNT).min(8);
    snap.subs.resize(c.subflow_count(), SubSnap::default());
    for i in 0..c.subflow_count() {
        let s = c.subflow_info(i);
        let received = rx.filter(|r| i < r.subflow_count()).map_or(0, |r| r.subflow_info(i).bytes_received);
        let d = snap.subs[i].advance(&s, received);
        iv.add(&s, &d);
        let energy_j = meter.subflow_j(f, i);
        iv.energy_j += energy_j;
        if i >= slots {
            continue;
        }
        iv.sub_tput[i] = iv.mbps(d.recv);
        out.rates.last_mut().unwrap()[i] = s.delivery_rate;
        let max_rate = out.rates.iter().map(|r| r[i]).max().unwrap_or(0) as f64 * 8.0 / MBPS;
        let x = SubflowSample {
            s: &s,
            d: &d,
            mss,
            dt: iv.dt,
            tput: iv.mbps(d.sent),
            max_rate,
            prev_share: out.prev[i],
            energy_j,
        };
        let o = i * SubflowFeature::COUNT;
        fill(&mut out.frame[o..o + SubflowFeature::COUNT], |g| x.value(g));
    }
}

impl Env {
    /// Writes the interval that just ended into the newest frame and the terms.
    pub(super) fn record(&mut self) {
        let (real, dt) = self.begin_interval();
        let base = self.spec.layout().frame(self.spec.history - 1);
        let mut iv = Interval { dt, real, ..Interval::default() };
        if self.sim.connection(self.spec.flow).is_some() {
            self.record_subflows(base, &mut iv);
            self.record_connection(base, &mut iv);
        }
        self.record_interval_terms(&iv);
        self.record_flows(base, dt, iv.delivered, iv.sent);
    }

    /// Closes the interval: shifts the history (dropping the oldest frame), clears the newest
    /// frame, the newest delivery-rate samples and the terms. Returns the interval's real length
    /// and the length rates are computed over (s): the real one, but at least the nominal
    /// interval, so that a last, partial interval (the run's end or the flow's completion just
    /// after a boundary) does not turn a few bytes into a huge rate.
    fn begin_interval(&mut self) -> (f64, f64) {
        let now = self.sim.now_ns();
        let real_ns = now.saturating_sub(self.last_boundary);
        let dt_ns = real_ns.max(self.interval_ns).max(1);
        self.last_boundary = now;
        self.meter.interval(&self.sim, real_ns);
        shift_frames(&mut self.frames, self.spec.frame_len());
        shift_rates(&mut self.rates);
        self.terms.iter_mut().for_each(|x| *x = 0.0);
        (real_ns as f64 / 1e9, dt_ns as f64 / 1e9)
    }

    /// The controlled flow's subflow slots of the newest frame (at `base`), and its subflows'
    /// sums in `iv`.
    fn record_subflows(&mut self, base: usize, iv: &mut Interval) {
        let n = self.spec.max_paths;
        let o = base + self.spec.layout().subflow_slot(0);
        let out = SlotOut {
            frame: &mut self.frames[o..o + n * SubflowFeature::COUNT],
            rates: &mut self.rates,
            prev: &self.prev_action[..n],
        };
        let f = self.spec.flow;
        record_flow_subflows(&self.sim, f, &mut self.snaps[f], &self.meter, iv, out);
    }

    /// The controlled connection's features of the newest frame (at `base`) and its terms.
    fn record_connection(&mut self, base: usize, iv: &mut Interval) {
        let f = self.spec.flow;
        let Some(c) = self.sim.connection(f) else { return };
        let ci = c.info();
        let ri = self.sim.receiver(f).map(|r| r.info()).unwrap_or_default();
        let snap = &mut self.snaps[f];
        let delivered = delta(ri.bytes_delivered, snap.delivered);
        let ooo_s = delta_f(ri.ooo_byte_seconds, snap.ooo_byte_s);
        let full_s = delta_f(ri.rwnd_full_seconds, snap.full_s);
        let blocked_s = delta_f(ci.send_blocked_seconds, snap.blocked_s);
        let redundant = delta(ci.redundant_bytes, snap.redundant);
        snap.delivered = ri.bytes_delivered;
        snap.ooo_byte_s = ri.ooo_byte_seconds;
        snap.full_s = ri.rwnd_full_seconds;
        snap.blocked_s = ci.send_blocked_seconds;
        snap.redundant = ci.redundant_bytes;
        iv.delivered = delivered;
        let dt = iv.dt;
        let x = ConnSample {
            peer_wnd: iv.peer_wnd,
            pipe: iv.pipe,
            rcv_buf: self.rcv_buf(),
            dt,
            ooo_s,
            full_s,
            blocked_s,
            goodput: iv.mbps(delivered),
            prev_mode: self.prev_mode,
        };
        let o = base + self.spec.layout().conn_offset();
        fill(&mut self.frames[o..o + ConnFeature::COUNT], |f| x.value(f));
        let t = &mut self.terms;
        t[Term::GoodputMbps as usize] = x.goodput;
        t[Term::OooBytes as usize] = ooo_s / dt;
        t[Term::BufferFullS as usize] = full_s;
        t[Term::RedundantMbps as usize] = iv.mbps(redundant);
    }

    /// The controlled flow's receive buffer (bytes, at least 1).
    fn rcv_buf(&self) -> f64 {
        self.sim.scenario().flows[self.spec.flow].rcv_buf.max(1) as f64
    }

    /// The terms of the controlled flow's subflow sums, and its per-subflow throughputs.
    fn record_interval_terms(&mut self, iv: &Interval) {
        let f = self.spec.flow;
        let rcv_buf = self.rcv_buf();
        let avg = |sum: f64| if iv.n_est > 0 { sum / iv.n_est as f64 } else { 0.0 };
        let t = &mut self.terms;
        t[Term::IntervalS as usize] = iv.real;
        t[Term::RecvTputMbps as usize] = iv.mbps(iv.recv);
        t[Term::SendTputMbps as usize] = iv.mbps(iv.sent);
        t[Term::BufferBytes as usize] = rcv_buf;
        t[Term::EnergyJ as usize] = iv.energy_j;
        t[Term::PowerW as usize] = iv.energy_j / iv.dt;
        t[Term::DelayMs as usize] = avg(iv.delay_sum);
        t[Term::JitterMs as usize] = avg(iv.jitter_sum);
        t[Term::CapacityMbps as usize] = self.capacity_mbps;
        t[Term::Done as usize] = f64::from(u8::from(self.sim.flow_done(f)));
        t[Term::Subflows as usize] = self.sim.connection(f).map_or(0, |c| c.subflow_count()) as f64;
        let (k, n) = (TERMS.len(), self.spec.max_paths);
        t[k..k + n].copy_from_slice(&iv.sub_tput[..n]);
    }

    /// Per-flow goodput terms (all envs) and the host view of congestion-control envs. The
    /// controlled flow's counters were already advanced by `record`, which passes its interval's
    /// delivered and sent bytes.
    fn record_flows(&mut self, base: usize, dt: f64, target_delivered: u64, target_sent: u64) {
        let spec = &self.spec;
        let sc = self.sim.scenario();
        let nflows = sc.flows.len().min(spec.max_flows);
        let k = TERMS.len() + spec.max_paths;
        let layout = spec.layout();
        for j in 0..nflows {
            let (Some(c), Some(r)) = (self.sim.connection(j), self.sim.receiver(j)) else { continue };
            let active = !self.sim.flow_done(j);
            let delivered_now = r.info().bytes_delivered;
            let snap = &mut self.snaps[j];
            let target = j == spec.flow;
            let delivered = if target {
                target_delivered
            } else {
                let d = delta(delivered_now, snap.delivered);
                snap.delivered = delivered_now;
                d
            };
            let goodput = delivered as f64 * 8.0 / dt / MBPS;
            self.terms[k + j] = goodput;
            self.terms[k + spec.max_flows + j] = f64::from(u8::from(active));
            if !spec.host_view() {
                continue;
            }
            let mut x = flow_sums(c, &mut snap.subs, !target);
            if target {
                x.sent = target_sent;
            }
            (x.goodput, x.mss, x.dt, x.target) = (goodput, c.mss().max(1) as f64, dt, target);
            x.multipath = sc.flows[j].paths.len() > 1;
            let o = base + layout.flow_slot(j);
            fill(&mut self.frames[o..o + FlowFeature::COUNT], |f| x.value(f));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::features::{ConnFeature as C, FlowFeature as Fl, SubflowFeature as S};
    use super::super::{Env, EnvSpec};
    use super::*;

    /// Two 10 Mbit/s paths (10 and 30 ms) carrying a greedy MPTCP flow, and a TCP flow on the
    /// first path, for 3 s.
    fn env(action: &str, extra: &str) -> Env {
        env_for(3.0, action, extra)
    }

    fn env_for(duration_s: f64, action: &str, extra: &str) -> Env {
        let scenario = format!(
            r#"
            [sim]
            duration_s = {duration_s}
            seed = 1
            [[paths]]
            name = "a"
            rate_mbps = 10
            delay_ms = 10
            [[paths]]
            name = "b"
            rate_mbps = 10
            delay_ms = 30
            [[flows]]
            name = "mp"
            paths = ["a", "b"]
            decision_interval_ms = 50
            {extra}
            [[flows]]
            name = "tcp"
            path = "a"
            "#
        );
        let v = serde_json::json!({
            "scenario": scenario, "source": "<test>", "format": "toml", "flow": 0, "action": action,
            "max_paths": 3, "history": 2, "max_flows": 3,
        });
        Env::new(EnvSpec::from_json(&v.to_string()).unwrap(), 1).unwrap()
    }

    fn observe(env: &Env) -> (Vec<f32>, Vec<f64>) {
        let mut obs = vec![0.0; env.spec.obs_len()];
        let mut terms = vec![0.0; env.spec.terms_len()];
        env.observe(&mut obs);
        env.write_terms(&mut terms);
        (obs, terms)
    }

    #[test]
    fn fill_writes_every_feature_once_in_enum_order() {
        let mut row = [f32::NAN; S::COUNT];
        let seen = std::cell::RefCell::new(Vec::new());
        fill(&mut row, |f: S| {
            seen.borrow_mut().push(f);
            f as usize as f32
        });
        assert_eq!(seen.into_inner(), S::ALL);
        assert!(row.iter().enumerate().all(|(i, &x)| x == i as f32));
    }

    /// Each subflow and connection feature, read at its layout offset by name, is the value
    /// its definition gives from the simulation's state.
    #[test]
    fn recorder_writes_each_feature_at_its_named_offset() {
        let mut env = env("weights", r#"scheduler = "external-weights""#);
        for _ in 0..20 {
            env.step(&[0.25, 0.75, 0.0]);
        }
        let (obs, terms) = observe(&env);
        let lay = env.spec.layout();
        let t0 = lay.frame(lay.history - 1);
        let c = env.sim().connection(0).unwrap();
        let mss = env.sim().connection(0).unwrap().mss().max(1) as f64;
        let (mut tput, mut goodput) = (0.0, 0.0);
        for i in 0..2 {
            let s = c.subflow_info(i);
            let at = |f: S| obs[t0 + lay.subflow(i, f)];
            assert_eq!(at(S::Srtt), (s.srtt.0 as f64 / 1e8) as f32);
            assert_eq!(at(S::Rttvar), (s.rttvar.0 as f64 / 1e8) as f32);
            assert_eq!(at(S::Rto), (s.rto.0 as f64 / 1e8) as f32);
            assert_eq!(at(S::Cwnd), (s.cwnd as f64 / mss / 100.0) as f32);
            assert_eq!(at(S::Inflight), (s.pipe as f64 / mss / 100.0) as f32);
            assert_eq!(at(S::DeliveryRate), (s.delivery_rate as f64 * 8.0 / MBPS / 10.0) as f32);
            assert_eq!(at(S::PrevShare), [0.25, 0.75][i]);
            assert!((0.0..=1.0).contains(&at(S::Loss)) && at(S::FreeBw) >= 0.0);
            tput += at(S::Throughput) as f64 * 10.0;
            goodput += at(S::Goodput) as f64;
        }
        assert!(goodput > 0.0);
        assert!((tput - terms[Term::SendTputMbps as usize]).abs() < 1e-3, "{tput} vs {terms:?}");
        assert!(obs[t0 + lay.subflow_slot(2)..t0 + lay.subflow_slot(3)].iter().all(|&x| x == 0.0));
        let at = |f: C| obs[t0 + lay.conn(f)];
        assert_eq!(at(C::Interval), (terms[Term::IntervalS as usize] * 10.0) as f32);
        assert_eq!(at(C::Goodput), (terms[Term::GoodputMbps as usize] / 10.0) as f32);
        assert_eq!(
            at(C::BufferFull),
            (terms[Term::BufferFullS as usize] / terms[Term::IntervalS as usize]).min(1.0) as f32
        );
        let rcv_buf = terms[Term::BufferBytes as usize];
        assert_eq!(at(C::Ooo), (terms[Term::OooBytes as usize] / rcv_buf) as f32);
        let pipe: u64 = (0..2).map(|i| c.subflow_info(i).pipe).sum();
        assert_eq!(at(C::Inflight), (pipe as f64 / rcv_buf) as f32);
        let wnd = (0..2).map(|i| c.subflow_info(i).peer_wnd).max().unwrap();
        assert_eq!(at(C::RcvWindow), (wnd as f64 / rcv_buf) as f32);
        assert_eq!(at(C::PrevMode), 0.0);
        assert!((0.0..=1.0).contains(&at(C::SendBlocked)));
    }

    /// The host view: one slot per flow, the controlled flow flagged, windows summed.
    #[test]
    fn recorder_writes_each_flow_feature_at_its_named_offset() {
        let mut env = env("cwnd", r#"cc = "external""#);
        for _ in 0..10 {
            env.step(&[0.0, 0.0, 0.0]);
        }
        let (obs, terms) = observe(&env);
        let lay = env.spec.layout();
        assert_eq!(lay.max_flows, 3);
        let t0 = lay.frame(lay.history - 1);
        let k = TERMS.len() + lay.max_paths;
        for j in 0..2 {
            let c = env.sim().connection(j).unwrap();
            let mss = env.sim().connection(j).unwrap().mss() as f64;
            let at = |f: Fl| obs[t0 + lay.flow(j, f)];
            assert_eq!(at(Fl::Target), [1.0, 0.0][j]);
            let cwnd: u64 = c.subflows().map(|(_, s)| s.cwnd).sum();
            assert_eq!(at(Fl::Cwnd), (cwnd as f64 / mss / 100.0) as f32);
            assert_eq!(at(Fl::Goodput), (terms[k + j] / 10.0) as f32);
            assert!(at(Fl::Srtt) > 0.0 && at(Fl::Rttvar) >= 0.0 && at(Fl::SendRate) > 0.0);
        }
        assert!(obs[t0 + lay.flow_slot(2)..t0 + lay.frame_len()].iter().all(|&x| x == 0.0));
    }

    /// Steps an env with `action` to the episode's end; the terms of every step.
    fn episode(env: &mut Env, action: &[f32]) -> (Vec<Vec<f64>>, super::super::StepStatus) {
        let mut out = Vec::new();
        loop {
            let st = env.step(action);
            out.push(observe(env).1);
            if st.terminated || st.truncated {
                return (out, st);
            }
            assert!(out.len() < 10_000);
        }
    }

    /// With 50 ms intervals over 3 s the step that reaches 3.000 s is the last one: 59 steps
    /// after the reset's first observation, each exactly 50 ms long. (There used to be a 60th
    /// step over an empty interval, clamped to 1 ns, where one segment read as terabits per
    /// second.)
    #[test]
    fn episode_ends_at_the_last_boundary() {
        let mut env = env_for(3.0, "mode", r#"scheduler = "external""#);
        let (steps, st) = episode(&mut env, &[0.0]);
        assert_eq!((steps.len(), st.truncated, st.terminated), (59, true, false));
        assert!(steps.iter().all(|t| t[Term::IntervalS as usize] == 0.05));
        assert_eq!(env.sim().now_ns(), 3_000_000_000);
    }

    /// A run that ends 20 ms into an interval: the last step is 20 ms long, and its goodput is
    /// the bytes delivered in it over the nominal 50 ms, not over the 20 ms (nor over 1 ns).
    #[test]
    fn a_partial_last_interval_is_measured_over_the_nominal_length() {
        let mut env = env_for(3.02, "mode", r#"scheduler = "external""#);
        let delivered = |env: &Env| env.sim().receiver(0).unwrap().info().bytes_delivered;
        loop {
            let before = delivered(&env);
            let st = env.step(&[0.0]);
            let (_, t) = observe(&env);
            if !(st.terminated || st.truncated) {
                assert_eq!(t[Term::IntervalS as usize], 0.05);
                continue;
            }
            assert!(st.truncated);
            assert!((t[Term::IntervalS as usize] - 0.02).abs() < 1e-12, "{}", t[Term::IntervalS as usize]);
            let bytes = (delivered(&env) - before) as f64;
            assert!(bytes > 0.0);
            assert!((t[Term::GoodputMbps as usize] - bytes * 8.0 / 0.05 / MBPS).abs() < 1e-9);
            return;
        }
    }
}
