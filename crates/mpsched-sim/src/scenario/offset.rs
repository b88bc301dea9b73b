//! Trace start offsets (`trace_offset_s`): a link replays its mahimahi trace from a point
//! other than t = 0, so that seeds differ on a real trace (every seed replayed the same
//! opportunities before).

use std::sync::Arc;

use super::resolve::Resolver;
use super::{ScenarioError, TraceOffset};
use crate::link::Trace;
use crate::ranges::show;
use crate::rng::Rng;

/// The trace seen from `offset_ms` on (`0 <= offset_ms < period`): opportunity `t` of lap `k`
/// (at `k·P + t`) moves to `k·P + t − offset`, the period `P` unchanged. Each timestamp
/// becomes `(t − offset) mod P`, in `[0, P)`, which every lap repeats.
pub fn rotate(trace: &Trace, offset_ms: u64) -> Trace {
    let period = trace.period_ms();
    if offset_ms == 0 {
        return Trace::with_period(trace.times_ms.clone(), period);
    }
    let mut times: Vec<u64> = trace.times_ms.iter().map(|&t| (t % period + period - offset_ms) % period).collect();
    times.sort_unstable();
    Trace::with_period(times, period)
}

impl Resolver<'_> {
    /// The offset of a link's trace in ms (validated against the trace's period), and the value
    /// the resolved scenario records (the number drawn for `"random"`).
    pub(super) fn trace_offset(
        &self,
        field: &str,
        link: &str,
        spec: TraceOffset,
        trace: &Trace,
    ) -> Result<(u64, f64), ScenarioError> {
        let period = trace.period_ms();
        let ms = match spec {
            TraceOffset::Random => {
                let u = Rng::stream(self.seed, &format!("link/{link}/trace_offset")).uniform();
                ((u * period as f64) as u64).min(period - 1)
            }
            TraceOffset::Seconds(s) => {
                let s = self.non_negative(field, s)?;
                let ms = (s * 1e3).round();
                if ms >= period as f64 {
                    return Err(self.err(
                        field,
                        format!(
                            "expected an offset below the trace's period ({} s), got {}",
                            show(period as f64 / 1e3),
                            show(s)
                        ),
                    ));
                }
                ms as u64
            }
        };
        Ok((ms, ms as f64 / 1e3))
    }

    /// `trace` shifted by the link's `trace_offset_s`, if it has one; the value to record.
    pub(super) fn offset_trace(
        &self,
        field: &str,
        link: &str,
        spec: Option<TraceOffset>,
        trace: Option<Arc<Trace>>,
    ) -> Result<(Option<Arc<Trace>>, Option<f64>), ScenarioError> {
        match (spec, trace) {
            (None, t) => Ok((t, None)),
            (Some(_), None) => Err(self.err(field, "expected a `trace` beside it (the offset is into the trace)")),
            (Some(o), Some(t)) => {
                let (ms, s) = self.trace_offset(field, link, o, &t)?;
                Ok((Some(if ms == 0 { t } else { Arc::new(rotate(&t, ms)) }), Some(s)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opportunities(t: &Trace, until: u64) -> Vec<u64> {
        let p = t.period_ms();
        (0..).flat_map(|lap| t.times_ms.iter().map(move |&x| lap * p + x)).take_while(|&x| x <= until).collect()
    }

    #[test]
    fn rotation_shifts_every_opportunity_by_the_offset() {
        let t = Trace::new(vec![0, 2, 2, 5, 10]);
        for off in 0..10 {
            let r = rotate(&t, off);
            assert_eq!(r.period_ms(), 10, "offset {off}");
            let want: Vec<u64> =
                opportunities(&t, 40 + off).into_iter().filter(|&x| x >= off).map(|x| x - off).collect();
            assert_eq!(opportunities(&r, 40), want, "offset {off}");
        }
        // Offset 3: 5 -> 2, 10 -> 7, 0 -> 7 (the next lap's 10), 2 -> 9.
        assert_eq!(rotate(&t, 3).times_ms, vec![2, 7, 7, 9, 9]);
    }
}
