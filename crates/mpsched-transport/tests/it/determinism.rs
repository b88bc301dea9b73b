//! Determinism: the transport has no clock, RNG or hash-order dependence, so the same script
//! gives the same segments at the same instants, bit for bit.

use crate::util::*;
use mpsched_transport::SubflowConfig;

/// A busy script: bottleneck, CUBIC, scattered losses, a burst, lost ACKs and a blackout.
fn script(extra_loss: Option<u64>) -> Pair {
    let mut p = Pair::new(config("cubic", SubflowConfig::linux()))
        .with_delay(ms(15))
        .with_rate(20_000_000)
        .with_fault(drop_data_nos(Dir::C2S, &[5, 17, 40, 41, 42, 43, 44, 45, 120]))
        .with_fault(drop_acks_between(Dir::S2C, at_ms(300), at_ms(320)))
        .with_fault(drop_data_between(Dir::C2S, at_ms(600), at_ms(900)));
    if let Some(n) = extra_loss {
        p = p.with_fault(drop_nth_data(Dir::C2S, n));
    }
    p.client.write(2_000_000);
    p.server.write(50 * MSS);
    p.run_until_delivered(2_000_000, at_ms(60_000));
    p.drive();
    p
}

#[test]
fn same_script_same_segment_log() {
    let a = script(None);
    let b = script(None);
    assert!(a.log.len() > 1000);
    assert!(a.client_info().rto_count > 0 && a.client_info().fast_recoveries > 0, "the script exercises both");
    assert_eq!(a.log, b.log);
    assert_eq!(a.client_trace, b.client_trace);
    assert_eq!(a.server_trace, b.server_trace);
    assert_eq!(a.now, b.now);
    assert_eq!(a.client.info(), b.client.info());
    assert_eq!(a.server.info(), b.server.info());
    assert_eq!(a.server.info().bytes_delivered, 2_000_000);
    assert_eq!(a.client.info().bytes_delivered, 50 * MSS);
}

#[test]
fn a_different_script_gives_a_different_log() {
    let a = script(None);
    let c = script(Some(200));
    assert_ne!(a.log, c.log);
    // Identical up to the extra drop.
    let k = a.log.iter().zip(&c.log).position(|(x, y)| x != y).unwrap();
    assert_eq!(c.log[k].data_no, Some(200));
    assert!(c.log[k].dropped() && !a.log[k].dropped());
}
