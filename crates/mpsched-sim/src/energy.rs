//! Mobile-interface energy: the data-transfer power model of Huang et al. ("A Close Examination
//! of Performance and Power Characteristics of 4G LTE Networks", MobiSys 2012, Table 4),
//! P (mW) = α_up·t_up + α_down·t_down + β with throughputs in Mbit/s, as MPTCP-RL uses it, plus
//! optional promotion and tail states (Huang et al. Table 3; per interface, as AT&T ARO's
//! `lte.conf` model integrates them).
//!
//! The mobile device sits at the receiving end of a path: `down` is what the path's forward
//! links deliver to it (data), `up` what it sends on the reverse links (ACKs). Energy is
//! integrated per metrics sample interval ("bin").

use serde::{Deserialize, Serialize};

/// Power-model parameters of one interface.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnergyParams {
    /// mW per Mbit/s sent by the device.
    pub alpha_up: f64,
    /// mW per Mbit/s received by the device.
    pub alpha_down: f64,
    /// mW while transferring, whatever the rate.
    pub beta: f64,
    /// Promotion from idle: duration (s) and power (mW), charged once when traffic starts.
    #[serde(default)]
    pub promotion_s: f64,
    /// Power during promotion (mW).
    #[serde(default)]
    pub promotion_mw: f64,
    /// Tail after the last packet: duration (s) and power (mW).
    #[serde(default)]
    pub tail_s: f64,
    /// Power during the tail (mW).
    #[serde(default)]
    pub tail_mw: f64,
    /// Average power when idle (mW).
    #[serde(default)]
    pub idle_mw: f64,
}

impl EnergyParams {
    /// Built-in interface profiles: MPTCP-RL's table (WiFi 283/137/132.9, 4G 438/52/1288,
    /// 3G 869/122.1/817.9) without states, or with Huang et al.'s promotion/tail/idle figures
    /// (MobiSys 2012, Table 3: LTE 260.1 ms at 1210.7 mW, tail 11.576 s at 1060 mW, idle 20.1 mW;
    /// 3G 582.1 ms at 659.4 mW, DCH tail 8.088 s at 803.9 mW then FACH 0.824 s at 601.3 mW —
    /// folded here into one 8.912 s tail at their time-weighted 784.5 mW — idle 4.1 mW; WiFi
    /// 79.1 ms at 124.4 mW, tail 238.1 ms at 119.3 mW, idle 1.9 mW).
    pub fn builtin(name: &str, with_states: bool) -> Option<EnergyParams> {
        let (au, ad, b) = match name {
            "wifi" => (283.0, 137.0, 132.9),
            "4g" | "lte" => (438.0, 52.0, 1288.0),
            "3g" => (869.0, 122.1, 817.9),
            _ => return None,
        };
        let (ps, pm, ts, tm, idle) = match (name, with_states) {
            (_, false) => (0.0, 0.0, 0.0, 0.0, 0.0),
            ("wifi", true) => (0.0791, 124.4, 0.2381, 119.3, 1.9),
            ("3g", true) => (0.5821, 659.4, 8.9124, 784.5, 4.1),
            (_, true) => (0.2601, 1210.7, 11.576, 1060.0, 20.1),
        };
        Some(EnergyParams {
            alpha_up: au,
            alpha_down: ad,
            beta: b,
            promotion_s: ps,
            promotion_mw: pm,
            tail_s: ts,
            tail_mw: tm,
            idle_mw: idle,
        })
    }

    /// Power (mW) while transferring at `up` / `down` Mbit/s.
    pub fn active_power_mw(&self, up_mbps: f64, down_mbps: f64) -> f64 {
        self.alpha_up * up_mbps + self.alpha_down * down_mbps + self.beta
    }
}

/// Energy accounting of one interface over time.
#[derive(Debug, Clone, Default)]
pub struct InterfaceEnergy {
    /// Joules in each state.
    pub active_j: f64,
    /// Joules spent in promotion.
    pub promotion_j: f64,
    /// Joules spent in tails.
    pub tail_j: f64,
    /// Joules spent idle.
    pub idle_j: f64,
    /// Seconds spent transferring.
    pub active_s: f64,
    /// End of the last bin with traffic (ns); `None` before any traffic.
    last_active: Option<u64>,
}

impl InterfaceEnergy {
    /// Energy over all states (J).
    pub fn total_j(&self) -> f64 {
        self.active_j + self.promotion_j + self.tail_j + self.idle_j
    }

