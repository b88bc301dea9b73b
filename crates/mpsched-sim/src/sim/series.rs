//! The timeseries rows as the periodic sample stores them: compact, exact integer sources,
//! turned into the table's columns (floats included) when the table is built.
//!
//! Why (BENCHMARKS.md, seventeenth pass, perf17s): `flows-1000` samples 1,000 flows every
//! 100 ms, 195,509 rows for 404,465 packets. Rows of 152 bytes (f64 columns computed at the
//! sample) were 29.7 MB written once and never read in the loop: 2.4 cache lines written to
//! freshly faulted memory per row. A row now keeps the integers the columns are computed from
//! (bytes, nanoseconds, counts since the previous sample) in 32 bits when they fit (80 bytes a
//! row), else in full in a side list ([`Series::wide`]), and the time once per sample: the
//! run's minor page faults 25,877 -> 22,823, D1 / LL misses per packet -3.2 % / -4.2 %, the
//! event loop -0.1 % (the float arithmetic moved to the table build, +9.6 M there). Every
//! column is computed by the same expression on the same values as before, so the table is
//! bit-identical.

use mpsched_transport::{Duration, SlotStats};

use crate::table::{Column, Table};

/// What a sample knows of one subflow: exact values, counters as differences to the
/// previous sample.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Sampled {
    /// Flow index; the names are written when the table is built (a `String` clone per row
    /// cost an allocation per subflow per sample).
    pub flow: u32,
    pub subflow: u32,
    pub cwnd: u64,
    /// Raw: `None` in the table when it is at least `i64::MAX` (not set).
    pub ssthresh: u64,
    pub srtt_ns: u64,
    pub rttvar_ns: u64,
    pub rto_ns: u64,
    pub inflight: u64,
    /// Payload bytes the subflow sent in the interval (throughput).
    pub sent: u64,
    /// Bytes acknowledged on the subflow in the interval (goodput).
    pub delivered: u64,
    /// Bytes the flow's receiving application got in the interval (flow goodput).
    pub app: u64,
    pub ooo_bytes: u64,
    pub rwnd_full_frac: f64,
    pub losses: u64,
    pub retransmits: u64,
    /// OLMS slot statistics of the interval: measured slots and their sums.
    pub measured: u64,
    pub bw_bps_sum: u128,
    pub srtt_ns_sum: u128,
}

/// A [`Sampled`] in 80 bytes: its counts in 32 bits (the RTO as 32 bits and a shift), `rwnd_full_frac` as an `f32`, the slot
/// sums in 64 bits. Only rows whose every value survives the narrowing exactly are stored
/// this way ([`Row::pack`]); the others are kept whole in [`Series::wide`].
#[derive(Clone, Copy, Debug, PartialEq)]
struct Row {
    flow: u32,
    subflow: u16,
    /// `rto_ns` is `rto << rto_shift`: a backed-off RTO passes 2³² ns (4.3 s), and its low bits
    /// are zeros (2.5 % of `flows-1000`'s rows had one).
    rto_shift: u8,
    cwnd: u32,
    /// `u32::MAX` for "not set" (any value of at least `i64::MAX`: the same `None` in the table).
    ssthresh: u32,
    srtt_ns: u32,
    rttvar_ns: u32,
    rto: u32,
    inflight: u32,
    sent: u32,
    delivered: u32,
    app: u32,
    ooo_bytes: u32,
    losses: u32,
    retransmits: u32,
    measured: u32,
    rwnd_full_frac: f32,
    bw_bps_sum: u64,
    srtt_ns_sum: u64,
}

