//! Times EdAR decisions (`EdarNet::q_values`) on the shipped checkpoint over the observations
//! of a whole `scenarios/edar-handoff.toml` run (4 subflow slots, as `--scheduler edar` uses),
//! against the pre-issue-7 implementation (`tests/support/edar_reference.rs`) in the same
//! process: the fast path as this CPU runs it (AVX2 + FMA when available) and its portable
//! build. Chunks of 50 decisions alternate between the three, so machine noise hits all alike.
//! Reported per decision: the median over repeats of the whole run's mean, and the sum of each
//! chunk's fastest time (what a quiet machine shows); plus the load average.
//!
//! `cargo run --release -p mpsched-policy --example bench_edar [-- REPEATS]`

use std::path::Path;
use std::time::Instant;

use mpsched_policy::edar::EdarNet;

#[path = "../tests/support/edar_reference.rs"]
mod edar_reference;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let repeats: usize = std::env::args().nth(1).map(|s| s.parse().expect("REPEATS: a number")).unwrap_or(15);
    let ck = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/mpsched/agents/checkpoints/edar-default.json");
    let mut net = EdarNet::load(&ck).expect("shipped checkpoint");
    let mut old = edar_reference::RefNet::load(&ck);
    // The fallback for CPUs without AVX2 + FMA (the same as `net` on such CPUs).
    let mut portable = EdarNet::load(&ck).expect("shipped checkpoint");
    portable.force_portable();
    let max_paths = 4;
    let obs = edar_reference::handoff_observations(net.history, max_paths, None, |o| net.act(o, max_paths));
    println!("{} observations of the handoff run ({} slots, history {})", obs.len(), max_paths, net.history);

    // Agreement first (the tests check this too).
    let mut worst = 0.0f32;
    for o in &obs {
        let (mut a, mut b, mut c) = ([0.0; 2], [0.0; 2], [0.0; 2]);
        old.q_values(o, max_paths, &mut a);
        net.q_values(o, max_paths, &mut b);
        portable.q_values(o, max_paths, &mut c);
        for k in 0..2 {
            worst = worst.max((a[k] - b[k]).abs() / (1.0 + a[k].abs())).max((a[k] - c[k]).abs() / (1.0 + a[k].abs()));
        }
    }
    println!("largest |q_fast - q_reference| / (1 + |q_reference|): {worst:.2e}");

    // The machine is shared: time chunks of 50 decisions, alternating reference and fast per
    // chunk (then the portable fast path), so a preemption spoils one chunk, not a whole run.
    const CHUNK: usize = 50;
    let chunks: Vec<&[Vec<f32>]> = obs.chunks(CHUNK).collect();
    let mut sink = 0.0f32;
    let mut time = |chunk: &[Vec<f32>], f: &mut dyn FnMut(&[f32], &mut [f32; 2])| {
        let t0 = Instant::now();
        for o in chunk {
            let mut q = [0.0; 2];
            f(o, &mut q);
            sink += q[0];
        }
        t0.elapsed().as_secs_f64() * 1e6
    };
    // [repeat][chunk] total µs of the chunk.
    let (mut t_old, mut t_new, mut t_port) = (
        vec![vec![0.0; chunks.len()]; repeats],
        vec![vec![0.0; chunks.len()]; repeats],
        vec![vec![0.0; chunks.len()]; repeats],
    );
    for r in 0..repeats {
        for (c, chunk) in chunks.iter().enumerate() {
            t_old[r][c] = time(chunk, &mut |o, q| {
                old.q_values(o, max_paths, q);
            });
            t_new[r][c] = time(chunk, &mut |o, q| {
                net.q_values(o, max_paths, q);
            });
            t_port[r][c] = time(chunk, &mut |o, q| {
                portable.q_values(o, max_paths, q);
            });
        }
    }
    let n = obs.len() as f64;
    // Mean per decision of each whole repeat, then the median over repeats.
    let per_repeat = |t: &[Vec<f64>]| median(&mut t.iter().map(|r| r.iter().sum::<f64>() / n).collect::<Vec<_>>());
    // Each chunk at its fastest over the repeats (what an unloaded machine would show).
    let best = |t: &[Vec<f64>]| {
        (0..chunks.len()).map(|c| t.iter().map(|r| r[c]).fold(f64::INFINITY, f64::min)).sum::<f64>() / n
    };
    let (m_old, b_old) = (per_repeat(&t_old), best(&t_old));
    println!("us per decision           median of {repeats} repeats   best chunks   reference/this");
    println!("reference (pre-issue-7)   {m_old:19.2} {b_old:13.2}");
    for (name, t) in [(format!("fast, {}", net.kernels()), &t_new), ("fast, portable".to_string(), &t_port)] {
        let (m, b) = (per_repeat(t), best(t));
        println!("{name:25} {m:19.2} {b:13.2}   {:.2} (median), {:.2} (best)", m_old / m, b_old / b);
    }
    if let Some(m) = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| c.lines().find(|l| l.starts_with("model name")).map(str::to_owned))
    {
        println!("{}", m.split_once(':').map_or(m.as_str(), |(_, v)| v.trim()));
    }
    if let Ok(l) = std::fs::read_to_string("/proc/loadavg") {
        println!("load average: {}", l.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
    }
    std::hint::black_box(sink);
}
