//! Helpers shared by the validation tests.
#![allow(dead_code)]

use mpsched_sim::{run_text, Column, Format, RunOutput, Table};

pub fn run(toml: &str) -> RunOutput {
    run_text(toml, "<test>", Format::Toml, None).unwrap_or_else(|e| panic!("scenario error: {e}"))
}

pub fn run_seed(toml: &str, seed: u64) -> RunOutput {
    run_text(toml, "<test>", Format::Toml, Some(seed)).unwrap_or_else(|e| panic!("scenario error: {e}"))
}

/// Row index of flow `name` in the flows table.
pub fn flow_row(t: &Table, name: &str) -> usize {
    t.strs("name").iter().position(|n| n == name).unwrap_or_else(|| panic!("no flow {name}"))
}

pub fn flow_f64(out: &RunOutput, flow: &str, col: &str) -> f64 {
    out.flows.f64s(col)[flow_row(&out.flows, flow)]
}

pub fn flow_i64(out: &RunOutput, flow: &str, col: &str) -> i64 {
    match out.flows.column(col) {
        Some(Column::I64(v)) => v[flow_row(&out.flows, flow)],
        Some(Column::OptI64(v)) => v[flow_row(&out.flows, flow)].expect("non-null"),
        _ => panic!("no integer column {col}"),
    }
}

pub fn fct(out: &RunOutput, flow: &str) -> Option<f64> {
    match out.flows.column("fct_s") {
        Some(Column::OptF64(v)) => v[flow_row(&out.flows, flow)],
        _ => panic!("no fct_s"),
    }
}

pub fn link_i64(out: &RunOutput, link: &str, col: &str) -> i64 {
    let i = out.links.strs("name").iter().position(|n| n == link).unwrap_or_else(|| panic!("no link {link}"));
    out.links.i64s(col)[i]
}

pub fn link_f64(out: &RunOutput, link: &str, col: &str) -> f64 {
    let i = out.links.strs("name").iter().position(|n| n == link).unwrap_or_else(|| panic!("no link {link}"));
    out.links.f64s(col)[i]
}

/// Mean of timeseries column `col` for `flow` (subflow 0) over samples with `t0 < time <= t1`.
pub fn series_mean(out: &RunOutput, flow: &str, col: &str, t0: f64, t1: f64) -> f64 {
    let ts = &out.timeseries;
    let (time, names, sub, vals) = (ts.f64s("time_s"), ts.strs("flow"), ts.i64s("subflow"), ts.f64s(col));
    let v: Vec<f64> = (0..time.len())
        .filter(|&i| names[i] == flow && sub[i] == 0 && time[i] > t0 + 1e-9 && time[i] <= t1 + 1e-9)
        .map(|i| vals[i])
        .collect();
    assert!(!v.is_empty(), "no samples of {flow}.{col} in ({t0}, {t1}]");
    v.iter().sum::<f64>() / v.len() as f64
}

/// Jain's fairness index (Σx)² / (n·Σx²).
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * s2)
}

/// `../shared` beside the repository (traces are GPL data: read in place, never copied).
pub fn shared_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}
