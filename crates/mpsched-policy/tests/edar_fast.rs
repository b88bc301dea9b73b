//! The optimized EdAR forward pass (`EdarNet::q_values`, both its AVX2 + FMA and its portable
//! build) against the straightforward reference implementation (`support/edar_reference.rs`,
//! which `python/tests/test_edar.py` ties to torch), on real observations of the handoff
//! scenario: the shipped checkpoint, and a random network of odd sizes (padding of every
//! matrix, a history other than 6, one, two and three present subflows); and that decisions
//! allocate nothing.

use std::path::{Path, PathBuf};

use mpsched_policy::edar::EdarNet;
use mpsched_transport::observe::features::{CONN_FEATURES, SUBFLOW_FEATURES};

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{allocations, CountingAlloc};

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

#[path = "support/edar_reference.rs"]
mod edar_reference;
use edar_reference::{handoff_observations, RefNet};

/// Every observation through the reference and both builds of the fast path: Q-values within
/// 1e-5 (relative, or absolute below 1) and the same start flag; returns the largest difference.
fn check(ck: &Path, obs: &[Vec<f32>], max_paths: usize) -> f32 {
    let mut reference = RefNet::load(ck);
    let mut fast = EdarNet::load(ck).unwrap();
    let mut portable = EdarNet::load(ck).unwrap();
    portable.force_portable();
    let mut worst = 0.0f32;
    for (n, o) in obs.iter().enumerate() {
        let (mut q0, mut q1, mut q2) = ([0.0; 2], [0.0; 2], [0.0; 2]);
        let s0 = reference.q_values(o, max_paths, &mut q0);
        let s1 = fast.q_values(o, max_paths, &mut q1);
        let s2 = portable.q_values(o, max_paths, &mut q2);
        assert_eq!((s0, s0), (s1, s2), "start flag, observation {n}");
        for k in 0..2 {
            for (q, build) in [(q1, fast.kernels()), (q2, "portable")] {
                let d = (q[k] - q0[k]).abs() / q0[k].abs().max(1.0);
                assert!(d <= 1e-5, "observation {n}, Q[{k}] ({build}): {} vs reference {}", q[k], q0[k]);
                worst = worst.max(d);
            }
        }
    }
    worst
}

/// Copies subflow slot `from` into slot `to` (features of every frame, and the mask).
fn duplicate_slot(obs: &mut [f32], max_paths: usize, history: usize, from: usize, to: usize) {
    let (ns, frame) = (SUBFLOW_FEATURES.len(), max_paths * SUBFLOW_FEATURES.len() + CONN_FEATURES.len());
    for t in 0..history {
        obs.copy_within(t * frame + from * ns..t * frame + (from + 1) * ns, t * frame + to * ns);
    }
    obs[history * frame + to] = obs[history * frame + from];
}

#[test]
fn shipped_checkpoint_agrees_with_the_reference() {
    let ck = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/mpsched/agents/checkpoints/edar-default.json");
    let mut net = EdarNet::load(&ck).unwrap();
    // The whole run, as `--scheduler edar` makes it (4 slots; outages leave one subflow).
    let obs = handoff_observations(net.history, 4, None, |o| net.act(o, 4));
    assert!(obs.len() > 1000);
    let worst = check(&ck, &obs, 4);
    eprintln!("shipped checkpoint: {} observations, largest difference {worst:.1e}", obs.len());
    // Three present subflows (slot 0 copied into slot 2): a pair and a single one through LSTM2.
    let mut obs3 = handoff_observations(net.history, 3, Some(30.0), |o| net.act(o, 3));
    obs3.iter_mut().for_each(|o| duplicate_slot(o, 3, net.history, 0, 2));
    check(&ck, &obs3, 3);
}

/// A small safetensors writer (the crate only reads them).
fn write_safetensors(path: &Path, tensors: &[(String, Vec<usize>, Vec<f32>)]) {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, shape, v) in tensors {
        assert_eq!(shape.iter().product::<usize>(), v.len());
        let begin = data.len();
        data.extend(v.iter().flat_map(|x| x.to_le_bytes()));
        header.insert(
            name.clone(),
            serde_json::json!({"dtype": "F32", "shape": shape, "data_offsets": [begin, data.len()]}),
        );
    }
    let h = serde_json::Value::Object(header).to_string().into_bytes();
    let mut bytes = (h.len() as u64).to_le_bytes().to_vec();
    bytes.extend(h);
    bytes.extend(data);
    std::fs::write(path, bytes).unwrap();
}

