//! PDAA3C (Liang et al., IEICE letter 2022, pdaa3c.txt): the **subflow quality evaluation**
//! Q_t^i of §2.2 (eqs. 4–5) and the actor that chooses among the subflows ranked by it
//! (§2.3 ii–iii, Algorithm 1 lines 6–10).
//!
//! **Quality** (eqs. 4–5, γ = 0.7, η = 0.3, α = 1000 = the packet size; the formula is
//! [`Quality`], defined in `mpsched_transport::sched::quality` so that the external
//! scheduler's `busy = "next"` ranks by it too, and re-exported here):
//!
//! ```text
//! ST = C / (RTT − TT)                      (5)
//! Q  = γ·α·(1 − PLR) / ST + η·ST            (4; Algorithm 1 line 6 writes η·ST for the 2nd term)
//! ```
//!
//! The letter does not give units, and `RTT − TT` subtracts a throughput from a time as
//! printed. Ours (docs/pdaa3c.md): the letter says `α(1 − PLR)/ST` "is the time required for the
//! current subflow i to transmit a packet of size P", so ST is a rate in **bytes/s**: C is the
//! congestion window in bytes, its segments counted as packets of α bytes (the letter's packet
//! size P); RTT is the smoothed RTT in **seconds**; TT enters eq. 5 as the time to put one packet
//! of α bytes on the subflow at its measured throughput (`8α / throughput`, s; 0 when nothing
//! was sent). So the first term is seconds and the second bytes/s, added as the letter adds
//! them: with any real rate the second term dominates (Q ≈ 0.3 · cwnd/RTT), the first only
//! separating otherwise equal subflows. Q = 0 for a subflow without an RTT sample, a window, or
//! with `RTT ≤ TT`.
//!
//! **Actor** (description `"algorithm": "pdaa3c"`, written by `mpsched.agents.pdaa3c`):
//!
//! ```json
//! "net": {"quality": {"gamma": 0.7, "eta": 0.3, "alpha": 1000.0},
//!         "state": ["free_bw", "throughput", "cwnd", "inflight", "loss"],
//!         "actor": ["actor.0", "actor.2", "actor.4"]}
//! ```
//!
//! At each decision the usable subflow slots (the observation's path mask) of the newest frame
//! are sorted by Q, best first (ties: lower slot first): "subflow quality ranking" (§2.3 ii).
//! The actor reads, per rank, the subflow's §2.1 state (`state`, in the observation's units),
//! its Q (in 10 Mbit/s, [`Q_SCALE`]) and a presence flag ([`RANK_INPUTS`] values per rank,
//! zeros past the usable subflows); linear layers with tanh between them give one logit per
//! rank. The action is the usable rank of largest logit, i.e. the subflow of that quality rank:
//! rank 0 is the Q-best subflow (the letter's "optimal subflow", its other actions "the regular"
//! and "the very poor" ones).

use mpsched_transport::observe::features::SubflowFeature;
use mpsched_transport::observe::ObsLayout;
pub use mpsched_transport::sched::quality::Quality;
use serde_json::json;

use crate::checkpoint::Checkpoint;
use crate::net::{linear_stack, Net, Tensors};
use crate::spec::Layout;
use crate::PolicyError;

/// The §2.1 state of a subflow, in the actor's input order: free bandwidth ST, throughput TT,
/// congestion window C, packets on the link TP (the pipe), loss rate PLR.
pub const STATE: [SubflowFeature; 5] = [
    SubflowFeature::FreeBw,
    SubflowFeature::Throughput,
    SubflowFeature::Cwnd,
    SubflowFeature::Inflight,
    SubflowFeature::Loss,
];

/// Actor inputs per quality rank: [`STATE`], Q (scaled by [`Q_SCALE`]), present.
pub const RANK_INPUTS: usize = STATE.len() + 2;

/// Q in the actor's input: bytes/s → 10 Mbit/s (the observation's rate unit).
pub const Q_SCALE: f64 = 8.0 / 1e7;

/// Most subflow slots a PDAA3C policy ranks.
pub const MAX_SLOTS: usize = 8;

/// Q of subflow slot `i` in the newest frame of a scheduler observation (the units of
/// [`SubflowFeature`]: srtt in 100 ms, throughput in 10 Mbit/s, cwnd in 100 segments).
pub fn of_slot(q: &Quality, obs: &[f32], l: &ObsLayout, i: usize) -> f64 {
    let base = l.frame(l.history - 1);
    let v = |f: SubflowFeature| f64::from(obs[base + l.subflow(i, f)]);
    q.q(
        v(SubflowFeature::Srtt) * 0.1,
        v(SubflowFeature::Throughput) * 1e7,
        v(SubflowFeature::Cwnd) * 100.0,
        v(SubflowFeature::Loss),
    )
}

