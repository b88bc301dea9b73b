use crate::util::*;

#[test]
fn scratch_pen() {
    let mut cfg = multipath_config("minrtt", 2, 64 << 10);
    cfg.cc = "external".into();
    let mut p = Pair::new(cfg).with_path(0, ms(10), Some(20_000_000)).with_path(1, ms(100), Some(1_000_000));
    p.client.write(100 << 20);
    while p.now < at_ms(400) {
        let before = p.client.info().penalizations;
        let s0 = p.client_sf(0).srtt.0 / 1000;
        p.step();
        if p.now > at_ms(360) {
            println!(
                "{} pen {}->{} srtt0 {}->{} srtt1 {} cwnd1 {}",
                p.now.0 / 1000,
                before,
                p.client.info().penalizations,
                s0,
                p.client_sf(0).srtt.0 / 1000,
                p.client_sf(1).srtt.0 / 1000,
                p.client_sf(1).cwnd / MSS
            );
        }
    }
}
