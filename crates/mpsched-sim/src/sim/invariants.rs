//! Invariants every run's outputs satisfy, checked at the end of every [`Sim::output`] in debug
//! builds and explicitly by the fuzzing harness and the tests (release). Each one follows from
//! the definitions of the counters; none is a tolerance on a measurement.
//!
//! Per subflow row (counters summed over the flow's connections):
//! 1. `bytes_acked ≤ bytes_sent`: a byte is acknowledged (cumulatively or by SACK) at most once
//!    over its subflow's life and only after it was sent on that subflow, and `bytes_sent`
//!    counts every payload byte sent, retransmissions included;
//! 2. `bytes_retransmitted ≤ bytes_sent`.
//!
//! Per flow row:
//! 3. `bytes_delivered ≤ Σ subflows bytes_sent`: every byte delivered to the application was
//!    carried by at least one subflow segment, and the sum counts each copy (retransmissions,
//!    reinjections, redundant copies) again;
//! 4. a sized flow delivers at most `size_bytes × repeat`, and exactly that once `completed`;
//! 5. `bytes_delivered ≤ Σ_paths min_{forward links} bytes_delivered(link)`: a delivered byte
//!    left every forward link of the path it took (as part of a larger wire packet), so the
//!    goodput is at most the paths' bottlenecks' throughput, which (8) bounds by capacity;
//! 6. FCT lower bound, for a completed flow whose forward and reverse links have fixed rates
//!    and delays (no trace, no scheduled change, no path event):
//!    `fct ≥ d_fwd(p₀) + d_rev(p₀) + 8·size / Σ_p r_p`, where `p₀` is the first path (its SYN
//!    and SYN-ACK open the connection: no data leaves before `d_fwd(p₀) + d_rev(p₀)`), `d` sums
//!    the one-way propagation delays of a direction's links and `r_p` is the smallest forward
//!    rate of path `p` (the payload bytes must all cross one of the bottlenecks after that).
//!
//! Per link row and link:
//! 7. `packets_in = packets_sent + dropped (queue, loss, outage) + packets held` (queued or in
//!    the serializer): packet conservation;
//! 8. utilisation ≤ 1 for a trace link (a packet leaves only after opportunities covering its
//!    bytes); for a rate link `bytes_delivered ≤ capacity + 2000 × (1 + changes + path
//!    events)`: a packet's serialization time is computed at the rate in force when it
//!    starts, so a rate decrease, or an outage ending, while it is in service lets at most one
//!    packet (< 2000 bytes on the wire) through on capacity not counted; exact (≤ 1) without
//!    changes.
//!
//! Every number in the flow, subflow and link rows is finite and non-negative (9).

use serde_json::Value;

use super::{RunOutput, Sim};

/// Largest wire size of one packet (MSS ≤ 1500 + headers and SACK options), bytes.
const MAX_PACKET_BYTES: f64 = 2000.0;

/// Checks the invariants of the module documentation on `out`, the output of `sim` at its
/// current time: `Err` names the first one violated, with the row and the numbers.
pub fn check_invariants(sim: &Sim, out: &RunOutput) -> Result<(), String> {
    let summary: Value = serde_json::from_str(&out.summary_json).map_err(|e| format!("summary.json: {e}"))?;
    let rows = |k: &str| summary[k].as_array().cloned().unwrap_or_default();
    let (flows, subflows, links) = (rows("flows"), rows("subflows"), rows("links"));
    for (table, rows) in [("flows", &flows), ("subflows", &subflows), ("links", &links)] {
        for row in rows.iter() {
            non_negative(table, row)?;
        }
    }
    for row in &subflows {
        let (sent, acked, retx) = (num(row, "bytes_sent"), num(row, "bytes_acked"), num(row, "bytes_retransmitted"));
        if acked > sent || retx > sent {
            return Err(format!(
                "subflow {} {}: bytes_acked {acked} / bytes_retransmitted {retx} > bytes_sent {sent}",
                row["flow"], row["subflow"]
            ));
        }
    }
    for (f, row) in flows.iter().enumerate() {
        let sent: f64 = subflows.iter().filter(|s| s["flow"] == row["name"]).map(|s| num(s, "bytes_sent")).sum();
        check_flow(sim, f, row, sent, &links)?;
    }
    for (l, row) in links.iter().enumerate() {
        check_link(sim, l, row)?;
    }
    Ok(())
}

fn num(row: &Value, k: &str) -> f64 {
    row[k].as_f64().unwrap_or(0.0)
}

