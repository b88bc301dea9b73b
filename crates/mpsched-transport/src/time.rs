//! Integer nanosecond time. The transport never reads a clock: every input carries `now`.

use core::ops::{Add, AddAssign, Sub};

// `Instant - Instant` is deliberately not implemented: an earlier minus a later instant has no
// `Duration`. Use [`Instant::saturating_duration_since`] or [`Instant::checked_duration_since`].

/// Nanoseconds since the start of the simulation (or since the UDP driver's start epoch).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(pub u64);

/// A span of time in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub u64);

impl Instant {
    /// The epoch.
    pub const ZERO: Instant = Instant(0);
    /// The last representable instant (also "never" for timers).
    pub const MAX: Instant = Instant(u64::MAX);
    /// Nanoseconds since the epoch.
    #[inline]
    pub fn nanos(self) -> u64 {
        self.0
    }
    /// Seconds since the epoch.
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// Time elapsed since `earlier`, zero if `earlier` is later (as `std::time::Instant`).
    #[inline]
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
    /// Time elapsed since `earlier`, `None` if `earlier` is later.
    #[inline]
    pub fn checked_duration_since(self, earlier: Instant) -> Option<Duration> {
        self.0.checked_sub(earlier.0).map(Duration)
    }
    /// `self + d`, `None` past [`Instant::MAX`].
    #[inline]
    pub fn checked_add(self, d: Duration) -> Option<Instant> {
        self.0.checked_add(d.0).map(Instant)
    }
    /// `self + d`, clamped to [`Instant::MAX`] (what `+` does).
    #[inline]
    pub fn saturating_add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d.0))
    }
    /// `self - d`, `None` before [`Instant::ZERO`].
    #[inline]
    pub fn checked_sub(self, d: Duration) -> Option<Instant> {
        self.0.checked_sub(d.0).map(Instant)
    }
    /// `self - d`, clamped to [`Instant::ZERO`].
    #[inline]
    pub fn saturating_sub(self, d: Duration) -> Instant {
        Instant(self.0.saturating_sub(d.0))
    }
}

impl Duration {
    /// No time.
    pub const ZERO: Duration = Duration(0);
    /// The longest representable span.
    pub const MAX: Duration = Duration(u64::MAX);
    /// `n` nanoseconds.
    #[inline]
    pub const fn from_nanos(n: u64) -> Self {
        Duration(n)
    }
    /// `us` microseconds, clamped to [`Duration::MAX`].
    #[inline]
    pub const fn from_micros(us: u64) -> Self {
        Duration(us.saturating_mul(1_000))
    }
    /// `ms` milliseconds, clamped to [`Duration::MAX`].
    #[inline]
    pub const fn from_millis(ms: u64) -> Self {
        Duration(ms.saturating_mul(1_000_000))
    }
    /// `s` seconds, clamped to [`Duration::MAX`].
    #[inline]
    pub const fn from_secs(s: u64) -> Self {
        Duration(s.saturating_mul(1_000_000_000))
    }
    /// Rounds to the nearest nanosecond; negative or NaN inputs give zero.
    #[inline]
    pub fn from_secs_f64(s: f64) -> Self {
        if s.is_nan() || s <= 0.0 {
            Duration(0)
        } else {
            Duration((s * 1e9).round() as u64)
        }
    }
    /// Length in nanoseconds.
    #[inline]
    pub fn nanos(self) -> u64 {
        self.0
    }
    /// Length in seconds.
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// Length in milliseconds.
    #[inline]
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 * 1e-6
    }
    /// `self · k`, clamped to [`Duration::MAX`].
    #[inline]
    pub fn saturating_mul(self, k: u64) -> Duration {
        Duration(self.0.saturating_mul(k))
    }
    /// `self + o`, `None` on overflow.
    #[inline]
    pub fn checked_add(self, o: Duration) -> Option<Duration> {
        self.0.checked_add(o.0).map(Duration)
    }
    /// `self − o`, `None` if `o` is longer.
    #[inline]
    pub fn checked_sub(self, o: Duration) -> Option<Duration> {
        self.0.checked_sub(o.0).map(Duration)
    }
}

/// Saturating: clamps to [`Instant::MAX`].
impl Add<Duration> for Instant {
    type Output = Instant;
    #[inline]
    fn add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d.0))
    }
}
/// Saturating: clamps to [`Instant::MAX`].
impl AddAssign<Duration> for Instant {
    #[inline]
    fn add_assign(&mut self, d: Duration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
/// Saturating: clamps to [`Duration::MAX`].
impl Add for Duration {
    type Output = Duration;
    #[inline]
    fn add(self, o: Duration) -> Duration {
        Duration(self.0.saturating_add(o.0))
    }
}
/// Saturating: a longer `o` gives zero.
impl Sub for Duration {
    type Output = Duration;
    #[inline]
    fn sub(self, o: Duration) -> Duration {
        Duration(self.0.saturating_sub(o.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earlier_minus_later_is_zero_or_none() {
        let (a, b) = (Instant(5), Instant(7));
        assert_eq!(a.saturating_duration_since(b), Duration::ZERO);
        assert_eq!(a.checked_duration_since(b), None);
        assert_eq!(b.saturating_duration_since(a), Duration(2));
        assert_eq!(b.checked_duration_since(a), Some(Duration(2)));
        assert_eq!(a.checked_duration_since(a), Some(Duration::ZERO));
        assert_eq!(Instant::ZERO.saturating_duration_since(Instant::MAX), Duration::ZERO);
        assert_eq!(Instant::MAX.saturating_duration_since(Instant::ZERO), Duration::MAX);
        assert_eq!(a.checked_sub(Duration(6)), None);
        assert_eq!(a.saturating_sub(Duration(6)), Instant::ZERO);
        assert_eq!(a.checked_sub(Duration(5)), Some(Instant::ZERO));
        assert_eq!(Duration(3) - Duration(4), Duration::ZERO);
        assert_eq!(Duration(3).checked_sub(Duration(4)), None);
    }

    #[test]
    fn addition_near_u64_max_saturates_or_fails() {
        let t = Instant(u64::MAX - 10);
        assert_eq!(t + Duration(10), Instant::MAX);
        assert_eq!(t + Duration(11), Instant::MAX);
        assert_eq!(t + Duration::MAX, Instant::MAX);
        assert_eq!(t.checked_add(Duration(10)), Some(Instant::MAX));
        assert_eq!(t.checked_add(Duration(11)), None);
        assert_eq!(t.saturating_add(Duration(11)), Instant::MAX);
        let mut u = t;
        u += Duration(100);
        assert_eq!(u, Instant::MAX);
        assert_eq!(Duration(u64::MAX - 1) + Duration(2), Duration::MAX);
        assert_eq!(Duration(u64::MAX - 1).checked_add(Duration(2)), None);
        assert_eq!(Duration(1 << 40).saturating_mul(1 << 40), Duration::MAX);
        assert_eq!(Duration::from_secs(u64::MAX / 1000), Duration::MAX);
        assert_eq!(Duration::from_millis(u64::MAX), Duration::MAX);
        assert_eq!(Duration::from_micros(u64::MAX), Duration::MAX);
    }
}
