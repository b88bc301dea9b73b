//! Timer expiry: delayed ACK, pacing, the persist (zero-window probe) timer of RFC 9293
//! 3.8.6.1, and the retransmission timeout of RFC 6298 with Karn's backoff.

use super::{Recovery, Subflow, SubflowCx, SubflowState, Timer, N_TIMERS};
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
        self.timers.earliest()
    }

    /// The earliest armed deadline of `a` and `b` together: one minimum over both timer
    /// arrays, equal to `min_deadline(&[a.poll_timeout(), b.poll_timeout()])` (an armed
    /// deadline is below [`UNSET`]).
    #[inline(always)]
    pub(crate) fn earliest_of_two(a: &Subflow, b: &Subflow) -> Option<Instant> {
        let m = a.timers.earliest_raw().min(b.timers.earliest_raw());
        let due = (m != UNSET).then_some(Instant(m));
        debug_assert_eq!(due, min_deadline(&[a.poll_timeout(), b.poll_timeout()]));
        due
    }

    /// [`Subflow::poll_timeout`] as raw nanoseconds, `u64::MAX` for none: an armed deadline is
    /// never `u64::MAX` ([`Timers`] keeps it one nanosecond earlier), so the raw value alone
    /// says whether one is set (the connection's deadline cache keeps these).
    #[inline]
    pub fn poll_timeout_raw(&self) -> u64 {
        self.timers.earliest_raw()
    }

    /// Whether timer `t` is armed for `now` or earlier.
    #[inline]
    fn expired(&self, t: Timer, now: Instant) -> bool {
        self.timers.get(t).is_some_and(|at| at <= now)
    }

    /// Fires expired timers.
    pub fn handle_timeout(&mut self, now: Instant, _cx: &mut SubflowCx) {
        if self.expired(Timer::DelayedAck, now) {
            self.timers.set(Timer::DelayedAck, None);
            if self.unacked_segs > 0 {
                self.ack_now = true;
            }
        }
        if self.expired(Timer::Pacing, now) {
            self.timers.set(Timer::Pacing, None);
        }
        if self.expired(Timer::Probe, now) {
            self.probe_pending = true;
            self.probe_backoff = (self.probe_backoff + 1).min(10);
            let d = self.rtt.rto().saturating_mul(1 << self.probe_backoff).min(self.rtt.max_rto());
            self.timers.set(Timer::Probe, Some(now + d));
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
        if self.timers.get(Timer::Probe).is_none() && self.snd_una == self.snd_nxt {
            self.timers.set(Timer::Probe, Some(now + self.rtt.rto()));
        }
    }

    fn on_rto(&mut self, now: Instant) {
        if self.pre_established {
            // The MP_JOIN third ACK (or the server's ACK of it) was lost: repeat it, with
            // backoff. Not a data RTO (Linux uses a separate timer for it).
            self.backoff = (self.backoff + 1).min(30);
            self.ack_now = true;
            self.timers.set(Timer::Rto, Some(now + self.current_rto()));
            return;
        }
        self.stats.rto_count += 1;
        self.backoff = (self.backoff + 1).min(30);
        match self.state {
            SubflowState::SynSent | SubflowState::SynReceived => {
                self.syn_pending = true;
                self.timers.set(Timer::Rto, Some(now + self.current_rto()));
                return;
            }
            SubflowState::Established
            | SubflowState::CloseWait
            | SubflowState::FinWait1
            | SubflowState::Closing
            | SubflowState::LastAck
                if self.snd_una < self.snd_nxt => {}
            _ => {
                self.timers.set(Timer::Rto, None);
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
        self.timers.set(Timer::Rto, Some(now + self.current_rto()));
    }
}

/// Raw value of a timer that is not armed.
const UNSET: u64 = u64::MAX;

/// A subflow's timer deadlines, indexed by [`Timer`], kept as raw nanoseconds with [`UNSET`]
/// for a timer that is not armed: the earliest deadline, asked after every input and every
/// transmission, is then a plain minimum (five `Option<Instant>`s cost a test and a select
/// each; issue 22, fourth pass). A deadline at `Instant::MAX` (reachable only by saturation,
/// never within a run) is kept one nanosecond earlier so that it still reads as armed.
#[derive(Clone, Copy, Debug)]
pub(super) struct Timers([u64; N_TIMERS]);

impl Default for Timers {
    fn default() -> Self {
        Timers([UNSET; N_TIMERS])
    }
}

impl Timers {
    /// Timer `t`'s deadline, if armed.
    #[inline]
    pub fn get(&self, t: Timer) -> Option<Instant> {
        let v = self.0[t as usize];
        (v != UNSET).then_some(Instant(v))
    }

    /// Arms timer `t` for `at`, or disarms it (`None`).
    #[inline]
    pub fn set(&mut self, t: Timer, at: Option<Instant>) {
        self.0[t as usize] = at.map_or(UNSET, |a| a.0.min(UNSET - 1));
    }

    /// The earliest armed deadline.
    #[inline]
    pub fn earliest(&self) -> Option<Instant> {
        let m = self.earliest_raw();
        (m != UNSET).then_some(Instant(m))
    }

    /// The earliest armed deadline's raw value, [`UNSET`] (`u64::MAX`) if none is armed.
    #[inline]
    pub fn earliest_raw(&self) -> u64 {
        self.0.iter().fold(UNSET, |m, &v| m.min(v))
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

    /// Armed timers read back as set, unarmed as `None`; the earliest is the minimum of the
    /// armed ones; a deadline at the end of time stays armed (one nanosecond earlier).
    #[test]
    fn timers_read_back_and_give_the_earliest() {
        let mut ts = Timers::default();
        assert_eq!((ts.get(Timer::Rto), ts.earliest()), (None, None));
        ts.set(Timer::Rto, Some(Instant(50)));
        ts.set(Timer::DelayedAck, Some(Instant(40)));
        ts.set(Timer::TimeWait, Some(Instant(0)));
        assert_eq!((ts.get(Timer::Rto), ts.get(Timer::Pacing)), (Some(Instant(50)), None));
        assert_eq!(ts.earliest(), Some(Instant(0)));
        ts.set(Timer::TimeWait, None);
        assert_eq!(ts.earliest(), Some(Instant(40)));
        let mut ts = Timers::default();
        ts.set(Timer::Probe, Some(Instant(u64::MAX)));
        assert_eq!(ts.earliest(), Some(Instant(u64::MAX - 1)));
    }
}