impl Row {
    /// `s` narrowed, if nothing is lost; `None` if any value does not fit.
    #[inline]
    fn pack(s: &Sampled) -> Option<Row> {
        let ssthresh = match s.ssthresh {
            x if x >= i64::MAX as u64 => u32::MAX,
            // `u32::MAX` itself is the "not set" mark: a set ssthresh must be below it.
            x if x < u64::from(u32::MAX) => x as u32,
            _ => return None,
        };
        let rto_shift = 32u32.saturating_sub(s.rto_ns.leading_zeros());
        let rto = s.rto_ns >> rto_shift;
        if rto << rto_shift != s.rto_ns {
            return None;
        }
        // One test for the twelve counts: each fits in 32 bits iff their OR does.
        let high = s.cwnd
            | s.srtt_ns
            | s.rttvar_ns
            | s.inflight
            | s.sent
            | s.delivered
            | s.app
            | s.ooo_bytes
            | s.losses
            | s.retransmits
            | s.measured;
        let frac = s.rwnd_full_frac as f32;
        if high >> 32 != 0 || f64::from(frac).to_bits() != s.rwnd_full_frac.to_bits() {
            return None;
        }
        Some(Row {
            flow: s.flow,
            subflow: u16::try_from(s.subflow).ok()?,
            cwnd: s.cwnd as u32,
            ssthresh,
            srtt_ns: s.srtt_ns as u32,
            rttvar_ns: s.rttvar_ns as u32,
            rto_shift: rto_shift as u8,
            rto: rto as u32,
            inflight: s.inflight as u32,
            sent: s.sent as u32,
            delivered: s.delivered as u32,
            app: s.app as u32,
            ooo_bytes: s.ooo_bytes as u32,
            losses: s.losses as u32,
            retransmits: s.retransmits as u32,
            measured: s.measured as u32,
            rwnd_full_frac: frac,
            bw_bps_sum: u64::try_from(s.bw_bps_sum).ok()?,
            srtt_ns_sum: u64::try_from(s.srtt_ns_sum).ok()?,
        })
    }

    /// The [`Sampled`] a packed row came from (`ssthresh` "not set" as `u64::MAX`).
    fn unpack(&self) -> Sampled {
        Sampled {
            flow: self.flow,
            subflow: u32::from(self.subflow),
            cwnd: u64::from(self.cwnd),
            ssthresh: if self.ssthresh == u32::MAX { u64::MAX } else { u64::from(self.ssthresh) },
            srtt_ns: u64::from(self.srtt_ns),
            rttvar_ns: u64::from(self.rttvar_ns),
            rto_ns: u64::from(self.rto) << self.rto_shift,
            inflight: u64::from(self.inflight),
            sent: u64::from(self.sent),
            delivered: u64::from(self.delivered),
            app: u64::from(self.app),
            ooo_bytes: u64::from(self.ooo_bytes),
            rwnd_full_frac: f64::from(self.rwnd_full_frac),
            losses: u64::from(self.losses),
            retransmits: u64::from(self.retransmits),
            measured: u64::from(self.measured),
            bw_bps_sum: u128::from(self.bw_bps_sum),
            srtt_ns_sum: u128::from(self.srtt_ns_sum),
        }
    }
}

/// Timeseries accumulated at each sample: one row per subflow of every running flow.
///
/// Rows are kept as structs and turned into columns when the table is built: a push per column
/// (nineteen length checks and write streams per row) showed in the profile of many flows.
#[derive(Default)]
pub(super) struct Series {
    rows: Vec<Row>,
    /// The rows that did not fit a [`Row`], with their index in `rows` (where a placeholder
    /// stands).
    wide: Vec<(usize, Sampled)>,
    /// Per sample: the index of its first row and its time (ns).
    samples: Vec<(usize, u64)>,
}

impl Series {
    /// Rows so far.
    pub(super) fn rows(&self) -> usize {
        self.rows.len()
    }

    /// Starts the rows of the sample at `now_ns`.
    pub(super) fn start_sample(&mut self, now_ns: u64) {
        self.samples.push((self.rows.len(), now_ns));
    }

    /// Adds a row to the current sample.
    // By value and always inlined: the `Sampled` then stays in registers on the common path
    // (passed by reference to the cold path it was built on the stack first: +30
    // instructions a row).
    #[inline(always)]
    pub(super) fn push(&mut self, s: Sampled) {
        match Row::pack(&s) {
            Some(r) => self.rows.push(r),
            None => self.push_wide(s),
        }
    }

    #[cold]
    #[inline(never)]
    fn push_wide(&mut self, s: Sampled) {
        self.wide.push((self.rows.len(), s));
        self.rows.push(Row::pack(&Sampled::default()).expect("zeros fit"));
    }

    /// One column: `get` of every row in order. A pass over the packed rows with no branch
    /// (`get` inlines to the one field it reads, and the loop vectorises), then the wide
    /// rows' values written over their places (a branch per value made the table build
    /// 1.5x slower).
    fn column<T>(&self, get: impl Fn(&Sampled) -> T) -> Vec<T> {
        let mut column: Vec<T> = self.rows.iter().map(|r| get(&r.unpack())).collect();
        for (i, s) in &self.wide {
            column[*i] = get(s);
        }
        column
    }

