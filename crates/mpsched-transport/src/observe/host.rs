//! Host observations (DRL-CC's and MPTCP-RL's set-up: one agent for every flow of a host):
//! where everything sits ([`HostLayout`]) and the sender-side [`HostRecorder`] that a host
//! controller deployed in a sender keeps — the host env's frames for every feature a sender
//! computes, with the same formulas ([`super::sample`]); receiver and model features stay 0.

use super::features::{FlowFeature, SubflowFeature};
use super::sample::{delta, fill, shift_frames, shift_rates, FlowSample, SubSnap, SubflowSample, MBPS};
use crate::connection::Connection;
use crate::time::Instant;

/// Where everything sits in a host observation: `history` frames, oldest first, then the
/// masks. A frame holds `max_flows` flow slots; a flow slot holds the flow's [`FlowFeature`]s,
/// then `max_subflows` slots of [`SubflowFeature`] (subflow i: the flow's i-th path). After the
/// frames: the subflow mask (`max_flows × max_subflows`, 1 = usable: established, path up —
/// the action mask of path choices), then the flow mask (`max_flows`, 1 = running).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostLayout {
    /// Flow slots.
    pub max_flows: usize,
    /// Subflow slots per flow slot.
    pub max_subflows: usize,
    /// Frames per observation.
    pub history: usize,
}

impl HostLayout {
    /// Length of one flow slot.
    pub const fn flow_stride(&self) -> usize {
        FlowFeature::COUNT + self.max_subflows * SubflowFeature::COUNT
    }

    /// Offset of flow slot `j` in a frame.
    pub const fn flow_slot(&self, j: usize) -> usize {
        j * self.flow_stride()
    }

    /// Offset of feature `f` of flow slot `j` in a frame.
    pub const fn flow(&self, j: usize, f: FlowFeature) -> usize {
        self.flow_slot(j) + f as usize
    }

    /// Offset of subflow slot `i` of flow slot `j` in a frame.
    pub const fn subflow_slot(&self, j: usize, i: usize) -> usize {
        self.flow_slot(j) + FlowFeature::COUNT + i * SubflowFeature::COUNT
    }

    /// Offset of feature `f` of subflow `i` of flow slot `j` in a frame.
    pub const fn subflow(&self, j: usize, i: usize, f: SubflowFeature) -> usize {
        self.subflow_slot(j, i) + f as usize
    }

    /// Length of one frame.
    pub const fn frame_len(&self) -> usize {
        self.max_flows * self.flow_stride()
    }

    /// Offset of frame `h` (0 = oldest).
    pub const fn frame(&self, h: usize) -> usize {
        h * self.frame_len()
    }

    /// Offset of the subflow mask.
    pub const fn subflow_mask_offset(&self) -> usize {
        self.history * self.frame_len()
    }

    /// Offset of the flow mask.
    pub const fn flow_mask_offset(&self) -> usize {
        self.subflow_mask_offset() + self.max_flows * self.max_subflows
    }

    /// Length of the masks.
    pub const fn mask_len(&self) -> usize {
        self.max_flows * (self.max_subflows + 1)
    }

    /// Length of an observation.
    pub const fn size(&self) -> usize {
        self.subflow_mask_offset() + self.mask_len()
    }

    /// Every offset and length by name (exported to Python).
    pub fn offsets(&self) -> Vec<(&'static str, usize)> {
        vec![
            ("max_flows", self.max_flows),
            ("max_subflows", self.max_subflows),
            ("history", self.history),
            ("flow_len", FlowFeature::COUNT),
            ("subflow_stride", SubflowFeature::COUNT),
            ("flow_stride", self.flow_stride()),
            ("frame_len", self.frame_len()),
            ("subflow_mask_offset", self.subflow_mask_offset()),
            ("flow_mask_offset", self.flow_mask_offset()),
            ("mask_len", self.mask_len()),
            ("size", self.size()),
        ]
    }
}

/// A flow's sums over its subflows for the host view: bytes sent in the interval (advancing
/// `subs` when `advance_sent`; a recorder that already advanced the subflows' counters passes
/// false and sets `sent` itself), windows, open subflows, and RTT sums over established
/// subflows with an estimate.
pub fn flow_sums(c: &Connection, subs: &mut Vec<SubSnap>, advance_sent: bool) -> FlowSample {
    let mut x = FlowSample::default();
    let mut n = 0usize;
    for (i, s) in c.subflows() {
        let i = i as usize;
        if advance_sent {
            if subs.len() <= i {
                subs.resize(i + 1, SubSnap::default());
            }
            x.sent += delta(s.bytes_sent, subs[i].sent);
            subs[i].sent = s.bytes_sent;
        }
        x.cwnd += s.cwnd;
        x.open += usize::from(s.established);
        if s.established && s.srtt.0 > 0 {
            x.srtt += s.srtt.0 as f64;
            x.rttvar += s.rttvar.0 as f64;
            n += 1;
        }
    }
    x.n = n.max(1) as f64;
    x
}

