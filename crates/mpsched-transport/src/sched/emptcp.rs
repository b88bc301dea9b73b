//! eMPTCP (Lim, Chen, Nahum, Towsley, Gibbens, Cecchet, "Design, Implementation, and
//! Evaluation of Energy-Aware Multi-Path TCP", ACM CoNEXT 2015; MPTCP-RL's baseline [15]) as a
//! scheduler, after shared/specs/rl-baselines.md §1. eMPTCP's two mechanisms (the paper's
//! abstract): delayed subflow establishment (no cellular use for small transfers) and
//! power-aware subflow management (WiFi alone or all interfaces, whichever moves more bytes
//! per joule by the measured throughputs and a per-interface power model).
//!
//! * Interfaces: subflow i is WiFi if bit i of `wifi_mask` is set (default: subflow 0), else
//!   cellular (LTE). Power of an interface at x Mbit/s down: P(x) = α·x + β mW (Huang et al.,
//!   MobiSys 2012, Table 4, as in MPTCP-RL; the simulator's energy summary rounds the same
//!   figures).
//! * Delayed establishment: until `kappa_bytes` are DATA_ACKed or `tau_s` has passed since the
//!   connection started, cellular subflows carry data only when no WiFi subflow is usable.
//!   Deviation: the transport's path manager joins every path at once, so the cellular join
//!   handshake itself is not delayed, only its use [unverified thresholds].
//! * Every `period_s` after that (checked at the first decision after the period, no timer):
//!   per-subflow throughput of this connection over the period (per-flow, not per-interface:
//!   the spec's calibration note), smoothed by an EWMA with gain `ewma`; a subflow that did
//!   not carry data (a suspended cellular one) keeps its last estimate. With x = WiFi and
//!   y = cellular throughputs, energy per bit e_wifi = ΣP(x)/Σx and
//!   e_both = (ΣP(x) + ΣP(y))/(Σx + Σy), plus, while the cellular interface is idle,
//!   `tail_amortise` × (promotion + tail energy) spread over the bits expected in the next
//!   period [unverified]. BOTH → WIFI_ONLY if e_wifi < e_both·(1 − hyst); WIFI_ONLY → BOTH if
//!   e_both < e_wifi·(1 − hyst); no WiFi throughput counts as e_wifi = ∞.
//! * Scheduling: minRTT over every subflow in BOTH; in WIFI_ONLY (and before establishment)
//!   minRTT over the WiFi subflows, cellular ones only as backups (used when no WiFi subflow is
//!   usable; eMPTCP sets MP_PRIO backup on the cellular subflow).

use super::{SchedStart, SchedView, Scheduler, SubflowSet, Verdict};
use crate::time::Instant;

crate::params! {
    /// eMPTCP's parameters: the power model (facts from Huang et al.), the interface mapping and
    /// the [unverified] thresholds of shared/specs/rl-baselines.md §1.
    pub struct EmptcpParams {
        /// Decision period T_dec, seconds.
        period_s: f64 = 1.0, "> 0" if |x: &f64| *x > 0.0;
        /// Delayed establishment: bytes DATA_ACKed before cellular subflows carry data (κ).
        kappa_bytes: u64 = 1_000_000;
        /// Delayed establishment: or seconds since the connection started (0 = bytes only).
        tau_s: f64 = 0.2, ">= 0" if |x: &f64| *x >= 0.0;
        /// Relative energy-per-bit margin before switching (hysteresis).
        hyst: f64 = 0.1, "0..1" if |x: &f64| (0.0..1.0).contains(x);
        /// Bit i set: subflow i is on WiFi; the others are cellular.
        wifi_mask: u64 = 1;
        /// WiFi α, mW per Mbit/s received (Huang et al. Table 4).
        wifi_alpha: f64 = 137.01;
        /// WiFi β, mW.
        wifi_beta: f64 = 132.86;
        /// Cellular (LTE) α, mW per Mbit/s received.
        cell_alpha: f64 = 51.97;
        /// Cellular (LTE) β, mW.
        cell_beta: f64 = 1288.04;
        /// Cellular promotion energy, mJ (Huang et al. Table 3: 1210.7 mW × 0.2601 s).
        cell_promo_mj: f64 = 314.9;
        /// Cellular tail energy, mJ (1060 mW × 11.576 s).
        cell_tail_mj: f64 = 12_270.6;
        /// Share of promotion + tail charged to BOTH while the cellular interface is idle (0 = none).
        tail_amortise: f64 = 1.0, ">= 0" if |x: &f64| *x >= 0.0;
        /// EWMA gain of the throughput estimates (1 = the last period alone).
        ewma: f64 = 0.5, "(0, 1]" if |x: &f64| *x > 0.0 && *x <= 1.0;
    }
}

/// Which interfaces carry new data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EmptcpMode {
    /// Before the delayed-establishment threshold: WiFi only, cellular as backup.
    #[default]
    Delayed,
    /// WiFi only, cellular as backup.
    WifiOnly,
    /// Every interface.
    Both,
}

