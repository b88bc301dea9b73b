//! Generic exported networks (`mpsched_policy::net`): small networks computed by hand, and the
//! sizes the policy issue names — a 2×64 MLP, DDPG's LSTM(64) + 2×128 actor over 10 flows, a
//! GRU — that load from files, decide without allocating, and give the same results in both
//! builds. (Agreement with PyTorch per layer type: python/tests/test_policies.py.)

use std::path::PathBuf;

use mpsched_policy::net::Net;

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{allocations, CountingAlloc};

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

#[path = "support/files.rs"]
mod files;
use files::weights;

/// A `"net"` checkpoint (`NAME.json` + `NAME.safetensors`) of `tensors` (name, shape, values),
/// in a directory of its own per call: tests run in parallel and several write the same network
/// (two writers of one file made a reader see it half-written).
fn write_tensors(name: &str, net: serde_json::Value, tensors: &[(&str, Vec<usize>, Vec<f32>)]) -> PathBuf {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let desc = serde_json::json!({"format": "mpsched-policy/1", "algorithm": "net", "net": net});
    files::write_policy(&format!("net-rt-{name}-{call}"), desc, tensors)
}

/// [`write_tensors`] with random tensors of `shapes`.
fn write(name: &str, net: serde_json::Value, shapes: &[(&str, Vec<usize>)]) -> PathBuf {
    let tensors: Vec<_> = shapes
        .iter()
        .enumerate()
        .map(|(k, (n, shape))| (*n, shape.clone(), weights(shape.iter().product(), k as u64 + 1)))
        .collect();
    write_tensors(name, net, &tensors)
}

fn linear(k: usize) -> serde_json::Value {
    serde_json::json!({"type": "linear", "weight": format!("l{k}.w"), "bias": format!("l{k}.b")})
}

/// A 2×64 MLP over 46 inputs with an argmax head (a PPO/DQN actor for a 4-path scheduler).
fn mlp() -> PathBuf {
    let layers = serde_json::json!([linear(0), {"type": "tanh"}, linear(1), {"type": "tanh"}, linear(2)]);
    let net = serde_json::json!({"input": {"size": 46}, "layers": layers, "head": {"type": "argmax"}});
    let shapes = [
        ("l0.w", vec![64, 46]),
        ("l0.b", vec![64]),
        ("l1.w", vec![64, 64]),
        ("l1.b", vec![64]),
        ("l2.w", vec![4, 64]),
        ("l2.b", vec![4]),
    ];
    write("mlp", net, &shapes)
}

/// DRL-CC's actor: an LSTM(64) over 10 flows of 8 features, then 2×128 and a tanh head.
fn ddpg(cell: &str) -> PathBuf {
    let g = if cell == "lstm" { 4 } else { 3 };
    let rec = serde_json::json!({"type": cell, "hidden": 64, "weight_ih": "r.wi", "weight_hh": "r.wh",
        "bias_ih": "r.bi", "bias_hh": "r.bh"});
    let layers = serde_json::json!([rec, linear(0), {"type": "relu"}, linear(1), {"type": "relu"}, linear(2)]);
    let head = serde_json::json!({"type": "tanh", "low": [-1.0, -1.0], "high": [1.0, 1.0]});
    let net = serde_json::json!({"input": {"size": 80}, "layers": layers, "head": head});
    let shapes = [
        ("r.wi", vec![g * 64, 8]),
        ("r.wh", vec![g * 64, 64]),
        ("r.bi", vec![g * 64]),
        ("r.bh", vec![g * 64]),
        ("l0.w", vec![128, 64]),
        ("l0.b", vec![128]),
        ("l1.w", vec![128, 128]),
        ("l1.b", vec![128]),
        ("l2.w", vec![2, 128]),
        ("l2.b", vec![2]),
    ];
    write(cell, net, &shapes)
}

#[test]
fn decisions_allocate_nothing() {
    for path in [mlp(), ddpg("lstm"), ddpg("gru")] {
        let mut net = Net::load(&path).unwrap();
        let obs: Vec<Vec<f32>> = (0..50).map(|k| weights(net.input_len(), 100 + k)).collect();
        let first: Vec<Vec<f32>> = obs.iter().map(|o| net.forward(o).to_vec()).collect();
        let before = allocations();
        for (o, want) in obs.iter().zip(&first) {
            let out = net.forward(o);
            assert_eq!(out, &want[..], "same observation, same output");
            assert!(out.iter().all(|x| x.is_finite()));
        }
        assert_eq!(allocations(), before, "{}", path.display());
        let probe = Box::new(0u8);
        std::hint::black_box(&probe);
        assert!(allocations() > before, "the counter counts");
    }
}

