//! `mpsched-emu`: the link emulator process of `mpsched emulate`.
//!
//! ```text
//! mpsched-emu --scenario FILE --client-ns NAME --server-ns NAME --stats OUT.json
//!             [--seed N] [--max-run-s S] [--spin-us U] [--rt-prio P] [--tun-prefix mp]
//! ```
//! Creates one TUN device per path in each namespace (`<prefix><path index>`), prints `ready`,
//! waits for a line on stdin, then emulates until the scenario's duration (bounded by
//! `--max-run-s`), SIGINT/SIGTERM, or stdin closing; writes its counters to `--stats`.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use mpsched_emu::net::EmuNet;
use mpsched_emu::run::{link_rows, run, PathTun, RunConfig};
use mpsched_emu::sys;
use mpsched_sim::{Format, Scenario};
use serde_json::json;

struct Args {
    scenario: String,
    seed: Option<u64>,
    client_ns: String,
    server_ns: String,
    stats: String,
    max_run_s: f64,
    spin_us: u64,
    rt_prio: i32,
    prefix: String,
    describe: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        scenario: String::new(),
        seed: None,
        client_ns: String::new(),
        server_ns: String::new(),
        stats: String::new(),
        max_run_s: 600.0,
        spin_us: 50,
        rt_prio: 10,
        prefix: "mp".into(),
        describe: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        if k == "--describe" {
            a.describe = true;
            continue;
        }
        let v = it.next().ok_or(format!("{k}: missing value"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{k}: {e}");
        match k.as_str() {
            "--scenario" => a.scenario = v,
            "--seed" => a.seed = Some(v.parse().map_err(|e| bad(&e))?),
            "--client-ns" => a.client_ns = v,
            "--server-ns" => a.server_ns = v,
            "--stats" => a.stats = v,
            "--max-run-s" => a.max_run_s = v.parse().map_err(|e| bad(&e))?,
            "--spin-us" => a.spin_us = v.parse().map_err(|e| bad(&e))?,
            "--rt-prio" => a.rt_prio = v.parse().map_err(|e| bad(&e))?,
            "--tun-prefix" => a.prefix = v,
            _ => return Err(format!("unknown option {k}")),
        }
    }
    if a.describe && !a.scenario.is_empty() {
        return Ok(a);
    }
    if a.scenario.is_empty() || a.client_ns.is_empty() || a.server_ns.is_empty() || a.stats.is_empty() {
        return Err("--scenario, --client-ns, --server-ns and --stats are required".into());
    }
    Ok(a)
}

fn open_tuns(a: &Args, n: usize) -> std::io::Result<Vec<PathTun>> {
    let names: Vec<String> = (0..n).map(|i| format!("{}{i}", a.prefix)).collect();
    let client: Vec<_> = sys::in_netns(&a.client_ns, || names.iter().map(|s| sys::open_tun(s)).collect())?;
    let server: Vec<_> = sys::in_netns(&a.server_ns, || names.iter().map(|s| sys::open_tun(s)).collect())?;
    Ok(client.into_iter().zip(server).map(|(client, server)| PathTun { client, server }).collect())
}

fn main_inner() -> Result<(), String> {
    let a = parse_args()?;
    let text = std::fs::read_to_string(&a.scenario).map_err(|e| format!("{}: {e}", a.scenario))?;
    let sc = Scenario::parse(&text, &a.scenario, Format::Toml, a.seed).map_err(|e| e.0)?;
    if a.describe {
        println!("{}", serde_json::to_string_pretty(&describe(&sc)).unwrap());
        return Ok(());
    }
    sys::install_signal_handlers();
    let tuns = open_tuns(&a, sc.paths.len()).map_err(|e| format!("TUN set-up: {e}"))?;
    let rt = sys::realtime(a.rt_prio);
    println!("ready");
    std::io::stdout().flush().ok();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).map_err(|e| e.to_string())?;
    if line.trim() != "go" {
        return Err("stopped before the start".into());
    }
    let mut net = EmuNet::new(&sc);
    let end_ns = sc.duration_ns.min((a.max_run_s * 1e9) as u64);
    let cfg = RunConfig { end_ns, spin_ns: a.spin_us * 1000 };
    let c = run(&mut net, &tuns, &cfg, Some(0)).map_err(|e| format!("emulation: {e}"))?;
    let end = c.ran_ns.min(sc.duration_ns);
    let stats = json!({
        "ran_s": c.ran_ns as f64 / 1e9, "interrupted": c.interrupted, "sched_fifo": rt,
        "spin_us": a.spin_us, "lateness": c.lateness.summary(), "max_packet_bytes": c.max_packet_bytes,
        "non_ipv4_packets": c.non_ipv4, "write_errors": c.write_errors, "packets_dropped": net.dropped,
        "data_drops_by_port": net.dropped_by_tag.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
        "packets_read": c.packets_read, "links": link_rows(&mut net, end),
    });
    std::fs::write(&a.stats, serde_json::to_string_pretty(&stats).unwrap() + "\n")
        .map_err(|e| format!("{}: {e}", a.stats))?;
    Ok(())
}

/// What `mpsched emulate` needs of the resolved scenario (`--describe`), as JSON.
fn describe(sc: &Scenario) -> serde_json::Value {
    use mpsched_sim::scenario::{App, PathEventKind};
    let flows: Vec<_> = sc
        .flows
        .iter()
        .map(|f| {
            let app = match f.app {
                App::Greedy => json!({"kind": "greedy"}),
                App::Cbr { rate_bps } => json!({"kind": "cbr", "rate_bps": rate_bps}),
                App::Chunks { bytes, period_ns } => json!({"kind": "chunks", "bytes": bytes, "period_ns": period_ns}),
            };
            json!({
                "name": f.name, "paths": f.paths, "backup": f.backup, "scheduler": f.scheduler.label(),
                "cc": f.cc.label(), "app": app, "repeat": f.repeat, "start_ns": f.start_ns, "stop_ns": f.stop_ns,
                "size": f.size, "rcv_buf": f.rcv_buf,
                "decision": !matches!(f.decision, mpsched_sim::scenario::DecisionInterval::None),
            })
        })
        .collect();
    let events: Vec<_> = sc
        .events
        .iter()
        .map(|e| {
            let kind = match e.kind {
                PathEventKind::Down => "down",
                PathEventKind::Up => "up",
                PathEventKind::Backup => "backup",
                PathEventKind::Active => "active",
            };
            json!({"at_ns": e.at_ns, "path": e.path, "kind": kind})
        })
        .collect();
    let paths: Vec<_> = sc.paths.iter().map(|p| json!({"name": p.name, "fwd": p.fwd, "rev": p.rev})).collect();
    let links: Vec<_> =
        sc.links.iter().map(|l| json!({"name": l.name, "rate_bps": l.rate_bps, "delay_ns": l.delay_ns})).collect();
    json!({
        "name": sc.name, "seed": sc.seed, "profile": sc.profile.name(), "duration_ns": sc.duration_ns,
        "sample_ns": sc.sample_ns, "default_rcv_buf": mpsched_sim::scenario::DEFAULT_RCV_BUF,
        "paths": paths, "links": links, "flows": flows, "events": events, "resolved_toml": sc.resolved_toml(),
    })
}

fn main() -> ExitCode {
    match main_inner() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mpsched-emu: {e}");
            ExitCode::from(2)
        }
    }
}