    /// The timeseries table (columns in output order); `names` are the flows' names by index,
    /// `sample_ns` the sample interval (the rates' divisor). Every value is computed by the
    /// expression the sample used before the rows were compact, on the same operands.
    pub(super) fn into_table(self, names: &[&str], sample_ns: u64) -> Table {
        let dt = sample_ns as f64 / 1e9;
        let to_mbps = |bytes: u64| bytes as f64 * 8.0 / dt / 1e6;
        let slots = |s: &Sampled| SlotStats {
            slots: 0,
            measured: s.measured,
            bw_bps_sum: s.bw_bps_sum,
            srtt_ns_sum: s.srtt_ns_sum,
        };
        let mut time = Vec::with_capacity(self.rows.len());
        let ends = self.samples.iter().skip(1).map(|s| s.0).chain([self.rows.len()]);
        for (&(start, now), end) in self.samples.iter().zip(ends) {
            time.extend(std::iter::repeat_n(now as f64 / 1e9, end - start));
        }
        // Generic, not `&dyn Fn`: a call per value made the table build 2x slower.
        fn f64s(r: &Series, get: impl Fn(&Sampled) -> f64) -> Column {
            Column::F64(r.column(get))
        }
        fn i64s(r: &Series, get: impl Fn(&Sampled) -> u64) -> Column {
            Column::I64(r.column(|s| get(s) as i64))
        }
        let ms = |ns: u64| Duration(ns).as_millis_f64();
        let ssthresh = self.column(|s| if s.ssthresh >= i64::MAX as u64 { None } else { Some(s.ssthresh as i64) });
        let columns = vec![
            ("time_s", Column::F64(time)),
            ("flow", Column::Str(self.column(|s| names[s.flow as usize].to_owned()))),
            ("subflow", i64s(&self, |s| u64::from(s.subflow))),
            ("cwnd_bytes", i64s(&self, |s| s.cwnd)),
            ("ssthresh_bytes", Column::OptI64(ssthresh)),
            ("srtt_ms", f64s(&self, |s| ms(s.srtt_ns))),
            ("rttvar_ms", f64s(&self, |s| ms(s.rttvar_ns))),
            ("rto_ms", f64s(&self, |s| ms(s.rto_ns))),
            ("inflight_bytes", i64s(&self, |s| s.inflight)),
            ("throughput_mbps", f64s(&self, |s| to_mbps(s.sent))),
            ("goodput_mbps", f64s(&self, |s| to_mbps(s.delivered))),
            ("flow_goodput_mbps", f64s(&self, |s| to_mbps(s.app))),
            ("ooo_bytes", i64s(&self, |s| s.ooo_bytes)),
            ("rwnd_full_frac", f64s(&self, |s| s.rwnd_full_frac)),
            ("losses", i64s(&self, |s| s.losses)),
            ("retransmits", i64s(&self, |s| s.retransmits)),
            ("slots", i64s(&self, |s| s.measured)),
            ("slot_bw_mbps", f64s(&self, |s| slots(s).mean_bw_mbps())),
            ("slot_srtt_ms", f64s(&self, |s| slots(s).mean_srtt_ms())),
        ];
        Table { columns: columns.into_iter().map(|(k, c)| (k.to_owned(), c)).collect() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Values around the 32-bit edges, the "not set" ssthresh and RTOs that need a shift.
    fn count() -> impl Strategy<Value = u64> {
        prop_oneof![
            0u64..100_000,
            Just(u64::from(u32::MAX) - 1),
            Just(u64::from(u32::MAX)),
            Just(1u64 << 32),
            any::<u64>()
        ]
    }

    fn sampled() -> impl Strategy<Value = Sampled> {
        let durations = (count(), count(), prop_oneof![count(), (0u64..1 << 30, 0u32..34).prop_map(|(b, k)| b << k)]);
        let counts = (
            count(),
            prop_oneof![count(), Just(u64::MAX), Just(i64::MAX as u64)],
            count(),
            count(),
            count(),
            count(),
            count(),
        );
        let rest = (
            count(),
            count(),
            count(),
            prop_oneof![Just(0.0), Just(0.5), 0.0f64..1.0],
            any::<u128>(),
            0u32..4,
            0u32..70_000,
        );
        (durations, counts, rest).prop_map(
            |((srtt, rttvar, rto), (cwnd, ss, infl, sent, del, app, ooo), (l, r, m, frac, sums, flow, sub))| Sampled {
                flow,
                subflow: sub,
                cwnd,
                ssthresh: ss,
                srtt_ns: srtt,
                rttvar_ns: rttvar,
                rto_ns: rto,
                inflight: infl,
                sent,
                delivered: del,
                app,
                ooo_bytes: ooo,
                rwnd_full_frac: frac,
                losses: l,
                retransmits: r,
                measured: m,
                bw_bps_sum: sums >> (sums % 128),
                srtt_ns_sum: sums >> 70,
            },
        )
    }

    /// The table as the sample built it before rows were packed: every value computed from a
    /// `Sampled` directly.
    fn reference(rows: &[(u64, Sampled)], names: &[&str], sample_ns: u64) -> Table {
        let dt = sample_ns as f64 / 1e9;
        let to_mbps = |bytes: u64| bytes as f64 * 8.0 / dt / 1e6;
        let f = |get: &dyn Fn(u64, &Sampled) -> f64| Column::F64(rows.iter().map(|(t, s)| get(*t, s)).collect());
        let i = |get: &dyn Fn(&Sampled) -> u64| Column::I64(rows.iter().map(|(_, s)| get(s) as i64).collect());
        let sl = |s: &Sampled| SlotStats {
            slots: 0,
            measured: s.measured,
            bw_bps_sum: s.bw_bps_sum,
            srtt_ns_sum: s.srtt_ns_sum,
        };
        let ss = rows.iter().map(|(_, s)| if s.ssthresh >= i64::MAX as u64 { None } else { Some(s.ssthresh as i64) });
        let columns = vec![
            ("time_s", f(&|t, _| t as f64 / 1e9)),
            ("flow", Column::Str(rows.iter().map(|(_, s)| names[s.flow as usize].to_owned()).collect())),
            ("subflow", i(&|s| u64::from(s.subflow))),
            ("cwnd_bytes", i(&|s| s.cwnd)),
            ("ssthresh_bytes", Column::OptI64(ss.collect())),
            ("srtt_ms", f(&|_, s| Duration(s.srtt_ns).as_millis_f64())),
            ("rttvar_ms", f(&|_, s| Duration(s.rttvar_ns).as_millis_f64())),
            ("rto_ms", f(&|_, s| Duration(s.rto_ns).as_millis_f64())),
            ("inflight_bytes", i(&|s| s.inflight)),
            ("throughput_mbps", f(&|_, s| to_mbps(s.sent))),
            ("goodput_mbps", f(&|_, s| to_mbps(s.delivered))),
            ("flow_goodput_mbps", f(&|_, s| to_mbps(s.app))),
            ("ooo_bytes", i(&|s| s.ooo_bytes)),
            ("rwnd_full_frac", f(&|_, s| s.rwnd_full_frac)),
            ("losses", i(&|s| s.losses)),
            ("retransmits", i(&|s| s.retransmits)),
            ("slots", i(&|s| s.measured)),
            ("slot_bw_mbps", f(&|_, s| sl(s).mean_bw_mbps())),
            ("slot_srtt_ms", f(&|_, s| sl(s).mean_srtt_ms())),
        ];
        Table { columns: columns.into_iter().map(|(k, c)| (k.to_owned(), c)).collect() }
    }

    proptest! {
        #[test]
        fn packing_loses_nothing(s in sampled()) {
            if let Some(r) = Row::pack(&s) {
                let mut expect = s;
                if expect.ssthresh >= i64::MAX as u64 {
                    expect.ssthresh = u64::MAX;
                }
                let back = r.unpack();
                prop_assert_eq!(back, expect);
                prop_assert_eq!(back.rwnd_full_frac.to_bits(), s.rwnd_full_frac.to_bits());
            }
        }

        #[test]
        fn the_table_is_the_unpacked_one(
            samples in prop::collection::vec((0u64..1 << 40, prop::collection::vec(sampled(), 0..6)), 0..6),
            sample_ns in 1u64..1 << 34,
        ) {
            let names = ["a", "b", "c", "d"];
            let mut series = Series::default();
            let mut rows = Vec::new();
            for (now, sampled) in &samples {
                series.start_sample(*now);
                for s in sampled {
                    series.push(*s);
                    rows.push((*now, *s));
                }
            }
            prop_assert_eq!(series.rows(), rows.len());
            let got = format!("{:?}", series.into_table(&names, sample_ns));
            prop_assert_eq!(got, format!("{:?}", reference(&rows, &names, sample_ns)));
        }
    }

    #[test]
    fn a_packed_row_is_80_bytes() {
        assert_eq!(std::mem::size_of::<Row>(), 80);
    }
}
