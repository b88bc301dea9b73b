//! The upstream Linux MPTCP packet scheduler (`default` in `net.mptcp.available_schedulers`):
//! net/mptcp/protocol.c `mptcp_subflow_get_send`, reached through `mptcp_sched_get_send` /
//! `mptcp_sched_default` (net/mptcp/sched.c), with the burst of `__subflow_push_pending`.
//!
//! - Among the active subflows (`mptcp_subflow_active`), the one with the lowest *linger
//!   time*, queued bytes / pacing rate (`sk_wmem_queued << 32 / avg_pacing_rate`); backups are
//!   ranked apart and used only when no active subflow is usable (`nr_active == 0`).
//! - The pacing rate is the kernel's `tcp_update_pacing_rate`: max(cwnd, in flight) / srtt,
//!   × 200 % while cwnd < ssthresh/2, else × 120 %. Each subflow keeps a running average
//!   (`avg_pacing_rate`), started from the rate and updated when the subflow is picked, weighted
//!   by its queued bytes and the burst: avg = (avg·queued + rate·burst) / (burst + queued).
//! - The picked subflow keeps receiving data for a burst of `MPTCP_SEND_BURST_SIZE` (64 KB,
//!   at most the connection's send window) while it can take it.
//!
//! The simulator hands data to a subflow only when its congestion window has room (it keeps no
//! per-subflow send queue), so "can take it" is window space here, where the kernel asks for
//! send-buffer room (`sk_stream_memory_free`) and may queue data beyond the window; candidates
//! are the subflows with window space, and when every usable active subflow is full the
//! connection waits. Queued bytes are the bytes sent and not yet acknowledged on the subflow.
//! No opportunistic retransmission or penalisation (those are the out-of-tree v0.95 minRTT's,
//! `minrtt`). Reinjected data goes, as in `mptcp_subflow_get_retrans`, to the first active
//! subflow that has nothing outstanding and has not carried it, else to minRTT's choice.

use super::{SchedView, Scheduler, SubflowSet, Verdict};
use crate::algo::FromParams;
use crate::cc::kernel_pacing_rate;
use crate::info::SubflowInfo;
use crate::time::Instant;

/// `MPTCP_SEND_BURST_SIZE`: bytes pushed to one subflow before the scheduler chooses again.
pub const SEND_BURST: u64 = 65_536;

crate::params! {
    /// The upstream scheduler's parameters.
    pub struct UpstreamParams {
        /// Bytes sent on the picked subflow before choosing again (`MPTCP_SEND_BURST_SIZE`).
        burst_bytes: u64 = SEND_BURST, ">= 1" if |x: &u64| *x >= 1;
    }
}

/// The scheduler; see the module docs.
#[derive(Clone, Debug)]
pub struct Upstream {
    burst_size: u64,
    /// Bytes of the current burst left (`msk->snd_burst`) and its subflow.
    burst: u64,
    last: Option<usize>,
    /// `subflow->avg_pacing_rate`, bytes/s; 0 = not started.
    avg_pace: [u64; 16],
}

impl FromParams for Upstream {
    type Params = UpstreamParams;
    fn from_params(p: &UpstreamParams) -> Self {
        Upstream { burst_size: p.burst_bytes, burst: 0, last: None, avg_pace: [0; 16] }
    }
}

/// The kernel's `sk_pacing_rate` of a subflow (`tcp_update_pacing_rate`), bytes/s; before an
/// RTT sample the kernel does not divide by srtt: effectively unlimited.
pub fn pacing_rate(s: &SubflowInfo) -> u64 {
    kernel_pacing_rate(s.cwnd, s.ssthresh, s.outstanding, s.srtt).unwrap_or(u64::MAX >> 16)
}