/// Ranks the usable subflow slots of `obs` by Q (best first, ties by slot) into `order`,
/// writes the actor's input `x` (`max_paths × RANK_INPUTS`) and returns the usable count.
pub fn ranked_input(q: &Quality, obs: &[f32], l: &ObsLayout, order: &mut [usize], x: &mut [f32]) -> usize {
    let p = l.max_paths.min(MAX_SLOTS);
    let mut qs = [0.0f64; MAX_SLOTS];
    let mut n = 0;
    for i in 0..p {
        if obs[l.path_mask_offset() + i] > 0.5 {
            qs[i] = of_slot(q, obs, l, i);
            order[n] = i;
            n += 1;
        }
    }
    // Stable sort: equal Q keeps the lower slot first.
    order[..n].sort_by(|&a, &b| qs[b].total_cmp(&qs[a]));
    x.iter_mut().for_each(|v| *v = 0.0);
    let base = l.frame(l.history - 1);
    for (r, &i) in order[..n].iter().enumerate() {
        let row = &mut x[r * RANK_INPUTS..(r + 1) * RANK_INPUTS];
        for (k, f) in STATE.iter().enumerate() {
            row[k] = obs[base + l.subflow(i, *f)];
        }
        row[STATE.len()] = (qs[i] * Q_SCALE) as f32;
        row[STATE.len() + 1] = 1.0;
    }
    n
}

/// A loaded PDAA3C actor with its scratch buffers.
#[derive(Clone, Debug)]
pub struct Pdaa3cNet {
    quality: Quality,
    actor: Net,
    x: Vec<f32>,
    order: [usize; MAX_SLOTS],
}

impl Pdaa3cNet {
    /// The network of a read `"algorithm": "pdaa3c"` checkpoint.
    pub fn from_checkpoint(ck: Checkpoint) -> Result<Pdaa3cNet, PolicyError> {
        let Checkpoint { desc_path: js, weights_path, desc, tensors, .. } = ck;
        let file = js.display().to_string();
        let err = |field: &str, want: &str| PolicyError(format!("{file}: net.{field}: expected {want}"));
        let net = desc.get("net").ok_or_else(|| PolicyError(format!("{file}: net: missing")))?;
        let num = |k: &str| net["quality"][k].as_f64().filter(|v| v.is_finite() && *v >= 0.0);
        let quality = match (num("gamma"), num("eta"), num("alpha")) {
            (Some(gamma), Some(eta), Some(alpha)) if alpha > 0.0 => Quality { gamma, eta, alpha },
            _ => return Err(err("quality", "{\"gamma\", \"eta\", \"alpha\"}: numbers >= 0, alpha > 0")),
        };
        let names: Vec<&str> = STATE.iter().map(|f| f.info().name).collect();
        if net["state"] != json!(names) {
            return Err(err("state", &format!("{names:?}")));
        }
        let max_paths = desc["obs"]["max_paths"].as_u64().unwrap_or(0) as usize;
        if !(1..=MAX_SLOTS).contains(&max_paths) {
            return Err(PolicyError(format!("{file}: obs.max_paths: expected 1..={MAX_SLOTS}")));
        }
        let mut t = Tensors { t: tensors, file: &js };
        let d = linear_stack(&net["actor"], max_paths * RANK_INPUTS, "tanh", None).map_err(|w| err("actor", w))?;
        let actor = Net::build(&d, &mut t)?;
        if let Some(extra) = t.t.keys().next() {
            return Err(PolicyError(format!("{}: unexpected tensor {extra:?}", weights_path.display())));
        }
        Ok(Pdaa3cNet { quality, actor, x: vec![0.0; max_paths * RANK_INPUTS], order: [0; MAX_SLOTS] })
    }

    /// The subflow slot chosen for observation `obs` (slot 0 when no subflow is usable).
    pub fn choose(&mut self, obs: &[f32], l: &ObsLayout) -> usize {
        let n = ranked_input(&self.quality, obs, l, &mut self.order, &mut self.x);
        if n == 0 {
            return 0;
        }
        let logits = self.actor.forward(&self.x);
        let mut best = 0;
        for r in 1..n {
            if logits[r] > logits[best] {
                best = r;
            }
        }
        self.order[best]
    }
}

