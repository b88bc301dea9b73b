//! Energy model integrated over a run (Huang et al., MobiSys 2012).

use crate::common::*;

fn interfaces(out: &mpsched_sim::RunOutput) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(&out.summary_json).unwrap();
    v["interfaces"].clone()
}

/// An 8 Mbit/s application stream over an LTE interface for 10 s. On the radio: data at
/// 8 × 1500/1448 = 8.287 Mbit/s down (headers included), delayed ACKs (52 B per 2 segments) at
/// 8.287 × 52/3000 = 0.1436 Mbit/s up. P = 52·8.287 + 438·0.1436 + 1288 = 1781.8 mW, so about
/// 17.8 J over 10 s (the first bin starts with the handshake: ±2%). All of it is the flow's.
#[test]
fn lte_stream_energy_matches_the_power_model() {
    let out = run(r#"
[sim]
duration_s = 10
[[paths]]
name = "lte"
rate_mbps = 20
delay_ms = 30
interface = "4g"
[[flows]]
name = "stream"
path = "lte"
app_rate_mbps = 8
"#);
    let e = interfaces(&out)[0]["energy_j"].as_f64().unwrap();
    assert!((e / 17.818 - 1.0).abs() < 0.02, "energy {e} J");
    let f = flow_f64(&out, "stream", "energy_j");
    assert!((f - e).abs() < 1e-9, "the only flow gets all of it: {f} vs {e}");
}

/// With promotion and tail states, a 1 MB LTE download followed by silence pays the
/// promotion (0.315 J) and the full 11.576 s tail at 1060 mW (12.27 J): the tail dominates,
/// as Huang et al. observed for short transfers.
#[test]
fn lte_tail_dominates_a_short_transfer() {
    let out = run(r#"
[sim]
duration_s = 20
energy_states = true
stop_when_done = false
[[paths]]
name = "lte"
rate_mbps = 20
delay_ms = 30
interface = "lte"
[[flows]]
name = "dl"
path = "lte"
size_bytes = 1000000
"#);
    let i = &interfaces(&out)[0];
    let (promo, tail, active) =
        (i["promotion_j"].as_f64().unwrap(), i["tail_j"].as_f64().unwrap(), i["active_j"].as_f64().unwrap());
    assert!((promo - 0.3149).abs() < 1e-3, "promotion {promo}");
    assert!((tail - 12.27).abs() < 0.2, "tail {tail}");
    assert!(tail > 5.0 * active, "tail {tail} vs active {active}");
}
