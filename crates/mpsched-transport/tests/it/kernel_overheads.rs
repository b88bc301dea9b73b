//! The linux profile's two per-packet overheads measured on the kernel engine (Linux 6.18,
//! docs/fidelity.md `mptcp-het-256k`): the DSS option of a multipath connection's segments, and
//! the share of a receive buffer that holds payload (`tcp_win_from_space` with the kernel's
//! `scaling_ratio`). The other protocol tests leave both out ([`linux_whole_segments`]).

use crate::util::*;
use mpsched_transport::{ConnConfig, DssBytes, SubflowConfig, LINUX_SCALING_RATIO};

fn linux(paths: usize, rcv_buf: u64) -> ConnConfig {
    ConnConfig { subflow: SubflowConfig::linux(), ..multipath_config("minrtt", paths, rcv_buf) }
}

#[test]
fn multipath_segments_carry_the_dss_option_in_1500_byte_packets() {
    let mut p = Pair::new(linux(2, 16 << 20));
    p.client.write(200 * MSS);
    p.drive_until(at_ms(2000));
    let data: Vec<_> = p.data(Dir::C2S).collect();
    assert!(data.len() >= 200, "{} data segments", data.len());
    // The kernel's payload per packet on a subflow: 1,448 − 24 = 1,424, on both paths.
    assert_eq!(DssBytes::LINUX, DssBytes { data: 24, ack: 12 });
    for s in data.iter().filter(|s| s.seg.len as u64 != (200 * MSS) % 1424) {
        assert_eq!((s.seg.len, s.seg.mp_opt, s.seg.wire_size()), (1424, 24, 1500), "{s:?}");
    }
    assert!(data.iter().any(|s| s.path == 1), "both subflows carry data");
    // Pure ACKs carry the 64-bit DATA_ACK: 64 bytes, 76 with one SACK block (as captured).
    for a in p.pure_acks(Dir::S2C).filter(|a| a.seg.n_sack == 0) {
        assert_eq!((a.seg.mp_opt, a.seg.wire_size()), (12, 64), "{a:?}");
    }
    assert_eq!(p.server.info().bytes_delivered, 200 * MSS);
}

#[test]
fn a_single_path_connection_is_plain_tcp() {
    let mut p = Pair::new(linux(1, 16 << 20));
    p.client.write(50 * MSS);
    p.drive_until(at_ms(2000));
    assert!(p.data(Dir::C2S).all(|s| (s.seg.len, s.seg.mp_opt, s.seg.wire_size()) == (1448, 0, 1500)));
    assert!(p.pure_acks(Dir::S2C).filter(|a| a.seg.n_sack == 0).all(|a| a.seg.wire_size() == 52));
}

#[test]
fn the_ns3_profile_has_no_dss_option() {
    let cfg = ConnConfig { subflow: SubflowConfig::ns3(), ..linux(2, 16 << 20) };
    let mut p = Pair::new(cfg);
    p.client.write(50 * MSS);
    p.drive_until(at_ms(3000));
    assert!(p.data(Dir::C2S).all(|s| (s.seg.len, s.seg.mp_opt) == (1448, 0)));
    assert_eq!(p.server.info().bytes_delivered, 50 * MSS);
}

#[test]
fn a_256k_buffer_advertises_158_256ths_of_itself() {
    // The calibration row's buffer; the application never reads. The kernel advertised at most
    // 1,264 × 128 = 161,792 bytes: 262,144 × 158 / 256 = 161,792.
    assert_eq!(LINUX_SCALING_RATIO, 158);
    let rcv_buf = 256 * 1024;
    let payload = rcv_buf * 158 / 256;
    assert_eq!(payload, 161_792);
    let mut p = Pair::new(linux(2, rcv_buf)).server_not_reading();
    p.client.write(400 * MSS);
    p.drive_until(at_ms(5000));
    let max_end = p.data(Dir::C2S).map(|s| s.seg.dsn + s.seg.len as u64).max().unwrap();
    // 113 whole 1,424-byte segments fit in it (a 114th would pass the right edge by 544 bytes;
    // no partial segment is sent into the last 880).
    assert_eq!(max_end, 113 * 1424, "the sender fills the payload share, never beyond");
    assert_eq!(p.server.info().bytes_delivered, 113 * 1424);
    assert_eq!(p.server.info().rcv_window, payload - 113 * 1424);
}

#[test]
fn the_payload_share_of_any_buffer_is_computed_without_overflow() {
    let linux = SubflowConfig::linux();
    assert_eq!(linux.rcv_payload(262_144), 161_792);
    assert_eq!(linux.rcv_payload(u64::MAX), (u128::from(u64::MAX) * 158 / 256) as u64);
    assert_eq!(SubflowConfig::ns3().rcv_payload(u64::MAX), u64::MAX);
    assert_eq!(linux.rcv_payload(0), 0);
}
