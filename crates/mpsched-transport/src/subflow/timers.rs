//! Timer expiry: delayed ACK, pacing, the persist (zero-window probe) timer of RFC 9293
//! 3.8.6.1, and the retransmission timeout of RFC 6298 with Karn's backoff.

use super::{Recovery, Subflow, SubflowCx, SubflowState, Timer};
use crate::cc::CongestionControl;
use crate::time::{Duration, Instant};

impl Subflow {
    /// The retransmission timeout with exponential backoff, capped at the maximum RTO.
    pub(super) fn current_rto(&self) -> Duration {
        let base = self.rtt.rto();
        let d = base.saturating_mul(1u64 << self.backoff.min(30));
        d.min(self.rtt.max_rto())
    }

    /// Earliest timer deadline.
    #[inline]
    pub fn poll_timeout(&self) -> Option<Instant> {
        min_deadline(&self.timers)
    }

    /// Whether timer `t` is armed for `now` or earlier.
    #[inline]
    fn expired(&self, t: Timer, now: Instant) -> bool {
        self.timers[t as usize].is_some_and(|at| at <= now)
    }

    /// Fires expired timers.
    pub fn handle_timeout(&mut self, now: Instant, _cx: &mut SubflowCx) {
        if self.expired(Timer::DelayedAck, now) {
            self.timers[Timer::DelayedAck as usize] = None;
            if self.unacked_segs > 0 {
                self.ack_now = true;
            }
        }
        if self.expired(Timer::Pacing, now) {
            self.timers[Timer::Pacing as usize] = None;
        }
        if self.expired(Timer::Probe, now) {
            self.probe_pending = true;
            self.probe_backoff = (self.probe_backoff + 1).min(10);
            let d = self.rtt.rto().saturating_mul(1 << self.probe_backoff).min(self.rtt.max_rto());
            self.timers[Timer::Probe as usize] = Some(now + d);
        }
        if self.expired(Timer::Rto, now) {
            self.on_rto(now);
        }
        if self.expired(Timer::TimeWait, now) {
            self.finish();
        }
    }

    /// The peer's window is closed and nothing is in flight: arm the persist timer (RFC 9293
    /// 3.8.6.1) so a lost window update cannot stall the connection.
    pub fn arm_probe(&mut self, now: Instant) {
        if self.timers[Timer::Probe as usize].is_none() && self.snd_una == self.snd_nxt {
            self.timers[Timer::Probe as usize] = Some(now + self.rtt.rto());
        }
    }

    fn on_rto(&mut self, now: Instant) {
        if self.pre_established {
            // The MP_JOIN third ACK (or the server's ACK of it) was lost: repeat it, with
            // backoff. Not a data RTO (Linux uses a separate timer for it).
            self.backoff = (self.backoff + 1).min(30);
            self.ack_now = true;
            self.timers[Timer::Rto as usize] = Some(now + self.current_rto());
            return;
        }
        self.stats.rto_count += 1;
        self.backoff = (self.backoff + 1).min(30);
        match self.state {
            SubflowState::SynSent | SubflowState::SynReceived => {
                self.syn_pending = true;
                self.timers[Timer::Rto as usize] = Some(now + self.current_rto());
                return;
            }
            SubflowState::Established
            | SubflowState::CloseWait
            | SubflowState::FinWait1
            | SubflowState::Closing
            | SubflowState::LastAck
                if self.snd_una < self.snd_nxt => {}
            _ => {
                self.timers[Timer::Rto as usize] = None;
                return;
            }
        }
        if self.on_close_rto() {
            return;
        }
        self.cc_state.pipe = self.pipe();
        let repeated = matches!(self.recovery, Recovery::Rto { .. }) && self.snd_una == self.rto_una;
        let ssthresh = self.cc_state.ssthresh;
        self.cc.on_rto(now, &mut self.cc_state);
        if repeated {
            // RFC 5681 3.1: the segment was already resent by the timer; keep ssthresh.
            self.cc_state.ssthresh = ssthresh;
        }
        self.rto_una = self.snd_una;
        self.fast_retx_pending = false;
        self.sb.enter_loss();
        self.recovery = Recovery::Rto { point: self.snd_nxt };
        self.cc_state.in_recovery = false; // the window grows again in slow start
        self.timers[Timer::Rto as usize] = Some(now + self.current_rto());
    }
}

/// The earliest of `deadlines` (`None` if none is set). Written as a branch-free fold over the
/// raw times (an unset timer counts as `u64::MAX`, and a flag says whether any was set): the
/// connection asks after every input and every transmission, and `iter().flatten().min()`
/// branched per timer (issue 22, fourth pass).
#[inline]
pub(crate) fn min_deadline(deadlines: &[Option<Instant>]) -> Option<Instant> {
    let (mut m, mut any) = (u64::MAX, false);
    for t in deadlines {
        m = m.min(t.map_or(u64::MAX, |t| t.0));
        any |= t.is_some();
    }
    any.then_some(Instant(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fold gives what `iter().flatten().min()` gives, including a deadline at `u64::MAX`.
    #[test]
    fn min_deadline_is_the_earliest_set_deadline() {
        let t = |x| Some(Instant(x));
        assert_eq!(min_deadline(&[None, None, None]), None);
        assert_eq!(min_deadline(&[]), None);
        assert_eq!(min_deadline(&[None, t(7), None, t(3), t(9)]), t(3));
        assert_eq!(min_deadline(&[t(0), None]), t(0));
        assert_eq!(min_deadline(&[None, t(u64::MAX)]), t(u64::MAX));
        assert_eq!(min_deadline(&[t(u64::MAX), t(u64::MAX - 1)]), t(u64::MAX - 1));
    }
}