impl Upstream {
    /// `mptcp_subflow_get_send`: the lowest-linger active subflow with room (backups when no
    /// active subflow is usable); starts its burst and updates its average pacing rate.
    fn pick(&mut self, v: &SchedView) -> Option<usize> {
        let mut best: [(Option<usize>, u128); 2] = [(None, u128::MAX); 2];
        let mut nr_active = 0;
        for (i, s) in v.subflows.iter().enumerate().take(16) {
            if !s.usable {
                continue;
            }
            nr_active += !s.backup as usize;
            if !s.available {
                continue;
            }
            if self.avg_pace[i] == 0 {
                self.avg_pace[i] = pacing_rate(&s.info);
            }
            let pace = self.avg_pace[i];
            if pace == 0 {
                continue;
            }
            let linger = ((s.queued as u128) << 32) / pace as u128;
            let class = &mut best[s.backup as usize];
            if linger < class.1 {
                *class = (Some(i), linger);
            }
        }
        let i = if nr_active == 0 { best[1].0 } else { best[0].0 }?;
        let burst = self.burst_size.min(v.send_window);
        if burst > 0 {
            let wmem = v.subflows[i].queued as u128;
            let avg = self.avg_pace[i] as u128 * wmem + pacing_rate(&v.subflows[i].info) as u128 * burst as u128;
            self.avg_pace[i] = (avg / (burst as u128 + wmem)) as u64;
        }
        (self.burst, self.last) = (burst, Some(i));
        Some(i)
    }

    /// The burst's subflow, if the burst goes on: bytes left, and the subflow can take data and
    /// is in the class the scheduler would use.
    fn in_burst(&self, v: &SchedView) -> Option<usize> {
        let i = self.last.filter(|_| self.burst > 0)?;
        let s = v.subflows.get(i)?;
        let active_usable = v.subflows.iter().any(|x| x.usable && !x.backup);
        (s.available && (!s.backup || !active_usable)).then_some(i)
    }
}

