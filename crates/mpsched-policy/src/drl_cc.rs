//! DRL-CC's actor (Xu et al., drl-cc.txt): a single-layer LSTM reads the state of every
//! active flow of the host, one flow per step, and its last hidden state is the
//! representation `h_t` (§III-B, Fig. 2); `h_t` concatenated with the target flow's own state
//! `e_t` goes through the actor, a feed-forward network with ReLU hidden layers and a tanh
//! output layer (§III-C), giving the target flow's window change per subflow (§III-A,
//! "ACTION"). The critic only trains; it is not exported.
//!
//! Description (`"algorithm": "drl_cc"`, written by `mpsched.agents.drl_cc`):
//!
//! ```json
//! "net": {
//!   "select": [8, 14, 15, ...],
//!   "normalize": {"mean": "obs_mean", "std": "obs_std", "clip": 10.0},
//!   "lstm": {"hidden": 64, "weight_ih": "repr.weight_ih_l0", "weight_hh": "repr.weight_hh_l0",
//!            "bias_ih": "repr.bias_ih_l0", "bias_hh": "repr.bias_hh_l0"},
//!   "actor": ["actor.0", "actor.2", "actor.4"]
//! }
//! ```
//!
//! `select`: offsets within one flow slot of the host layout (a flow's features, then its
//! subflow slots), the per-flow state the LSTM and the actor read, normalised
//! `clip((x - mean) / std)`. `actor`: linear layers by name prefix (`NAME.weight`,
//! `NAME.bias`), ReLU between them, tanh after the last. The forward pass reads the newest
//! frame only: the running flows (flow mask 1) in slot order feed the LSTM; the target is the
//! first flow whose `target` feature is 1. Without a target the action is 0.

use mpsched_transport::observe::features::FlowFeature;
use mpsched_transport::observe::HostLayout;
use serde_json::json;

use crate::checkpoint::Checkpoint;
use crate::net::{linear_stack, Net, Tensors};
use crate::spec::Layout;
use crate::PolicyError;

/// The most flow slots a host layout has (the LSTM's longest sequence).
const MAX_FLOWS: usize = 64;

/// A loaded DRL-CC actor with its scratch buffers.
#[derive(Clone, Debug)]
pub struct DrlCcNet {
    select: Vec<usize>,
    mean: Vec<f32>,
    std: Vec<f32>,
    clip: f32,
    hidden: usize,
    /// The representation network R (§III-B): the LSTM alone, over up to [`MAX_FLOWS`] steps.
    repr: Net,
    /// The actor π (§III-C), tanh output.
    actor: Net,
    /// Normalised states of the running flows, in slot order.
    seq: Vec<f32>,
    /// The actor's input: `h`, then the target's state.
    x: Vec<f32>,
}

impl DrlCcNet {
    /// The network of a read `"algorithm": "drl_cc"` checkpoint.
    pub fn from_checkpoint(ck: Checkpoint) -> Result<DrlCcNet, PolicyError> {
        let Checkpoint { desc_path: js, weights_path, desc, tensors, .. } = ck;
        let file = js.display().to_string();
        let err = |field: &str, want: &str| PolicyError(format!("{file}: net.{field}: expected {want}"));
        let net = desc.get("net").ok_or_else(|| PolicyError(format!("{file}: net: missing")))?;
        let select: Vec<usize> = net["select"]
            .as_array()
            .and_then(|a| a.iter().map(|v| v.as_u64().map(|k| k as usize)).collect::<Option<Vec<_>>>())
            .filter(|v| !v.is_empty())
            .ok_or_else(|| err("select", "a non-empty list of offsets within a flow slot"))?;
        let n = select.len();
        let mut t = Tensors { t: tensors, file: &js };
        let nm = &net["normalize"];
        let mean = t.take_shaped("net.normalize.mean", &nm["mean"], &[n])?;
        let std = t.take_shaped("net.normalize.std", &nm["std"], &[n])?;
        if std.iter().any(|&s| s <= 0.0) {
            return Err(err("normalize.std", "values > 0"));
        }
        let clip = nm["clip"].as_f64().filter(|c| *c > 0.0).unwrap_or(f64::INFINITY) as f32;
        let lstm = &net["lstm"];
        let hidden = lstm["hidden"].as_u64().filter(|&h| h > 0).ok_or_else(|| err("lstm.hidden", "an integer > 0"))?;
        let hidden = hidden as usize;
        let shape = lstm["weight_ih"].as_str().and_then(|name| t.t.get(name)).map(|w| w.shape.clone());
        if shape.as_ref().is_some_and(|s| s[..] != [4 * hidden, n]) {
            return Err(err(
                "lstm.weight_ih",
                &format!(
                    "shape [{}, {n}] (one flow's {n} selected values per step), got {:?}",
                    4 * hidden,
                    shape.unwrap_or_default()
                ),
            ));
        }
        let mut layer = lstm.clone();
        layer["type"] = json!("lstm");
        let repr = Net::build(&json!({"input": {"size": MAX_FLOWS * n}, "layers": [layer]}), &mut t)?;
        let actor = linear_stack(&net["actor"], hidden + n, "relu", Some("tanh")).map_err(|w| err("actor", w))?;
        let actor = Net::build(&actor, &mut t)?;
        if let Some(extra) = t.t.keys().next() {
            return Err(PolicyError(format!("{}: unexpected tensor {extra:?}", weights_path.display())));
        }
        Ok(DrlCcNet {
            seq: vec![0.0; MAX_FLOWS * n],
            x: vec![0.0; hidden + n],
            select,
            mean,
            std,
            clip,
            hidden,
            repr,
            actor,
        })
    }

