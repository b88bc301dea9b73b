//! `mpsched-fuzz`: the stable fuzzing command.
//!
//! ```text
//! cargo run --release -p mpsched-fuzz -- [--target all|scenario|run|trace|policy|segment]
//!     [--inputs N] [--seed S] [--bound-ms MS] [--crashes DIR] [--traces DIR]
//! cargo run --release -p mpsched-fuzz -- --target T --replay FILE
//! ```
//!
//! Prints one line of counts per target; exits 1 if any input crashed or hung.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use mpsched_fuzz::corpus::Seeds;
use mpsched_fuzz::runner::{self, Config};
use mpsched_fuzz::Target;

struct Args {
    targets: Vec<Target>,
    inputs: u64,
    seed: u64,
    bound: Duration,
    crash_dir: PathBuf,
    traces: Option<PathBuf>,
    replay: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        targets: Target::ALL.to_vec(),
        inputs: 10_000,
        seed: 24,
        bound: Duration::from_secs(10),
        crash_dir: PathBuf::from("fuzz/crashes"),
        traces: None,
        replay: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag}: expected a value"));
        let number =
            |v: String| v.parse::<u64>().map_err(|_| format!("{flag}: expected a non-negative integer, got {v:?}"));
        match flag.as_str() {
            "--target" => {
                let v = value()?;
                a.targets = match v.as_str() {
                    "all" => Target::ALL.to_vec(),
                    name => vec![Target::parse(name).ok_or_else(|| format!("--target: unknown target {name:?}"))?],
                }
            }
            "--inputs" => a.inputs = number(value()?)?,
            "--seed" => a.seed = number(value()?)?,
            "--bound-ms" => a.bound = Duration::from_millis(number(value()?)?),
            "--crashes" => a.crash_dir = PathBuf::from(value()?),
            "--traces" => a.traces = Some(PathBuf::from(value()?)),
            "--replay" => a.replay = Some(PathBuf::from(value()?)),
            "-h" | "--help" => return Err("usage: mpsched-fuzz [--target all|scenario|run|trace|policy|segment] [--inputs N] [--seed S] [--bound-ms MS] [--crashes DIR] [--traces DIR] [--replay FILE]".into()),
            other => return Err(format!("unknown option {other:?} (see --help)")),
        }
    }
    Ok(a)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("mpsched-fuzz: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(file) = &args.replay {
        return replay(&args.targets, file);
    }
    let mut seeds = Seeds::from_repo();
    if args.traces.is_some() {
        seeds.traces = args.traces.clone();
    }
    println!(
        "seed {}, bound {} ms, traces {:?}, crashing inputs kept in {}",
        args.seed,
        args.bound.as_millis(),
        seeds.traces,
        args.crash_dir.display()
    );
    let mut failed = false;
    for &target in &args.targets {
        let cfg = Config {
            target,
            inputs: args.inputs,
            seed: args.seed,
            bound: args.bound,
            crash_dir: Some(args.crash_dir.clone()),
            seeds: seeds.clone(),
        };
        let report = runner::run(&cfg);
        println!("{}", report.line(target));
        for f in &report.failures {
            println!("    {f}");
        }
        failed |= report.crashes + report.hangs > 0;
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn replay(targets: &[Target], file: &PathBuf) -> ExitCode {
    let data = match std::fs::read(file) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("mpsched-fuzz: {}: {e}", file.display());
            return ExitCode::from(2);
        }
    };
    let mut failed = false;
    for &t in targets {
        let (outcome, took) = runner::execute(t, &data);
        println!("{}: {outcome:?} in {:.1} ms", t.name(), took.as_secs_f64() * 1e3);
        failed |= outcome.is_err();
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
