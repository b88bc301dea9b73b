//! DRL-CC's actor in the runtime (`mpsched_policy::drl_cc`), at the paper's sizes (drl-cc.txt
//! §III-C: a single-layer LSTM, then 2 × 128 ReLU and a tanh output): a host policy file loads,
//! decides for 10 running flows without allocating, reads only the newest frame's selected
//! features, target flags and flow mask, and gives no action without a target. (Agreement with
//! a NumPy port of the description and the simulation identity with the host env:
//! python/tests/test_policy_cc.py.)

use mpsched_policy::spec::Layout;
use mpsched_transport::observe::features::{FlowFeature, SubflowFeature, FLOW_FEATURES, SUBFLOW_FEATURES};
use mpsched_transport::observe::HostLayout;

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{allocations, CountingAlloc};

#[path = "support/files.rs"]
mod files;
use files::weights;

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

const HIDDEN: usize = 64;
const LAYOUT: HostLayout = HostLayout { max_flows: 16, max_subflows: 2, history: 2 };

/// The paper's per-subflow state (§III-A): sending rate, goodput, RTT, RTT deviation, window.
fn select() -> Vec<usize> {
    let state = [
        SubflowFeature::Throughput,
        SubflowFeature::Goodput,
        SubflowFeature::Srtt,
        SubflowFeature::Rttvar,
        SubflowFeature::Cwnd,
    ];
    (0..LAYOUT.max_subflows)
        .flat_map(|i| state.map(|f| FlowFeature::COUNT + i * SubflowFeature::COUNT + f as usize))
        .collect()
}

fn policy() -> std::sync::Arc<mpsched_policy::Policy> {
    let n = select().len();
    let shapes: Vec<(&str, Vec<usize>)> = vec![
        ("obs_mean", vec![n]),
        ("repr.weight_ih_l0", vec![4 * HIDDEN, n]),
        ("repr.weight_hh_l0", vec![4 * HIDDEN, HIDDEN]),
        ("repr.bias_ih_l0", vec![4 * HIDDEN]),
        ("repr.bias_hh_l0", vec![4 * HIDDEN]),
        ("actor.0.weight", vec![128, HIDDEN + n]),
        ("actor.0.bias", vec![128]),
        ("actor.2.weight", vec![128, 128]),
        ("actor.2.bias", vec![128]),
        ("actor.4.weight", vec![2, 128]),
        ("actor.4.bias", vec![2]),
    ];
    let mut tensors: Vec<_> = shapes
        .iter()
        .enumerate()
        .map(|(k, (name, s))| (*name, s.clone(), weights(s.iter().product(), k as u64 + 1)))
        .collect();
    tensors.push(("obs_std", vec![n], vec![0.5; n]));
    let desc = serde_json::json!({
        "format": "mpsched-policy/1", "algorithm": "drl_cc",
        "net": {
            "select": select(),
            "normalize": {"mean": "obs_mean", "std": "obs_std", "clip": 10.0},
            "lstm": {"hidden": HIDDEN, "weight_ih": "repr.weight_ih_l0", "weight_hh": "repr.weight_hh_l0",
                     "bias_ih": "repr.bias_ih_l0", "bias_hh": "repr.bias_hh_l0"},
            "actor": ["actor.0", "actor.2", "actor.4"],
        },
        "obs": {"env": "host", "action": "cwnd", "target": "rotate", "interval": 100.0,
                "max_flows": LAYOUT.max_flows, "max_subflows": LAYOUT.max_subflows, "history": LAYOUT.history,
                "cwnd_step": 10.0, "features": {"flow": FLOW_FEATURES, "subflow": SUBFLOW_FEATURES}},
    });
    mpsched_policy::load(&files::write_policy("drl-cc-rt", desc, &tensors)).unwrap()
}

/// A host observation with `running` flows in the first slots, flow `target` the target.
fn observation(running: usize, target: Option<usize>, seed: u64) -> Vec<f32> {
    let l = LAYOUT;
    let mut obs: Vec<f32> = weights(l.size(), seed).iter().map(|x| x + 0.5).collect();
    for j in 0..l.max_flows {
        obs[l.flow_mask_offset() + j] = f32::from(u8::from(j < running));
        for h in 0..l.history {
            obs[l.frame(h) + l.flow(j, FlowFeature::Target)] =
                f32::from(u8::from(h + 1 == l.history && Some(j) == target));
        }
    }
    obs
}

#[test]
fn ten_flows_decide_without_allocating_and_read_only_what_the_description_says() {
    let p = policy();
    let spec = p.host().expect("a host policy");
    assert_eq!(spec.action_len(), 2);
    let layout = Layout::Host(spec.layout);
    let mut net = p.net.clone();
    let obs: Vec<Vec<f32>> = (0..20).map(|k| observation(10, Some(k % 10), 100 + k as u64)).collect();
    let mut out = [0.0f32; 2];
    net.act(&obs[0], &layout, &mut out);
    let before = allocations();
    let mut sum = 0.0;
    for o in &obs {
        net.act(o, &layout, &mut out);
        sum += out[0].abs() + out[1].abs();
        assert!(out.iter().all(|a| a.is_finite() && a.abs() <= 1.0));
    }
    assert_eq!(allocations(), before, "a decision allocated");
    assert!(sum > 0.1, "the actor acts: {sum}");

    // Inputs it does not read change nothing: older frames, unselected features, the masks of
    // subflows, slots past the running flows (their features).
    let base = observation(10, Some(3), 7);
    net.act(&base, &layout, &mut out);
    let want = out;
    let l = spec.layout;
    let mut o = base.clone();
    o[l.frame(0)..l.frame(1)].iter_mut().for_each(|x| *x = 9.0);
    o[l.frame(1) + l.subflow(2, 1, SubflowFeature::Loss)] = 9.0;
    o[l.subflow_mask_offset()..l.flow_mask_offset()].iter_mut().for_each(|x| *x = 0.0);
    o[l.frame(1) + l.subflow(12, 0, SubflowFeature::Srtt)] = 9.0;
    net.act(&o, &layout, &mut out);
    assert_eq!(out, want);
    // What it says it reads: the newest frame's selected features and target flags, the flow
    // mask; not older frames, other features or subflow masks (the sender-side check uses this).
    let reads = |k: usize| p.net.reads_input(k, &layout);
    let newest = l.frame(1);
    assert!(
        reads(newest + l.subflow(4, 1, SubflowFeature::Goodput)) && reads(newest + l.flow(15, FlowFeature::Target))
    );
    assert!(reads(l.flow_mask_offset() + 3));
    assert!(!reads(l.frame(0) + l.subflow(4, 1, SubflowFeature::Goodput)));
    assert!(
        !reads(newest + l.flow(2, FlowFeature::Goodput)) && !reads(newest + l.subflow(2, 0, SubflowFeature::EnergyJ))
    );
    assert!(!reads(l.subflow_mask_offset()));
    // A selected feature of a running flow, and the order of the flows, change the action.
    let mut o = base.clone();
    o[l.frame(1) + l.subflow(5, 0, SubflowFeature::Cwnd)] += 1.0;
    net.act(&o, &layout, &mut out);
    assert_ne!(out, want);
    // No target: no action.
    net.act(&observation(10, None, 7), &layout, &mut out);
    assert_eq!(out, [0.0, 0.0]);
}