    /// The network's input indices of host `layout`: each running flow slot's selected
    /// features and `target` flag in the newest frame, and the flow mask.
    fn reads(&self, k: usize, l: &HostLayout) -> bool {
        if k >= l.flow_mask_offset() {
            return k < l.size();
        }
        let newest = l.frame(l.history - 1);
        if k < newest || k >= l.subflow_mask_offset() {
            return false;
        }
        let o = (k - newest) % l.flow_stride();
        o == FlowFeature::Target as usize || self.select.contains(&o)
    }

    /// One decision: the target flow's window changes in [-1, 1] (0 without a target).
    fn forward(&mut self, obs: &[f32], l: &HostLayout, action: &mut [f32]) {
        action.iter_mut().for_each(|a| *a = 0.0);
        let n = self.select.len();
        let newest = l.frame(l.history - 1);
        let (mut steps, mut target) = (0usize, None);
        for j in 0..l.max_flows.min(MAX_FLOWS) {
            if obs[l.flow_mask_offset() + j] < 0.5 {
                continue;
            }
            let base = newest + l.flow_slot(j);
            let row = &mut self.seq[steps * n..(steps + 1) * n];
            for (s, x) in row.iter_mut().enumerate() {
                *x = ((obs[base + self.select[s]] - self.mean[s]) / self.std[s]).clamp(-self.clip, self.clip);
            }
            if target.is_none() && obs[base + FlowFeature::Target as usize] >= 0.5 {
                target = Some(steps);
            }
            steps += 1;
        }
        let Some(t) = target else { return };
        let h = self.repr.forward_prefix(&self.seq[..steps * n]);
        self.x[..self.hidden].copy_from_slice(h);
        self.x[self.hidden..].copy_from_slice(&self.seq[t * n..(t + 1) * n]);
        let out = self.actor.forward(&self.x);
        let k = action.len().min(out.len());
        action[..k].copy_from_slice(&out[..k]);
    }
}

impl crate::network::Network for DrlCcNet {
    fn from_checkpoint(ck: Checkpoint) -> Result<Self, PolicyError> {
        DrlCcNet::from_checkpoint(ck)
    }
    fn check_layout(&self, layout: &Layout) -> Result<(), String> {
        let Layout::Host(l) = layout else {
            return Err("a DRL-CC network controls a host's windows: its obs.env must be \"host\"".into());
        };
        if let Some(&k) = self.select.iter().find(|&&k| k >= l.flow_stride()) {
            return Err(format!(
                "net.select: offset {k} is outside a flow slot of {} subflows ({} values)",
                l.max_subflows,
                l.flow_stride()
            ));
        }
        if l.max_flows > MAX_FLOWS {
            return Err(format!("obs.max_flows: expected at most {MAX_FLOWS}, got {}", l.max_flows));
        }
        Ok(())
    }
    fn reads_input(&self, k: usize, layout: &Layout) -> bool {
        match layout {
            Layout::Host(l) => self.reads(k, l),
            Layout::Sched(_) => true,
        }
    }
    fn output_len(&self, _layout: &Layout) -> Option<usize> {
        Some(self.actor.output_len())
    }
    fn act(&mut self, obs: &[f32], layout: &Layout, action: &mut [f32]) {
        if let Layout::Host(l) = layout {
            self.forward(obs, l, action);
        }
    }
}