    /// Accounts the bin `(end − dt, end]` in which the device sent `up` and received `down`
    /// bytes; returns the energy of the bin attributable to the transfer (active + promotion).
    pub fn bin(&mut self, p: &EnergyParams, end_ns: u64, dt_ns: u64, up_bytes: u64, down_bytes: u64) -> f64 {
        let dt = dt_ns as f64 / 1e9;
        if up_bytes + down_bytes > 0 {
            let mut e = 0.0;
            // Promotion from idle: first traffic, or a gap at least as long as the tail (a
            // bin right after an active one continues the transfer, whatever the tail).
            let tail_over = self.last_active.is_none_or(|t| {
                let gap = (end_ns - dt_ns).saturating_sub(t);
                gap > 0 && gap as f64 / 1e9 >= p.tail_s
            });
            if tail_over && p.promotion_s > 0.0 {
                let pe = p.promotion_mw * p.promotion_s / 1e3;
                self.promotion_j += pe;
                e += pe;
            }
            let to_mbps = |b: u64| b as f64 * 8.0 / dt / 1e6;
            let a = p.active_power_mw(to_mbps(up_bytes), to_mbps(down_bytes)) * dt / 1e3;
            self.active_j += a;
            self.active_s += dt;
            self.last_active = Some(end_ns);
            e + a
        } else {
            let since = self.last_active.map(|t| (end_ns - dt_ns).saturating_sub(t) as f64 / 1e9);
            match since {
                Some(s) if s < p.tail_s => {
                    let tail_part = (p.tail_s - s).min(dt);
                    self.tail_j += p.tail_mw * tail_part / 1e3;
                    self.idle_j += p.idle_mw * (dt - tail_part) / 1e3;
                }
                _ => self.idle_j += p.idle_mw * dt / 1e3,
            }
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-computed: LTE downlink at 10 Mbps for 1 s = 52·10 + 1288 = 1808 mW → 1.808 J;
    /// WiFi at 10 Mbps down and 0.4 Mbps up = 137·10 + 283·0.4 + 132.9 = 1616.1 mW.
    #[test]
    fn active_power_matches_hand_computation() {
        let lte = EnergyParams::builtin("4g", false).unwrap();
        let mut e = InterfaceEnergy::default();
        // 10 bins of 100 ms, 125,000 bytes each = 10 Mbps.
        for k in 1..=10u64 {
            e.bin(&lte, k * 100_000_000, 100_000_000, 0, 125_000);
        }
        assert!((e.total_j() - 1.808).abs() < 1e-9, "{}", e.total_j());
        let wifi = EnergyParams::builtin("wifi", false).unwrap();
        assert!((wifi.active_power_mw(0.4, 10.0) - 1616.1).abs() < 1e-9);
    }

    /// With states: one 100 ms LTE burst at 8 Mbps then 20 s of silence:
    /// promotion 1210.7 mW × 0.2601 s = 0.31490 J, active (52·8 + 1288) mW × 0.1 s = 0.1704 J,
    /// tail 1060 mW × 11.576 s = 12.27056 J, idle 20.1 mW × (20 − 11.576) s = 0.16932 J.
    #[test]
    fn lte_promotion_tail_and_idle() {
        let lte = EnergyParams::builtin("lte", true).unwrap();
        let mut e = InterfaceEnergy::default();
        e.bin(&lte, 100_000_000, 100_000_000, 0, 100_000);
        for k in 2..=201u64 {
            e.bin(&lte, k * 100_000_000, 100_000_000, 0, 0);
        }
        assert!((e.promotion_j - 0.314_903_07).abs() < 1e-6, "{}", e.promotion_j);
        assert!((e.active_j - 0.1704).abs() < 1e-9);
        assert!((e.tail_j - 12.27056).abs() < 1e-6, "{}", e.tail_j);
        assert!((e.idle_j - 0.0201 * 8.424).abs() < 1e-6, "{}", e.idle_j);
    }

    /// Without a tail, back-to-back active bins are one transfer: one promotion (each bin used
    /// to pay it again); a bin's gap after the last traffic pays it anew.
    #[test]
    fn promotion_without_tail_is_paid_once_per_transfer() {
        let p = EnergyParams {
            alpha_up: 0.0,
            alpha_down: 0.0,
            beta: 0.0,
            promotion_s: 0.5,
            promotion_mw: 2000.0,
            tail_s: 0.0,
            tail_mw: 0.0,
            idle_mw: 0.0,
        };
        let mut e = InterfaceEnergy::default();
        let ms = 1_000_000;
        let paid: Vec<f64> = [(100, 1), (200, 1), (300, 1), (400, 0), (500, 1)]
            .iter()
            .map(|&(end, bytes)| e.bin(&p, end * ms, 100 * ms, 0, bytes))
            .collect();
        assert_eq!(paid, [1.0, 0.0, 0.0, 0.0, 1.0]);
        assert_eq!(e.promotion_j, 2.0);
    }
}
