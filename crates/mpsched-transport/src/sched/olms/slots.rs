//! OLMS's per-slot statistics of the scheduled subflows (olms.txt §VI-B evaluation metrics).

/// The state of one subflow at the moments the connection scheduled new data on it: one *time
/// slot* (one packet transmission) of the OLMS paper (olms.txt §II-A) per segment. The OLMS
/// paper's evaluation metrics (§VI-B) are the selected path's throughput, "the ratios of the size
/// of the congestion window to the smoothed RTT", and "the RTT of the scheduled path ... from the
/// measurements of smoothed RTT", per slot; these sums give their averages exactly. Integer
/// arithmetic only, so results are identical on every platform.
///
/// Counted: every new-data segment put on a subflow by the scheduler (or the only subflow of a
/// single-path connection), with the cwnd and srtt the scheduler saw when choosing. Not counted:
/// reinjections, opportunistic retransmissions, redundant copies and subflow-level
/// retransmissions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlotStats {
    /// New-data segments scheduled on the subflow.
    pub slots: u64,
    /// Of those, the ones sent with an RTT estimate (srtt > 0): the sums below cover these.
    pub measured: u64,
    /// Σ cwnd × 8 × 10⁹ / srtt_ns, bits per second (integer division per slot).
    pub bw_bps_sum: u128,
    /// Σ srtt, nanoseconds.
    pub srtt_ns_sum: u128,
}

impl SlotStats {
    #[inline]
    pub(crate) fn record(&mut self, cwnd: u64, srtt_ns: u64) {
        self.slots += 1;
        // u64 division (a u128 one costs more); exact below a 2.3 GB window. No RTT estimate
        // yet (srtt 0): the slot is counted but not measured.
        if let Some(bw_bps) = cwnd.saturating_mul(8_000_000_000).checked_div(srtt_ns) {
            self.measured += 1;
            self.bw_bps_sum += bw_bps as u128;
            self.srtt_ns_sum += srtt_ns as u128;
        }
    }

    /// Mean cwnd/srtt over the measured slots, Mbit/s (0 without any).
    pub fn mean_bw_mbps(&self) -> f64 {
        if self.measured == 0 {
            0.0
        } else {
            self.bw_bps_sum as f64 / self.measured as f64 / 1e6
        }
    }

    /// Mean srtt over the measured slots, ms (0 without any).
    pub fn mean_srtt_ms(&self) -> f64 {
        if self.measured == 0 {
            0.0
        } else {
            self.srtt_ns_sum as f64 / self.measured as f64 / 1e6
        }
    }

    /// Adds `other`'s counts (totals over several subflows or connections).
    pub fn add(&mut self, other: &SlotStats) {
        self.slots += other.slots;
        self.measured += other.measured;
        self.bw_bps_sum += other.bw_bps_sum;
        self.srtt_ns_sum += other.srtt_ns_sum;
    }

    /// `self − earlier` (both cumulative).
    pub fn since(&self, earlier: &SlotStats) -> SlotStats {
        SlotStats {
            slots: self.slots - earlier.slots,
            measured: self.measured - earlier.measured,
            bw_bps_sum: self.bw_bps_sum - earlier.bw_bps_sum,
            srtt_ns_sum: self.srtt_ns_sum - earlier.srtt_ns_sum,
        }
    }
}