/// A random EdAR network (weights uniform in ±`scale`/√fan-in, like torch's init but larger so
/// the gates saturate sometimes) of the given sizes, written as a checkpoint; returns its path.
fn random_checkpoint(dir: &Path, u1: usize, u2: usize, core: [usize; 2], history: usize, seed: u64) -> PathBuf {
    let mut state = seed;
    let mut uniform = move |n: usize, k: f32| -> Vec<f32> {
        (0..n)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((state >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * k
            })
            .collect()
    };
    let (nf, n_in2, nc) = (6, 6 * 2 * u1, 3);
    let k1 = 3.0 / (u1 as f32).sqrt();
    let k2 = 3.0 / (u2 as f32).sqrt();
    let mut t = vec![
        ("lstm1_weight_ih".to_string(), vec![nf, 4 * u1], uniform(nf * 4 * u1, k1)),
        ("lstm1_weight_hh".to_string(), vec![nf, 4 * u1, u1], uniform(nf * 4 * u1 * u1, k1)),
        ("lstm1_bias".to_string(), vec![nf, 4 * u1], uniform(nf * 4 * u1, k1)),
        ("lstm2.weight_ih".to_string(), vec![4 * u2, n_in2], uniform(4 * u2 * n_in2, k2)),
        ("lstm2.weight_hh".to_string(), vec![4 * u2, u2], uniform(4 * u2 * u2, k2)),
        ("lstm2.bias_ih".to_string(), vec![4 * u2], uniform(4 * u2, k2)),
        ("lstm2.bias_hh".to_string(), vec![4 * u2], uniform(4 * u2, k2)),
    ];
    let dims = [nc + u2, core[0], core[1], 2];
    for (i, k) in [0, 2, 4].into_iter().enumerate() {
        let s = 1.0 / (dims[i] as f32).sqrt();
        t.push((format!("core.{k}.weight"), vec![dims[i + 1], dims[i]], uniform(dims[i + 1] * dims[i], s)));
        t.push((format!("core.{k}.bias"), vec![dims[i + 1]], uniform(dims[i + 1], s)));
    }
    let stem = dir.join(format!("edar-{u1}-{u2}-{}-{}-{history}", core[0], core[1]));
    write_safetensors(&stem.with_extension("safetensors"), &t);
    let desc = serde_json::json!({
        "format": "mpsched-policy/1", "algorithm": "edar", "variant": "edar-o",
        "net": {
            "lstm1_units": u1, "lstm2_units": u2, "history": history, "n_actions": 2, "core_units": core,
            "subflow_inputs": ["srtt", "rto", "throughput", "cwnd", "loss", "inflight"],
            "conn_inputs": ["prev_mode", "rcv_window", "inflight"],
        },
    });
    std::fs::write(stem.with_extension("json"), desc.to_string()).unwrap();
    stem.with_extension("json")
}

#[test]
fn odd_sizes_agree_with_the_reference() {
    let dir = std::env::temp_dir().join(format!("mpsched-edar-fast-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (u1, u2, core, history, seed) in
        [(3, 5, [7, 9], 3, 1), (10, 60, [128, 32], 6, 2), (7, 33, [20, 41], 2, 3), (1, 1, [1, 1], 4, 4)]
    {
        let ck = random_checkpoint(&dir, u1, u2, core, history, seed);
        for max_paths in [2, 3] {
            let mut obs = handoff_observations(history, max_paths, Some(25.0), |o| u8::from(o[0] > 0.3));
            if max_paths == 3 {
                obs.iter_mut().for_each(|o| duplicate_slot(o, 3, history, 1, 2));
            }
            check(&ck, &obs, max_paths);
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn decisions_allocate_nothing() {
    let ck = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/mpsched/agents/checkpoints/edar-default.json");
    let mut net = EdarNet::load(&ck).unwrap();
    let mut obs3 = handoff_observations(net.history, 3, Some(10.0), |o| net.act(o, 3));
    obs3.iter_mut().for_each(|o| duplicate_slot(o, 3, net.history, 0, 2));
    let before = allocations();
    std::hint::black_box(vec![1u8]);
    assert!(allocations() > before, "the counter counts");
    for portable in [false, true] {
        if portable {
            net.force_portable();
        }
        let before = allocations();
        let mut q = [0.0; 2];
        for o in &obs3 {
            net.q_values(o, 3, &mut q);
            net.act(o, 3);
        }
        assert_eq!(allocations(), before, "{}", net.kernels());
    }
}
