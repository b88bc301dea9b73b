//! The stable runner: seeded mutants of the seeds through a target, each under
//! `catch_unwind` and a time bound. It counts inputs, distinct outcomes, crashes (a panic, or a
//! broken promise: [`crate::Outcome`]'s `Err`) and hangs (an input slower than the bound), and
//! keeps every crashing or hanging input in a directory (`<target>-crash-<hash>.bin`), whose
//! files replay with `mpsched-fuzz --target T --replay FILE` or under cargo-fuzz. An input
//! still running after ten bounds (at least 10 s) is kept as `<target>-hang-<hash>.bin` and the
//! process exits with status 3: a true hang cannot be interrupted in-process.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

use mpsched_sim::rng::Rng;

use crate::corpus::{mutant, Seeds};
use crate::Target;

/// One run of a target.
#[derive(Clone, Debug)]
pub struct Config {
    /// The target.
    pub target: Target,
    /// Inputs to try.
    pub inputs: u64,
    /// Seed of the mutations.
    pub seed: u64,
    /// An input slower than this is a hang.
    pub bound: Duration,
    /// Where crashing and hanging inputs are kept (none: not kept).
    pub crash_dir: Option<PathBuf>,
    /// Where the seeds come from.
    pub seeds: Seeds,
}

/// What a run found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Inputs tried.
    pub inputs: u64,
    /// Count per outcome label (`error: ...` kinds, accepted kinds).
    pub outcomes: BTreeMap<String, u64>,
    /// Inputs that panicked or broke a promise.
    pub crashes: u64,
    /// Inputs slower than the bound.
    pub hangs: u64,
    /// The first few crash messages.
    pub failures: Vec<String>,
    /// Files the failing inputs were kept in.
    pub kept: Vec<PathBuf>,
    /// The slowest input's time.
    pub slowest: Duration,
    /// Wall time of the run.
    pub elapsed: Duration,
}

impl Report {
    /// Inputs rejected as promised (a one-line error naming the file and the field or line).
    pub fn errors(&self) -> u64 {
        self.outcomes.iter().filter(|(k, _)| k.starts_with("error")).map(|(_, n)| n).sum()
    }

    /// One line of counts: inputs, distinct outcomes (accepted, rejected), crashes, hangs, the
    /// slowest input and the wall time.
    pub fn line(&self, target: Target) -> String {
        format!(
            "{:<8} inputs {}, distinct outcomes {} (accepted {}, rejected {}), crashes {}, hangs {}, slowest {:.0} ms, {:.1} s",
            target.name(),
            self.inputs,
            self.outcomes.len(),
            self.inputs - self.errors() - self.crashes - self.hangs,
            self.errors(),
            self.crashes,
            self.hangs,
            self.slowest.as_secs_f64() * 1e3,
            self.elapsed.as_secs_f64()
        )
    }
}

thread_local! {
    static PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// A panic hook that keeps the message (and location) for the runner instead of printing it.
fn quiet_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let at = info.location().map(|l| format!(" at {l}")).unwrap_or_default();
            PANIC.with(|p| *p.borrow_mut() = Some(format!("panic: {msg}{at}")));
        }));
    });
}

/// The input in progress, watched for hangs.
type Current = Arc<Mutex<Option<(Instant, Vec<u8>)>>>;

/// Runs `cfg.inputs` mutants of the target's seeds.
pub fn run(cfg: &Config) -> Report {
    quiet_panics();
    let seeds = cfg.seeds.load(cfg.target);
    let mut rng = Rng::new(cfg.seed ^ cfg.target.name().bytes().fold(0, |h, b| h * 31 + b as u64));
    let current: Current = Arc::new(Mutex::new(None));
    let watchdog = watch(cfg, current.clone());
    let started = Instant::now();
    let mut report = Report::default();
    for _ in 0..cfg.inputs {
        let data = mutant(&mut rng, &seeds);
        *current.lock().unwrap() = Some((Instant::now(), data.clone()));
        let (outcome, took) = execute(cfg.target, &data);
        *current.lock().unwrap() = None;
        report.inputs += 1;
        report.slowest = report.slowest.max(took);
        let failure = match outcome {
            Ok(kind) if took <= cfg.bound => {
                *report.outcomes.entry(kind).or_default() += 1;
                None
            }
            Ok(kind) => {
                report.hangs += 1;
                Some(("hang", format!("{kind} after {:.1} s", took.as_secs_f64())))
            }
            Err(what) => {
                report.crashes += 1;
                Some(("crash", what))
            }
        };
        if let Some((kind, what)) = failure {
            let kept = cfg.crash_dir.as_deref().and_then(|d| keep(d, cfg.target, kind, &data));
            if report.failures.len() < 20 {
                report.failures.push(format!(
                    "{kind}: {what} ({})",
                    kept.as_ref().map_or("not kept".into(), |p| p.display().to_string())
                ));
            }
            report.kept.extend(kept);
        }
    }
    report.elapsed = started.elapsed();
    drop(watchdog);
    report
}

/// The target on one input, timed; a panic is an `Err` with its message.
pub fn execute(target: Target, data: &[u8]) -> (crate::Outcome, Duration) {
    quiet_panics();
    let t0 = Instant::now();
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| target.execute(data)))
        .unwrap_or_else(|_| Err(PANIC.with(|p| p.borrow_mut().take()).unwrap_or_else(|| "panic".into())));
    (outcome, t0.elapsed())
}

/// Stops the watchdog when dropped.
struct Watchdog(Arc<Mutex<bool>>);

impl Drop for Watchdog {
    fn drop(&mut self) {
        *self.0.lock().unwrap() = true;
    }
}

/// A thread that keeps the input in progress and exits the process if it runs for longer
/// than ten bounds (at least 10 s).
fn watch(cfg: &Config, current: Current) -> Watchdog {
    let stop = Arc::new(Mutex::new(false));
    let (stop2, target, dir) = (stop.clone(), cfg.target, cfg.crash_dir.clone());
    let limit = (cfg.bound * 10).max(Duration::from_secs(10));
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(100));
        if *stop2.lock().unwrap() {
            return;
        }
        let stuck = current.lock().unwrap().as_ref().filter(|(t, _)| t.elapsed() > limit).map(|(_, d)| d.clone());
        if let Some(data) = stuck {
            let kept = dir.as_deref().and_then(|d| keep(d, target, "hang", &data));
            eprintln!("{}: an input ran for more than {limit:?}: kept in {kept:?}", target.name());
            std::process::exit(3);
        }
    });
    Watchdog(stop)
}

/// Writes `data` to `dir/<target>-<kind>-<hash>.bin`.
fn keep(dir: &Path, target: Target, kind: &str, data: &[u8]) -> Option<PathBuf> {
    let hash = data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    let path = dir.join(format!("{}-{kind}-{hash:016x}.bin", target.name()));
    std::fs::create_dir_all(dir).and_then(|_| std::fs::write(&path, data)).ok().map(|_| path)
}
