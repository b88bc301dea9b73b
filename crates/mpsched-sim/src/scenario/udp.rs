//! `[[udp]]`: traffic without congestion control (constant-bit-rate and on/off UDP sources,
//! ping-like probes), validated field by field and written back with every default.

use std::collections::{BTreeMap, BTreeSet};

use super::resolve::Resolver;
use super::*;

/// Smallest `packet_bytes`: an IPv4 header (20) and a UDP header (8).
pub const MIN_UDP_PACKET: u32 = 28;
/// Largest `packet_bytes`: an IPv4 datagram's maximum.
pub const MAX_UDP_PACKET: u32 = 65_535;
/// Default wire size of a CBR or on/off source's packets, bytes.
pub const DEFAULT_UDP_PACKET: u32 = 1500;
/// Default wire size of a probe, bytes: ping's (56 data + 8 ICMP + 20 IP).
pub const DEFAULT_PROBE_PACKET: u32 = 84;
/// Default time between probes, ms: ping's one second.
pub const DEFAULT_PROBE_INTERVAL_MS: f64 = 1000.0;

impl Resolver<'_> {
    /// Every `[[udp]]` entry; names must differ from each other and from the flows'.
    pub(super) fn resolve_udp(
        &self,
        file: &mut ScenarioFile,
        path_ix: &BTreeMap<String, u16>,
    ) -> Result<Vec<UdpFlowDef>, ScenarioError> {
        if file.udp.len() > MAX_FLOWS {
            return Err(self.err("udp", format!("expected at most {MAX_FLOWS} entries, got {}", file.udp.len())));
        }
        let mut names: BTreeSet<String> = file.flows.iter().map(|f| f.name.clone()).collect();
        let mut out = Vec::with_capacity(file.udp.len());
        for (i, u) in file.udp.iter_mut().enumerate() {
            let f = format!("udp[{i}]");
            if !names.insert(u.name.clone()) {
                return Err(self.err(&format!("{f}.name"), format!("duplicate flow name {:?}", u.name)));
            }
            out.push(self.resolve_udp_flow(&f, u, path_ix)?);
        }
        Ok(out)
    }

    fn resolve_udp_flow(
        &self,
        f: &str,
        u: &mut UdpSpec,
        path_ix: &BTreeMap<String, u16>,
    ) -> Result<UdpFlowDef, ScenarioError> {
        let path = *path_ix
            .get(&u.path)
            .ok_or_else(|| self.err(&format!("{f}.path"), format!("unknown path {:?}", u.path)))?;
        let kind = self.udp_kind(f, u)?;
        let probe = matches!(kind, UdpKind::Probe { .. });
        let default_size = if probe { DEFAULT_PROBE_PACKET } else { DEFAULT_UDP_PACKET };
        let packet_bytes = u.packet_bytes.unwrap_or(default_size);
        if !(MIN_UDP_PACKET..=MAX_UDP_PACKET).contains(&packet_bytes) {
            return Err(self.err(
                &format!("{f}.packet_bytes"),
                format!("expected {MIN_UDP_PACKET}..={MAX_UDP_PACKET} bytes (IP and UDP headers included), got {packet_bytes}"),
            ));
        }
        let rate_bps = match (probe, u.rate_mbps) {
            (true, Some(_)) => {
                return Err(
                    self.err(&format!("{f}.rate_mbps"), "not used by a probe (it sends one packet per interval_ms)")
                )
            }
            (true, None) => 0,
            (false, None) => {
                return Err(self.err(&format!("{f}.rate_mbps"), "missing: expected the sending rate in Mbit/s"))
            }
            (false, Some(r)) => self.rate_bps(&format!("{f}.rate_mbps"), r)?,
        };
        if rate_bps > 0 && (packet_bytes as u128 * 8 * 1_000_000_000) < rate_bps as u128 * 1000 {
            return Err(self.err(
                &format!("{f}.rate_mbps"),
                format!(
                    "expected at most one {packet_bytes}-byte packet per µs ({} Mbit/s), got {}",
                    packet_bytes as f64 * 8.0,
                    rate_bps as f64 / 1e6
                ),
            ));
        }
        let start = u.start_s.unwrap_or(0.0);
        let (start_ns, stop_ns) = self.active_window(f, start, u.stop_s)?;
        u.packet_bytes = Some(packet_bytes);
        u.start_s = Some(start);
        Ok(UdpFlowDef { name: u.name.clone(), kind, path, rate_bps, packet_bytes, start_ns, stop_ns })
    }

    /// `kind` and the fields only some kinds take (`on_s`, `off_s`, `on_off`, `interval_ms`).
    fn udp_kind(&self, f: &str, u: &mut UdpSpec) -> Result<UdpKind, ScenarioError> {
        let onoff_fields = [("on_s", u.on_s.is_some()), ("off_s", u.off_s.is_some()), ("on_off", u.on_off.is_some())];
        let not_used =
            |field: &str, kind: &str| self.err(&format!("{f}.{field}"), format!("not used by kind {kind:?}"));
        if u.kind != "onoff" {
            if let Some((field, _)) = onoff_fields.iter().find(|(_, given)| *given) {
                return Err(not_used(field, &u.kind));
            }
        }
        if u.kind != "probe" && u.interval_ms.is_some() {
            return Err(not_used("interval_ms", &u.kind));
        }
        Ok(match u.kind.as_str() {
            "cbr" => UdpKind::Cbr,
            "onoff" => {
                let on = u
                    .on_s
                    .ok_or_else(|| self.err(&format!("{f}.on_s"), "missing: expected the on period in seconds"))?;
                let off = u
                    .off_s
                    .ok_or_else(|| self.err(&format!("{f}.off_s"), "missing: expected the off period in seconds"))?;
                let on_ns = self.duration(&format!("{f}.on_s"), on, 1.0)?;
                let off_ns = self.duration(&format!("{f}.off_s"), off, 1.0)?;
                let exponential = match u.on_off.as_deref().unwrap_or("fixed") {
                    "fixed" => false,
                    "exponential" => true,
                    other => {
                        return Err(self.err(
                            &format!("{f}.on_off"),
                            format!("expected \"fixed\" or \"exponential\", got {other:?}"),
                        ))
                    }
                };
                u.on_off = Some(if exponential { "exponential" } else { "fixed" }.into());
                UdpKind::OnOff { on_ns, off_ns, exponential }
            }
            "probe" => {
                let ms = u.interval_ms.unwrap_or(DEFAULT_PROBE_INTERVAL_MS);
                let interval_ns = self.duration(&format!("{f}.interval_ms"), ms, 1e-3)?;
                u.interval_ms = Some(ms);
                UdpKind::Probe { interval_ns }
            }
            other => {
                return Err(
                    self.err(&format!("{f}.kind"), format!("expected \"cbr\", \"onoff\" or \"probe\", got {other:?}"))
                )
            }
        })
    }
}