/// What a [`HostRecorder`] reads of one flow at a boundary.
#[derive(Clone, Copy)]
pub struct FlowIn<'a> {
    /// The flow's sending connection.
    pub conn: &'a Connection,
    /// Maximum segment size of its subflows (bytes).
    pub mss: u32,
    /// A multipath flow (MPTCP), not single-path TCP.
    pub multipath: bool,
}

/// A host's observation history, slot by slot; see the module docs. Call order at every
/// boundary: [`HostRecorder::begin`] (closes the interval, returns its length), then for each
/// slot whose flow left [`HostRecorder::clear_slot`] when it is given to another flow,
/// [`HostRecorder::record_flow`] for each slotted flow, [`HostRecorder::set_target`],
/// [`HostRecorder::observe`]; after the action, [`HostRecorder::set_prev`].
#[derive(Clone, Debug)]
pub struct HostRecorder {
    layout: HostLayout,
    frames: Vec<f32>,
    /// Per slot: delivery-rate samples per subflow slot, one row per frame, newest last.
    rates: Vec<Vec<[u64; 8]>>,
    /// Per slot: its flow's subflow counters at the last boundary.
    subs: Vec<Vec<SubSnap>>,
    /// Per slot and subflow slot: the previous action's value.
    prev: Vec<f32>,
    last_boundary: Instant,
    interval_ns: u64,
}

impl HostRecorder {
    /// An empty history for a host whose boundaries are `interval_ns` apart from `start`.
    pub fn new(layout: HostLayout, start: Instant, interval_ns: u64) -> HostRecorder {
        HostRecorder {
            frames: vec![0.0; layout.history * layout.frame_len()],
            rates: vec![vec![[0; 8]; layout.history]; layout.max_flows],
            subs: vec![Vec::new(); layout.max_flows],
            prev: vec![0.0; layout.max_flows * layout.max_subflows],
            layout,
            last_boundary: start,
            interval_ns,
        }
    }

    /// Where everything sits.
    pub fn layout(&self) -> HostLayout {
        self.layout
    }

    /// Closes the interval that ends at `now`: the history moves on by one frame (the newest
    /// clear). Returns the length rates are computed over (s): the real one, at least the
    /// nominal interval, as the host env measures.
    pub fn begin(&mut self, now: Instant) -> f64 {
        let real_ns = now.0.saturating_sub(self.last_boundary.0);
        self.last_boundary = now;
        shift_frames(&mut self.frames, self.layout.frame_len());
        self.rates.iter_mut().for_each(|r| shift_rates(r));
        real_ns.max(self.interval_ns).max(1) as f64 / 1e9
    }

    /// Zeroes slot `j` in every frame, its rate history, counters and previous action (a new
    /// flow takes the slot).
    pub fn clear_slot(&mut self, j: usize) {
        let l = self.layout;
        for h in 0..l.history {
            let o = l.frame(h) + l.flow_slot(j);
            self.frames[o..o + l.flow_stride()].iter_mut().for_each(|x| *x = 0.0);
        }
        self.rates[j].iter_mut().for_each(|r| *r = [0; 8]);
        self.subs[j].clear();
        let s = l.max_subflows;
        self.prev[j * s..(j + 1) * s].iter_mut().for_each(|x| *x = 0.0);
    }

    /// Writes the interval of the flow in slot `j` into the newest frame (`dt` from
    /// [`HostRecorder::begin`]): its subflow slots, then its flow features (the target flag
    /// is [`HostRecorder::set_target`]'s).
    pub fn record_flow(&mut self, j: usize, flow: FlowIn<'_>, dt: f64) {
        let l = self.layout;
        let c = flow.conn;
        let mss = f64::from(flow.mss.max(1));
        let base = l.frame(l.history - 1);
        let subs = &mut self.subs[j];
        subs.resize(c.subflow_count(), SubSnap::default());
        let mut sent = 0u64;
        for i in 0..c.subflow_count() {
            let s = c.subflow_info(i);
            let d = subs[i].advance(&s, 0);
            sent += d.sent;
            if i >= l.max_subflows.min(8) {
                continue;
            }
            let rates = &mut self.rates[j];
            rates.last_mut().expect("history >= 1")[i] = s.delivery_rate;
            let max_rate = rates.iter().map(|r| r[i]).max().unwrap_or(0) as f64 * 8.0 / MBPS;
            let x = SubflowSample {
                s: &s,
                d: &d,
                mss,
                dt,
                tput: d.sent as f64 * 8.0 / dt / MBPS,
                max_rate,
                prev_share: self.prev[j * l.max_subflows + i],
                energy_j: 0.0,
            };
            let o = base + l.subflow_slot(j, i);
            fill(&mut self.frames[o..o + SubflowFeature::COUNT], |g: SubflowFeature| {
                if g.info().seen_by == super::SeenBy::Sender {
                    x.value(g)
                } else {
                    0.0
                }
            });
        }
        let mut x = flow_sums(c, subs, false);
        (x.sent, x.mss, x.dt, x.multipath) = (sent, mss, dt, flow.multipath);
        let o = base + l.flow_slot(j);
        fill(&mut self.frames[o..o + FlowFeature::COUNT], |g: FlowFeature| {
            if g.info().seen_by == super::SeenBy::Sender {
                x.value(g)
            } else {
                0.0
            }
        });
    }

