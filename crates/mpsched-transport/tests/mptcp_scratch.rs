mod util;
use mpsched_transport::*;
use util::*;

fn hol(sched: &str, cc: &str, slow_delay: u64, slow_rate: u64) -> (ConnInfo, ConnInfo, Pair) {
    let mut cfg = multipath_config(sched, 2, 64 << 10);
    cfg.cc = cc.into();
    let mut p = Pair::new(cfg)
        .with_path(0, ms(10), Some(20_000_000))
        .with_path(1, ms(slow_delay), Some(slow_rate));
    p.client.write(100 << 20);
    p.drive_until(at_ms(3000));
    let c = p.client.info_at(p.now);
    let s = p.server.info_at(p.now);
    (c, s, p)
}

#[test]
fn scratch_hol() {
    for cc in ["external", "newreno"] {
    for sched in ["minrtt", "minrtt-norp", "blest", "ecf", "roundrobin", "redundant"] {
        for (d, r) in [(100, 1_000_000), (200, 500_000), (50, 2_000_000)] {
            let (c, s, p) = hol(sched, cc, d, r);
            println!("{cc} {sched} {d} {r}: deliv {} dup {} rwndfull {:.3} blocked {:.3} opp {} pen {} reinj {} sf1 sent {} steps {} ooo {:.1}",
                s.bytes_delivered, s.duplicate_bytes, s.rwnd_full_seconds, c.send_blocked_seconds, c.opportunistic_retransmissions, c.penalizations, c.reinjected_bytes, p.client_sf(1).bytes_sent, p.log.len(), s.ooo_byte_seconds);
        }
    }
    }
}