#[test]
fn shapes_are_read_from_the_weights() {
    let net = Net::load(&ddpg("lstm")).unwrap();
    assert_eq!((net.input_len(), net.output_len()), (80, 2));
    let net = Net::load(&mlp()).unwrap();
    assert_eq!((net.input_len(), net.output_len()), (46, 1));
}

/// The AVX2 + FMA build (fused multiply-adds) and the portable build agree within 1e-5.
#[test]
fn both_builds_agree() {
    for path in [mlp(), ddpg("lstm"), ddpg("gru")] {
        let (mut fast, mut portable) = (Net::load(&path).unwrap(), Net::load(&path).unwrap());
        portable.force_portable();
        for k in 0..50 {
            let o = weights(fast.input_len(), 500 + k);
            let (a, b) = (fast.forward(&o).to_vec(), portable.forward(&o).to_vec());
            for (x, y) in a.iter().zip(&b) {
                assert!((x - y).abs() <= 1e-5 * y.abs().max(1.0), "{}: {x} vs {y}", path.display());
            }
        }
    }
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// y = relu(W x + b) by hand, then the argmax and tanh heads.
#[test]
fn linear_relu_and_heads_by_hand() {
    let tensors = [("w", vec![2, 2], vec![1.0, -1.0, 0.5, 2.0]), ("b", vec![2], vec![0.0, -1.0])];
    let layers = serde_json::json!([{"type": "linear", "weight": "w", "bias": "b"}, {"type": "relu"}]);
    let net = serde_json::json!({"input": {"size": 2}, "layers": layers, "head": {"type": "argmax"}});
    let mut net = Net::load(&write_tensors("argmax", net, &tensors)).unwrap();
    // x = (3, 1): W x + b = (2, 2.5) → argmax 1; x = (1, -1): (2, -2.5) → relu (2, 0) → 0.
    assert_eq!(net.forward(&[3.0, 1.0]), &[1.0]);
    assert_eq!(net.forward(&[1.0, -1.0]), &[0.0]);
    let head = serde_json::json!({"type": "tanh", "low": [0.0, -2.0], "high": [10.0, 2.0]});
    let net = serde_json::json!({"input": {"size": 2}, "layers": layers, "head": head});
    let mut net = Net::load(&write_tensors("tanh", net, &tensors)).unwrap();
    let out = net.forward(&[3.0, 1.0]).to_vec();
    assert!((out[0] - 5.0 * (2f32.tanh() + 1.0)).abs() < 1e-6);
    assert!((out[1] - (-2.0 + 2.0 * (2.5f32.tanh() + 1.0))).abs() < 1e-6);
}

/// One LSTM unit over two steps, by hand (gates i, f, g, o all from W_ih = 1, W_hh = 0.5).
#[test]
fn lstm_steps_by_hand() {
    let tensors = [
        ("wi", vec![4, 1], vec![1.0; 4]),
        ("wh", vec![4, 1], vec![0.5; 4]),
        ("bi", vec![4], vec![0.0; 4]),
        ("bh", vec![4], vec![0.1; 4]),
    ];
    let layer = serde_json::json!({"type": "lstm", "hidden": 1, "weight_ih": "wi", "weight_hh": "wh",
        "bias_ih": "bi", "bias_hh": "bh"});
    let net = serde_json::json!({"input": {"size": 2}, "layers": [layer]});
    let mut net = Net::load(&write_tensors("lstm1", net, &tensors)).unwrap();
    let (mut h, mut c) = (0.0f32, 0.0f32);
    for x in [0.3f32, -0.7] {
        let a = x + 0.5 * h + 0.1;
        c = sigmoid(a) * c + sigmoid(a) * a.tanh();
        h = sigmoid(a) * c.tanh();
    }
    assert!((net.forward(&[0.3, -0.7])[0] - h).abs() < 1e-6);
}
