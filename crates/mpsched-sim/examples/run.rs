//! `cargo run --release --example run -- SCENARIO.toml [SEED]`: prints summary.json.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: run SCENARIO.toml [SEED]");
    let text = std::fs::read_to_string(path).expect("readable scenario");
    let seed = args.get(2).map(|s| s.parse().expect("integer seed"));
    match mpsched_sim::run_text(&text, path, mpsched_sim::Format::Toml, seed) {
        Ok(out) => print!("{}", out.summary_json),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