/// (9): finite and non-negative numbers.
fn non_negative(table: &str, row: &Value) -> Result<(), String> {
    let Value::Object(m) = row else { return Err(format!("{table}: a row is not an object")) };
    for (k, v) in m {
        if let Some(x) = v.as_f64() {
            if !x.is_finite() || x < 0.0 {
                return Err(format!(
                    "{table} {}: {k} = {x}",
                    row.get("name").or(row.get("flow")).unwrap_or(&Value::Null)
                ));
            }
        }
    }
    Ok(())
}

/// (3) to (6) for flow `f`, whose subflows sent `sent` payload bytes.
fn check_flow(sim: &Sim, f: usize, row: &Value, sent: f64, links: &[Value]) -> Result<(), String> {
    let def = &sim.sc.flows[f];
    let name = &def.name;
    let delivered = num(row, "bytes_delivered");
    if delivered > sent {
        return Err(format!("flow {name}: bytes_delivered {delivered} > bytes_sent {sent} over its subflows"));
    }
    if let Some(size) = def.size {
        let total = size as f64 * def.repeat.max(1) as f64;
        let completed = row["completed"].as_bool() == Some(true);
        if delivered > total || (completed && delivered != total) {
            return Err(format!(
                "flow {name}: bytes_delivered {delivered}, size × repeat {total}, completed {completed}"
            ));
        }
    }
    let paths = def.paths.iter().map(|&p| &sim.sc.paths[p as usize]);
    let bottleneck_out: f64 = paths
        .map(|p| p.fwd.iter().map(|&l| num(&links[l as usize], "bytes_delivered")).fold(f64::INFINITY, f64::min))
        .sum();
    if delivered > bottleneck_out {
        return Err(format!(
            "flow {name}: bytes_delivered {delivered} > {bottleneck_out} bytes out of its paths' bottlenecks"
        ));
    }
    if let (Some(fct), Some(min)) = (row["fct_s"].as_f64(), min_fct_s(sim, f)) {
        if fct < min - 1e-9 {
            return Err(format!("flow {name}: fct_s {fct} < {min}, the propagation and serialization bound"));
        }
    }
    Ok(())
}

/// (6)'s bound for flow `f`, if its links are fixed (seconds).
fn min_fct_s(sim: &Sim, f: usize) -> Option<f64> {
    let def = &sim.sc.flows[f];
    let size = def.size? as f64;
    let paths: Vec<_> = def.paths.iter().map(|&p| &sim.sc.paths[p as usize]).collect();
    let fixed = |l: &u32| {
        let d = &sim.sc.links[*l as usize];
        d.trace.is_none() && d.changes.is_empty()
    };
    let eventful = sim.sc.events.iter().any(|e| def.paths.contains(&e.path));
    if eventful || !paths.iter().all(|p| p.fwd.iter().chain(&p.rev).all(fixed)) {
        return None;
    }
    let delay = |ls: &[u32]| ls.iter().map(|&l| sim.sc.links[l as usize].delay_ns as f64 / 1e9).sum::<f64>();
    let rate = |ls: &[u32]| ls.iter().map(|&l| sim.sc.links[l as usize].rate_bps as f64).fold(f64::INFINITY, f64::min);
    let rates: f64 = paths.iter().map(|p| rate(&p.fwd)).sum();
    Some(delay(&paths[0].fwd) + delay(&paths[0].rev) + 8.0 * size / rates)
}

/// (7) and (8) for link `l`.
fn check_link(sim: &Sim, l: usize, row: &Value) -> Result<(), String> {
    let link = &sim.links[l];
    let s = link.stats;
    let accounted = s.packets_out + s.dropped_queue + s.dropped_loss + s.dropped_outage + link.held_packets();
    if s.packets_in != accounted {
        return Err(format!(
            "link {}: {} packets in, {} out + {} + {} + {} dropped + {} held",
            link.name,
            s.packets_in,
            s.packets_out,
            s.dropped_queue,
            s.dropped_loss,
            s.dropped_outage,
            link.held_packets()
        ));
    }
    let cap = link.capacity_at(sim.now);
    let out = s.bytes_out as f64;
    let slack = if link.is_trace() {
        0.0
    } else {
        let events = sim.sc.events.iter().filter(|e| {
            sim.sc.paths[e.path as usize].fwd.iter().chain(&sim.sc.paths[e.path as usize].rev).any(|&k| k as usize == l)
        });
        MAX_PACKET_BYTES * (1 + sim.sc.links[l].changes.len() + events.count()) as f64
    };
    if out > cap + slack + 1e-6 * cap {
        return Err(format!(
            "link {}: {out} bytes out > capacity {cap} (+ {slack}), utilization {}",
            link.name, row["utilization"]
        ));
    }
    Ok(())
}
