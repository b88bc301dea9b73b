//! `cargo run --release --example run -- SCENARIO.toml [SEED] [--series]`: prints summary.json,
//! or with `--series` the connection-level goodput per sample (time, flow, Mbps).
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: run SCENARIO.toml [SEED] [--series]");
    let text = std::fs::read_to_string(path).expect("readable scenario");
    let series = args.iter().any(|a| a == "--series");
    let seed = args.iter().skip(2).find(|a| !a.starts_with("--")).map(|s| s.parse().expect("integer seed"));
    match mpsched_sim::run_text(&text, path, mpsched_sim::Format::Toml, seed) {
        Ok(out) if series => {
            let ts = &out.timeseries;
            let (t, f, sf, g) = (ts.f64s("time_s"), ts.strs("flow"), ts.i64s("subflow"), ts.f64s("flow_goodput_mbps"));
            for i in 0..t.len() {
                if sf[i] == 0 {
                    println!("{:.1} {} {:.3}", t[i], f[i], g[i]);
                }
            }
        }
        Ok(out) => print!("{}", out.summary_json),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