    /// Marks slot `j` in the newest frame as one the next action applies to (flow feature
    /// `target`), or not.
    pub fn set_target(&mut self, j: usize, on: bool) {
        let l = self.layout;
        self.frames[l.frame(l.history - 1) + l.flow(j, FlowFeature::Target)] = f32::from(u8::from(on));
    }

    /// The action applied to subflow slot `i` of slot `j` (its `prev_share` feature next time).
    pub fn set_prev(&mut self, j: usize, i: usize, a: f32) {
        self.prev[j * self.layout.max_subflows + i] = a;
    }

    /// Writes the observation (length [`HostLayout::size`]): the frames, oldest first, then
    /// the subflow mask (`usable(j, i)`) and the flow mask (`running(j)`).
    pub fn observe(&self, usable: impl Fn(usize, usize) -> bool, running: impl Fn(usize) -> bool, out: &mut [f32]) {
        let l = self.layout;
        let n = self.frames.len();
        out[..n].copy_from_slice(&self.frames);
        let masks = &mut out[n..n + l.mask_len()];
        let s = l.max_subflows;
        for j in 0..l.max_flows {
            let run = running(j);
            for i in 0..s {
                masks[j * s + i] = f32::from(u8::from(run && usable(j, i)));
            }
            masks[l.max_flows * s + j] = f32::from(u8::from(run));
        }
    }
}

/// Whether a sender computes host observation index `k` of `layout` (masks are the sender's);
/// `None` past the end.
pub fn host_sender_computes(layout: &HostLayout, k: usize) -> Option<bool> {
    if k >= layout.size() {
        return None;
    }
    if k >= layout.subflow_mask_offset() {
        return Some(true);
    }
    Some(host_feature(layout, k % layout.frame_len()).0 == super::SeenBy::Sender)
}

/// Who sees offset `o` of a host frame, and its name (`flow 2/goodput`, `flow 0/subflow 1/srtt`).
pub fn host_feature(layout: &HostLayout, o: usize) -> (super::SeenBy, String) {
    let (j, r) = (o / layout.flow_stride(), o % layout.flow_stride());
    if r < FlowFeature::COUNT {
        let f = FlowFeature::ALL[r];
        return (f.info().seen_by, format!("flow {j}/{}", f.info().name));
    }
    let r = r - FlowFeature::COUNT;
    let f = SubflowFeature::ALL[r % SubflowFeature::COUNT];
    (f.info().seen_by, format!("flow {j}/subflow {}/{}", r / SubflowFeature::COUNT, f.info().name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_offsets_follow_the_feature_groups() {
        let l = HostLayout { max_flows: 3, max_subflows: 2, history: 2 };
        let (nf, ns) = (FlowFeature::COUNT, SubflowFeature::COUNT);
        assert_eq!(l.flow_stride(), nf + 2 * ns);
        assert_eq!(l.subflow(1, 1, SubflowFeature::Srtt), l.flow_stride() + nf + ns);
        assert_eq!(l.flow(2, FlowFeature::Target), 2 * l.flow_stride() + FlowFeature::Target as usize);
        assert_eq!(l.subflow_mask_offset(), 2 * 3 * l.flow_stride());
        assert_eq!(l.flow_mask_offset(), l.subflow_mask_offset() + 6);
        assert_eq!(l.size(), l.flow_mask_offset() + 3);
    }

    /// Every frame offset names its feature; receiver goodput and model energy are not the
    /// sender's, the masks are.
    #[test]
    fn host_features_say_who_sees_them() {
        let l = HostLayout { max_flows: 2, max_subflows: 2, history: 1 };
        let (who, name) = host_feature(&l, l.flow(1, FlowFeature::Goodput));
        assert_eq!((who, name.as_str()), (super::super::SeenBy::Receiver, "flow 1/goodput"));
        let (who, name) = host_feature(&l, l.subflow(0, 1, SubflowFeature::Srtt));
        assert_eq!((who, name.as_str()), (super::super::SeenBy::Sender, "flow 0/subflow 1/srtt"));
        assert_eq!(host_sender_computes(&l, l.subflow(1, 0, SubflowFeature::EnergyJ)), Some(false));
        assert_eq!(host_sender_computes(&l, l.subflow(1, 0, SubflowFeature::Goodput)), Some(true));
        assert_eq!(host_sender_computes(&l, l.flow_mask_offset()), Some(true));
        assert_eq!(host_sender_computes(&l, l.size()), None);
    }
}
