//! The first ACK after an outage (issue 21's calibration, docs/fidelity.md "Outages"): it
//! acknowledges the RTO retransmission together with segments the receiver buffered before the
//! outage. The `linux` profile takes the RTT from the echoed timestamp, as the kernel does for an
//! ACK of retransmitted data (`tcp_clean_rtx_queue`'s `FLAG_RETRANS_DATA_ACKED`,
//! `tcp_ack_update_rtt`), not the buffered segments' age; the `ns3` profile keeps Karn's rule on
//! the newest never-retransmitted segment acknowledged.

use mpsched_sim::{run_text, Format, RunOutput};

/// One CUBIC flow, 10 Mbit/s, 20 ms one way, the path out from 30 to 50 s, 80 s.
fn run(profile: &str) -> RunOutput {
    let text = format!(
        "[sim]\nduration_s = 80\nprofile = \"{profile}\"\n[[paths]]\nname = \"p\"\nrate_mbps = 10\n\
         delay_ms = 20\nschedule = [{{ at_s = 30, outage = true }}, {{ at_s = 50, outage = false }}]\n\
         [[flows]]\nname = \"f\"\npath = \"p\"\ncc = \"cubic\"\n"
    );
    run_text(&text, "outage.toml", Format::Toml, None).unwrap()
}

/// Largest srtt (ms) and retransmits summed over the samples in `(t0, t1]`.
fn after(out: &RunOutput, t0: f64, t1: f64) -> (f64, i64) {
    let ts = &out.timeseries;
    let (time, srtt, retx) = (ts.f64s("time_s"), ts.f64s("srtt_ms"), ts.i64s("retransmits"));
    let idx: Vec<usize> = (0..time.len()).filter(|&i| time[i] > t0 && time[i] <= t1).collect();
    (idx.iter().map(|&i| srtt[i]).fold(0.0, f64::max), idx.iter().map(|&i| retx[i]).sum())
}

#[test]
fn linux_profile_takes_no_rtt_sample_from_segments_buffered_across_an_outage() {
    let out = run("linux");
    // The path is back at 50 s; the backed-off RTO fires at about 64 s.
    let (srtt_max, _) = after(&out, 60.0, 80.0);
    assert!(srtt_max < 200.0, "srtt after the outage {srtt_max} ms");
    // Back to CUBIC's usual losses at a full queue (measured: 9 in these 14 s; the wrong sample
    // gave about 1,400: a loss every 0.4 s).
    let (_, retx) = after(&out, 66.0, 80.0);
    assert!(retx < 20, "{retx} retransmissions in the 14 s after recovery");
}

#[test]
fn ns3_profile_keeps_karns_sample_from_the_newest_clean_segment() {
    // Unchanged: the sample comes from the newest never-retransmitted segment the ACK covers,
    // so the buffered segments' age, about 34 s, enters srtt.
    let (srtt_max, _) = after(&run("ns3"), 60.0, 80.0);
    assert!(srtt_max > 1_000.0, "srtt after the outage {srtt_max} ms");
}