/// The scheduler; see the module docs.
#[derive(Clone, Debug, Default)]
pub struct Emptcp {
    p: EmptcpParams,
    mode: EmptcpMode,
    started: Instant,
    /// Start of the current measurement period.
    period_start: Instant,
    /// Each subflow's `delivered` at the period start.
    delivered: [u64; 8],
    /// Throughput estimates, Mbit/s; `None` before the subflow carried data in a period.
    thr: [Option<f64>; 8],
}

impl crate::algo::FromParams for Emptcp {
    type Params = EmptcpParams;
    fn from_params(p: &EmptcpParams) -> Self {
        Emptcp { p: p.clone(), ..Emptcp::default() }
    }
}

impl Emptcp {
    /// The current mode (test and observation aid).
    pub fn mode(&self) -> EmptcpMode {
        self.mode
    }

    fn is_wifi(&self, i: usize) -> bool {
        i < 64 && self.p.wifi_mask & (1 << i) != 0
    }

    fn restart_period(&mut self, now: Instant, v: &SchedView) {
        self.period_start = now;
        for (d, s) in self.delivered.iter_mut().zip(v.subflows) {
            *d = s.info.delivered;
        }
    }

    /// Folds the period's throughputs into the estimates: WiFi subflows always, cellular ones
    /// only when they were allowed to carry data (BOTH).
    fn measure(&mut self, now: Instant, v: &SchedView) {
        let secs = now.saturating_duration_since(self.period_start).as_secs_f64();
        for (i, s) in v.subflows.iter().enumerate().take(8) {
            if !self.is_wifi(i) && self.mode != EmptcpMode::Both {
                continue;
            }
            let mbps = s.info.delivered.saturating_sub(self.delivered[i]) as f64 * 8.0 / secs / 1e6;
            let g = self.p.ewma;
            self.thr[i] = Some(self.thr[i].map_or(mbps, |old| g * mbps + (1.0 - g) * old));
        }
        self.restart_period(now, v);
    }

    /// Energy per bit (mJ per Mbit) of WiFi alone and of every interface.
    fn energy_per_bit(&self, n: usize) -> (f64, f64) {
        let (mut x, mut pw, mut y, mut pc) = (0.0, 0.0, 0.0, 0.0);
        for (i, t) in self.thr.iter().enumerate().take(n) {
            let t = t.unwrap_or(0.0);
            if self.is_wifi(i) {
                x += t;
                pw += self.p.wifi_alpha * t + self.p.wifi_beta;
            } else {
                y += t;
                pc += self.p.cell_alpha * t + self.p.cell_beta;
            }
        }
        let e_wifi = if x > 0.0 { pw / x } else { f64::INFINITY };
        let mut e_both = if x + y > 0.0 { (pw + pc) / (x + y) } else { f64::INFINITY };
        if self.mode != EmptcpMode::Both && x + y > 0.0 {
            let fixed = self.p.tail_amortise * (self.p.cell_promo_mj + self.p.cell_tail_mj);
            e_both += fixed / ((x + y) * self.p.period_s);
        }
        (e_wifi, e_both)
    }

    /// The per-period decision (module docs).
    fn decide_mode(&mut self, v: &SchedView) {
        let (e_wifi, e_both) = self.energy_per_bit(v.subflows.len());
        let keep = 1.0 - self.p.hyst;
        match self.mode {
            EmptcpMode::Both if e_wifi < e_both * keep => self.mode = EmptcpMode::WifiOnly,
            EmptcpMode::WifiOnly if e_both < e_wifi * keep => self.mode = EmptcpMode::Both,
            _ => {}
        }
    }

    fn update(&mut self, now: Instant, v: &SchedView) {
        if self.mode == EmptcpMode::Delayed {
            let elapsed = now.saturating_duration_since(self.started).as_secs_f64();
            if v.conn.data_acked >= self.p.kappa_bytes || (self.p.tau_s > 0.0 && elapsed >= self.p.tau_s) {
                self.mode = EmptcpMode::Both;
                self.restart_period(now, v);
            }
            return;
        }
        if now.saturating_duration_since(self.period_start).as_secs_f64() >= self.p.period_s {
            self.measure(now, v);
            self.decide_mode(v);
        }
    }

    fn pick(&self, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        let mut wifi = SubflowSet::default();
        for i in (0..v.subflows.len().min(16)).filter(|&i| self.is_wifi(i)) {
            wifi.insert(i);
        }
        let wifi_usable = v.subflows.iter().enumerate().any(|(i, s)| s.usable && wifi.contains(i));
        let choice = if self.mode == EmptcpMode::Both || !wifi_usable { v.min_rtt() } else { v.min_rtt_in(wifi) };
        super::send_on(choice, out)
    }
}

impl Scheduler for Emptcp {
    fn name(&self) -> &'static str {
        "emptcp"
    }
    fn get_send(&mut self, now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        self.update(now, v);
        self.pick(v, out)
    }
    fn get_retrans(&mut self, now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        self.update(now, v);
        self.pick(v, out)
    }
    fn start(&mut self, s: &SchedStart) {
        self.started = s.now;
        self.period_start = s.now;
    }
}

#[cfg(test)]
#[path = "emptcp_tests.rs"]
mod tests;