impl Scheduler for Upstream {
    fn name(&self) -> &'static str {
        "upstream"
    }

    fn hides_full_subflow_windows(&self) -> bool {
        true
    }

    fn get_send(&mut self, _now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        let Some(i) = self.in_burst(v).or_else(|| self.pick(v)) else { return Verdict::Wait };
        self.burst = self.burst.saturating_sub(v.seg_len as u64);
        out.insert(i);
        Verdict::Send
    }

    fn get_retrans(&mut self, _now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        let idle = v.subflows.iter().position(|s| s.usable && s.available && !s.backup && !s.carried && s.queued == 0);
        super::send_on(idle.or_else(|| v.min_rtt()), out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::info::ConnInfo;
    use crate::sched::tests::{at_ms, backup, busy, carried, idle, reinj_view, retrans, send, sf, unusable, view, MSS};
    use crate::sched::SchedSpec;

    fn up() -> Upstream {
        Upstream::from_params(&UpstreamParams::default())
    }

    /// Pacing rate by hand: 10 segments of 1448 B over 10 ms, slow start (200 %):
    /// 2 × 14 480 B / 0.01 s = 2 896 000 B/s; past ssthresh/2, 120 %: 1 737 600 B/s.
    #[test]
    fn pacing_rate_is_the_kernels() {
        let mut s = idle(10).info;
        assert_eq!(pacing_rate(&s), 2_896_000);
        s.ssthresh = 20 * MSS;
        assert_eq!(pacing_rate(&s), 1_737_600);
    }

    /// The lowest linger time wins, not the lowest srtt: subflow 0 (10 ms, cwnd 10, 9 segments
    /// queued: 13 032 B / 2 896 000 B/s = 4.5 ms) against subflow 1 (40 ms, nothing queued:
    /// 0 ms). With both queues empty the lower index wins the tie.
    #[test]
    fn lowest_linger_time_wins() {
        let conn = ConnInfo::default();
        let subs = [sf(10, 10, 9), idle(40)];
        assert_eq!(send(&mut up(), at_ms(0), &view(&subs, &conn)), (Verdict::Send, vec![1]));
        let subs = [idle(40), idle(10)];
        assert_eq!(send(&mut up(), at_ms(0), &view(&subs, &conn)), (Verdict::Send, vec![0]));
        // Subflow 0 with 2 segments queued at 2 896 000 B/s lingers 1 ms; subflow 1 with 1
        // segment at 40 ms / cwnd 10 (724 000 B/s) lingers 2 ms: subflow 0.
        let subs = [sf(10, 10, 2), sf(40, 10, 1)];
        assert_eq!(send(&mut up(), at_ms(0), &view(&subs, &conn)), (Verdict::Send, vec![0]));
    }

    /// A burst of 64 KB stays on the picked subflow: 65 536 / 1448 → 46 segments (the 46th
    /// starts with 376 bytes of burst left), then the choice is made again.
    #[test]
    fn burst_sticks_to_the_picked_subflow() {
        let conn = ConnInfo::default();
        let mut s = up();
        let first = [sf(10, 100, 1), idle(40)];
        assert_eq!(send(&mut s, at_ms(0), &view(&first, &conn)).1, vec![1]);
        // Subflow 0 now lingers less, but the burst goes on.
        let later = [idle(10), sf(40, 100, 50)];
        for k in 2..=46 {
            assert_eq!(send(&mut s, at_ms(0), &view(&later, &conn)).1, vec![1], "segment {k}");
        }
        assert_eq!(s.burst, 0);
        assert_eq!(send(&mut s, at_ms(0), &view(&later, &conn)).1, vec![0]);
    }

    /// A burst ends early when its subflow's window is full; the burst is at most the
    /// connection's send window.
    #[test]
    fn burst_ends_when_the_subflow_is_full_or_the_window_is_small() {
        let conn = ConnInfo::default();
        let mut s = up();
        assert_eq!(send(&mut s, at_ms(0), &view(&[idle(40), sf(10, 10, 5)], &conn)).1, vec![0]);
        assert_eq!(send(&mut s, at_ms(0), &view(&[busy(40), sf(10, 10, 5)], &conn)).1, vec![1]);
        let mut s = up();
        let subs = [idle(40), idle(40)];
        let v = SchedView { send_window: 2 * MSS, ..view(&subs, &conn) };
        s.get_send(at_ms(0), &v, &mut SubflowSet::default());
        assert_eq!(s.burst, MSS);
    }

    /// Backups only when no active subflow is usable; a full active subflow means wait.
    #[test]
    fn backup_only_without_usable_active() {
        let conn = ConnInfo::default();
        assert_eq!(send(&mut up(), at_ms(0), &view(&[busy(10), backup(idle(5))], &conn)), (Verdict::Wait, vec![]));
        assert_eq!(send(&mut up(), at_ms(0), &view(&[unusable(10), backup(idle(5))], &conn)).1, vec![1]);
        assert_eq!(send(&mut up(), at_ms(0), &view(&[backup(idle(5)), idle(50)], &conn)).1, vec![1]);
        assert_eq!(send(&mut up(), at_ms(0), &view(&[unusable(10), unusable(5)], &conn)).0, Verdict::Wait);
    }

    /// avg_pacing_rate by hand: subflow 1 (40 ms, cwnd 10, 1 segment queued: rate 724 000 B/s)
    /// picked with a 64 KB burst: avg = (724 000 × 1448 + 724 000 × 65 536) / (65 536 + 1448)
    /// = 724 000 (the rate did not change); after its cwnd doubles to 20 (rate 1 448 000) with 4
    /// segments queued: (724 000 × 5792 + 1 448 000 × 65 536) / 71 328 = 1 389 209.
    #[test]
    fn average_pacing_rate_update() {
        let conn = ConnInfo::default();
        let mut s = up();
        s.get_send(at_ms(0), &view(&[busy(10), sf(40, 10, 1)], &conn), &mut SubflowSet::default());
        assert_eq!(s.avg_pace[1], 724_000);
        s.burst = 0;
        s.get_send(at_ms(0), &view(&[busy(10), sf(40, 20, 4)], &conn), &mut SubflowSet::default());
        assert_eq!(s.avg_pace[1], (724_000u128 * 5792 + 1_448_000 * 65_536) as u64 / 71_328);
        assert_eq!(s.avg_pace[1], 1_389_209);
    }

    /// Reinjection: the first active subflow with nothing outstanding that has not carried the
    /// segment, else minRTT's choice.
    #[test]
    fn reinjection_prefers_an_idle_subflow() {
        let conn = ConnInfo::default();
        let subs = [carried(idle(10)), sf(20, 10, 3), idle(50)];
        assert_eq!(retrans(&mut up(), at_ms(0), &reinj_view(&subs, &conn)).1, vec![2]);
        let subs = [carried(idle(10)), sf(20, 10, 3)];
        assert_eq!(retrans(&mut up(), at_ms(0), &reinj_view(&subs, &conn)).1, vec![1]);
    }

    #[test]
    fn registered_with_typed_parameters() {
        let s = SchedSpec::parse("upstream").unwrap();
        assert_eq!(s.build().name(), "upstream");
        let s = SchedSpec::parse("upstream:burst_bytes=1448").unwrap();
        assert_eq!(s.label(), "upstream:burst_bytes=1448");
        assert!(!s.build().opportunistic_retransmission());
        assert!(SchedSpec::parse("upstream:burst_bytes=0").is_err());
    }
}
