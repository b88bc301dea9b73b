//! DMPTCP and the host policy's path preference inside a two-path connection (pair harness):
//! path 0 5 ms one-way (RTT 10 ms), path 1 20 ms one-way (RTT 40 ms), linux profile (IW 10),
//! NewReno. Subflow 0 is up at 10 ms; subflow 1's MP_JOIN starts then, its SYN-ACK arrives at
//! 50 ms and the fourth ACK at 90 ms, when it may carry data (RFC 8684 §3.2).

use crate::util::*;
use mpsched_transport::Instant;

fn pair(sched: &str, rate0: Option<u64>) -> Pair {
    Pair::new(multipath_config(sched, 2, 16 << 20)).with_path(0, ms(5), rate0).with_path(1, ms(20), None)
}

/// When subflow 1 may carry data with a 10 Mbit/s path 0: the MP_CAPABLE SYN and SYN-ACK
/// (104 bytes on the wire each way) take 83.2 µs of path 0's bottleneck... once.
const JOINED_RATED: Instant = Instant(90_083_200);

fn first_data_on(p: &Pair, sf: u8) -> Option<Instant> {
    p.client_data_on(sf).map(|s| s.at).next()
}

/// MPTCP-RL's motivating case in the transport: both subflows up and idle (IW 10), then the
/// application writes 16 segments at 200 ms. minRTT fills subflow 0's window and puts the
/// other 6 segments on the slow subflow at once: they arrive at 220 ms. DMPTCP keeps the flow
/// on the fast path (alone it could deliver up to 10 + 20 + 40 + 80 segments before the slow
/// path's first round ends): 10 segments arrive at 205 ms, the ACKs at 210 ms release the
/// last 6, which arrive at 215 ms.
#[test]
fn dmptcp_keeps_a_short_flow_on_the_fast_path() {
    let total = 16 * MSS;
    let run = |sched: &str| {
        let mut p = pair(sched, None);
        p.drive_until(at_ms(200));
        p.client.write(total);
        let done = p.run_until_delivered(total, at_ms(5_000));
        (done, first_data_on(&p, 1), p.client_sf(0).bytes_sent)
    };
    let (done_minrtt, slow_minrtt, _) = run("minrtt");
    let (done_dmptcp, slow_dmptcp, fast_dmptcp) = run("dmptcp");
    assert_eq!(slow_minrtt, Some(at_ms(200)));
    assert_eq!(slow_dmptcp, None, "no data on the slow path");
    assert_eq!(fast_dmptcp, total);
    assert_eq!((done_minrtt, done_dmptcp), (at_ms(220), at_ms(215)));
}

/// A long flow: DMPTCP uses both paths (the fast one alone cannot finish in time).
#[test]
fn dmptcp_uses_both_paths_for_a_long_flow() {
    let total = 3_000_000;
    let mut d = pair("dmptcp", Some(10_000_000));
    d.client.write(total);
    d.run_until_delivered(total, at_ms(10_000));
    assert_eq!(first_data_on(&d, 1), Some(JOINED_RATED));
    assert_eq!(d.client_sf(0).bytes_sent + d.client_sf(1).bytes_sent, total);
}

/// Preference [0, 1]: path 0 is masked, so nothing is sent until subflow 1 may carry data at
/// 90 ms, and everything goes on it; [1, 0] keeps a long flow on path 0 alone.
#[test]
fn preference_selects_the_carrier() {
    let total = 100_000;
    let mut d = pair("dmptcp", None);
    d.client.set_path_preference(&[0.0, 1.0]);
    d.client.write(total);
    d.run_until_delivered(total, at_ms(5_000));
    assert_eq!(first_data_on(&d, 0), None);
    assert_eq!(first_data_on(&d, 1), Some(at_ms(90)));
    assert_eq!(d.client_sf(1).bytes_sent, total);

    let total = 3_000_000;
    let mut d = pair("dmptcp", Some(10_000_000));
    d.client.set_path_preference(&[1.0, 0.0]);
    d.client.write(total);
    d.run_until_delivered(total, at_ms(10_000));
    assert_eq!(first_data_on(&d, 1), None);
    // Cleared: srtt order again, and the long flow's set is both paths.
    d.client.clear_path_preference();
    d.client.write(total);
    d.run_until_delivered(2 * total, at_ms(20_000));
    assert!(first_data_on(&d, 1).is_some());
}

/// Schedulers that ignore the preference behave the same with and without it.
#[test]
fn minrtt_ignores_the_preference() {
    let total = 1_000_000;
    let run = |pref: Option<&[f32]>| {
        let mut m = pair("minrtt", Some(10_000_000));
        if let Some(p) = pref {
            m.client.set_path_preference(p);
        }
        m.client.write(total);
        let done = m.run_until_delivered(total, at_ms(10_000));
        (done, m.client_sf(0).bytes_sent, m.client_sf(1).bytes_sent)
    };
    assert_eq!(run(None), run(Some(&[0.0, 1.0])));
}

/// The stored preference: one value per subflow, non-positive, NaN and missing values as 0;
/// nothing positive means no preference.
#[test]
fn preference_is_normalised() {
    let mut p = pair("dmptcp", None);
    p.client.set_path_preference(&[0.5, f32::NAN, 3.0]);
    assert_eq!(p.client.path_preference(), Some(&[0.5, 0.0][..]));
    p.client.set_path_preference(&[-1.0, 0.25]);
    assert_eq!(p.client.path_preference(), Some(&[0.0, 0.25][..]));
    p.client.set_path_preference(&[1.0]);
    assert_eq!(p.client.path_preference(), Some(&[1.0, 0.0][..]));
    p.client.set_path_preference(&[0.0, -2.0]);
    assert_eq!(p.client.path_preference(), None);
    p.client.set_path_preference(&[1.0, 1.0]);
    p.client.clear_path_preference();
    assert_eq!(p.client.path_preference(), None);
}