impl crate::network::Network for Pdaa3cNet {
    fn from_checkpoint(ck: Checkpoint) -> Result<Self, PolicyError> {
        Pdaa3cNet::from_checkpoint(ck)
    }
    fn check_layout(&self, layout: &Layout) -> Result<(), String> {
        let Layout::Sched(l) = layout else {
            return Err("a PDAA3C network schedules one connection: not a host policy (obs.env)".into());
        };
        if l.max_paths * RANK_INPUTS != self.x.len() {
            return Err(format!(
                "the network ranks {} subflows, the policy says {}",
                self.x.len() / RANK_INPUTS,
                l.max_paths
            ));
        }
        Ok(())
    }
    fn reads_input(&self, k: usize, layout: &Layout) -> bool {
        let Layout::Sched(l) = layout else { return true };
        if k >= l.path_mask_offset() {
            return k < l.path_mask_offset() + l.max_paths;
        }
        let base = l.frame(l.history - 1);
        if k < base || k >= base + l.subflow_slot(l.max_paths) {
            return false;
        }
        let f = (k - base - l.subflow_slot(0)) % SubflowFeature::COUNT;
        let quality = [SubflowFeature::Srtt, SubflowFeature::Throughput, SubflowFeature::Cwnd, SubflowFeature::Loss];
        STATE.iter().chain(quality.iter()).any(|s| *s as usize == f)
    }
    fn output_len(&self, _layout: &Layout) -> Option<usize> {
        Some(1)
    }
    fn act(&mut self, obs: &[f32], layout: &Layout, action: &mut [f32]) {
        if let Layout::Sched(l) = layout {
            action[0] = self.choose(obs, l) as f32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Q by hand: docs/pdaa3c.md's example (transport `sched::quality` tests the formula).
    #[test]
    fn quality_is_the_transport_formula() {
        assert!((Quality::default().q(0.060, 8e6, 20.0, 0.01) - 101_694.917).abs() < 1e-3);
    }

    fn layout(p: usize) -> ObsLayout {
        ObsLayout { max_paths: p, history: 2, max_flows: 0 }
    }

    /// One observation: per slot (srtt 100 ms units, throughput 10 Mbit/s units, cwnd 100
    /// segments units, loss, usable) in the newest frame; the older frame holds noise.
    fn obs(l: &ObsLayout, slots: &[(f32, f32, f32, f32, bool)]) -> Vec<f32> {
        let mut o = vec![7.0; l.size()];
        let base = l.frame(1);
        for (i, &(rtt, tput, cwnd, loss, usable)) in slots.iter().enumerate() {
            for f in SubflowFeature::ALL {
                o[base + l.subflow(i, f)] = 0.0;
            }
            o[base + l.subflow(i, SubflowFeature::Srtt)] = rtt;
            o[base + l.subflow(i, SubflowFeature::Throughput)] = tput;
            o[base + l.subflow(i, SubflowFeature::Cwnd)] = cwnd;
            o[base + l.subflow(i, SubflowFeature::Loss)] = loss;
            o[l.path_mask_offset() + i] = if usable { 1.0 } else { 0.0 };
        }
        o
    }

    /// The observation's units: 0.6 → 60 ms, 0.8 → 8 Mbit/s, 0.2 → 20 segments.
    #[test]
    fn quality_from_observation_units() {
        let l = layout(2);
        let o = obs(&l, &[(0.6, 0.8, 0.2, 0.01, true), (0.0, 0.0, 0.0, 0.0, true)]);
        let q = Quality::default();
        assert!((of_slot(&q, &o, &l, 0) - 101_694.917).abs() < 0.05, "{}", of_slot(&q, &o, &l, 0));
        assert_eq!(of_slot(&q, &o, &l, 1), 0.0);
    }

    /// Ranking: usable slots only, best Q first, ties by slot; inputs per rank, zeros after.
    #[test]
    fn ranking_and_inputs() {
        let l = layout(4);
        // RTT 100 ms, nothing sent. Slot 0: 20 segments, ST = 200 000 B/s; slot 1 unusable;
        // slot 2: 40 segments, ST = 400 000 B/s; slot 3 = slot 0 (tie: slot 0 first).
        let s = (1.0, 0.0, 0.2, 0.0, true);
        let o = obs(&l, &[s, (1.0, 0.0, 0.9, 0.0, false), (1.0, 0.0, 0.4, 0.0, true), s]);
        let (mut order, mut x) = ([9usize; MAX_SLOTS], vec![5.0f32; 4 * RANK_INPUTS]);
        let n = ranked_input(&Quality::default(), &o, &l, &mut order, &mut x);
        assert_eq!((n, &order[..3]), (3, &[2usize, 0, 3][..]));
        // Rank 0 = slot 2: cwnd 0.4, Q = (0.7·1000/400 000 + 0.3·400 000)·8e-7 = 0.096000001.
        let r0 = &x[..RANK_INPUTS];
        assert_eq!((r0[2], r0[6]), (0.4, 1.0));
        assert!((f64::from(r0[5]) - 0.096_000_001).abs() < 1e-7, "{}", r0[5]);
        assert_eq!(x[RANK_INPUTS + 2], 0.2);
        assert!(x[3 * RANK_INPUTS..].iter().all(|&v| v == 0.0));
    }
}
