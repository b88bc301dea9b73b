//! The sender-side recorder: a connection's own observation, as a policy deployed in a sender
//! computes it. It keeps the same history of frames an env keeps ([`super::features`] order,
//! [`ObsLayout`] offsets) and fills every feature a sender can compute ([`SeenBy::Sender`]) with
//! the env's own formulas ([`super::sample`]); receiver and model features stay 0 (a policy
//! that reads them cannot be deployed, and the policy runtime refuses it).

use super::features::{ConnFeature, FlowFeature, ObsLayout, SeenBy, SubflowFeature};
use super::sample::{delta_f, fill, shift_frames, shift_rates, ConnSample, SubSnap, SubflowSample, MBPS};
use crate::sched::SchedView;
use crate::time::Instant;

/// What a [`Recorder`] is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecorderConfig {
    /// Subflow slots per frame (1..=8).
    pub max_paths: usize,
    /// Frames per observation (≥ 1).
    pub history: usize,
    /// Maximum segment size of the connection's subflows (bytes).
    pub mss: u32,
    /// Receive buffer the window features are fractions of (bytes).
    pub rcv_buf: u64,
}

/// A connection's observation history; see the module docs. Call order: [`Recorder::new`] at
/// the connection's start, then at every decision boundary [`Recorder::record`] (closes the
/// interval), [`Recorder::observe`], the policy's action ([`Recorder::set_prev_share`] /
/// [`Recorder::set_prev_mode`]) and [`Recorder::set_interval`] (the nominal length of the
/// interval that starts).
#[derive(Clone, Debug)]
pub struct Recorder {
    layout: ObsLayout,
    frames: Vec<f32>,
    /// Delivery-rate samples per slot, one row per frame, newest last.
    rates: Vec<[u64; 8]>,
    subs: [SubSnap; 8],
    blocked_s: f64,
    last_boundary: Instant,
    /// Nominal length of the interval in progress (0 before the first boundary is set).
    interval_ns: u64,
    prev_share: [f32; 8],
    prev_mode: f32,
    mss: f64,
    rcv_buf: f64,
}

impl Recorder {
    /// An empty history (every frame zero) for a connection that starts at `start`.
    pub fn new(cfg: RecorderConfig, start: Instant) -> Recorder {
        let layout = ObsLayout { max_paths: cfg.max_paths.clamp(1, 8), history: cfg.history.max(1), max_flows: 0 };
        Recorder {
            frames: vec![0.0; layout.history * layout.frame_len()],
            rates: vec![[0; 8]; layout.history],
            layout,
            subs: [SubSnap::default(); 8],
            blocked_s: 0.0,
            last_boundary: start,
            interval_ns: 0,
            prev_share: [0.0; 8],
            prev_mode: 0.0,
            mss: f64::from(cfg.mss.max(1)),
            rcv_buf: cfg.rcv_buf.max(1) as f64,
        }
    }

    /// Where everything sits in the observations.
    pub fn layout(&self) -> ObsLayout {
        self.layout
    }

    /// The nominal length of the interval that starts now (ns): a shorter last interval is
    /// measured over at least this long, as the envs do.
    pub fn set_interval(&mut self, ns: u64) {
        self.interval_ns = ns;
    }

    /// The mode in force (0 normal, 1 redundant): the `prev_mode` feature of the next frame.
    pub fn set_prev_mode(&mut self, m: u8) {
        self.prev_mode = f32::from(m);
    }

    /// The shares or selections in force: the `prev_share` features of the next frame.
    pub fn set_prev_share(&mut self, w: &[f32; 8]) {
        self.prev_share = *w;
    }

    /// Closes the interval that ends at `now`: the history moves on by one frame and the
    /// newest frame holds the interval's sender features, computed from `v`.
    pub fn record(&mut self, now: Instant, v: &SchedView) {
        let real_ns = now.0.saturating_sub(self.last_boundary.0);
        let dt = real_ns.max(self.interval_ns).max(1) as f64 / 1e9;
        self.last_boundary = now;
        let fl = self.layout.frame_len();
        shift_frames(&mut self.frames, fl);
        shift_rates(&mut self.rates);
        let base = self.frames.len() - fl;
        let (mut pipe, mut peer_wnd) = (0u64, 0u64);
        for (i, sv) in v.subflows.iter().enumerate().take(8) {
            let s = &sv.info;
            let d = self.subs[i].advance(s, 0);
            pipe += s.pipe;
            peer_wnd = peer_wnd.max(s.peer_wnd);
            if i >= self.layout.max_paths {
                continue;
            }
            self.rates.last_mut().expect("history >= 1")[i] = s.delivery_rate;
            let max_rate = self.rates.iter().map(|r| r[i]).max().unwrap_or(0) as f64 * 8.0 / MBPS;
            let x = SubflowSample {
                s,
                d: &d,
                mss: self.mss,
                dt,
                tput: d.sent as f64 * 8.0 / dt / MBPS,
                max_rate,
                prev_share: self.prev_share[i],
                energy_j: 0.0,
            };
            let o = base + self.layout.subflow_slot(i);
            fill(&mut self.frames[o..o + SubflowFeature::COUNT], |g: SubflowFeature| {
                sender_only(g.info().seen_by, x.value(g))
            });
        }
        let blocked_s = delta_f(v.conn.send_blocked_seconds, self.blocked_s);
        self.blocked_s = v.conn.send_blocked_seconds;
        let x = ConnSample {
            peer_wnd,
            pipe,
            rcv_buf: self.rcv_buf,
            dt,
            blocked_s,
            prev_mode: self.prev_mode,
            ..ConnSample::default()
        };
        let o = base + self.layout.conn_offset();
        fill(&mut self.frames[o..o + ConnFeature::COUNT], |g: ConnFeature| sender_only(g.info().seen_by, x.value(g)));
    }

    /// Writes the observation (length [`ObsLayout::size`]): the frames, oldest first, then 1
    /// per usable subflow slot of `v`.
    pub fn observe(&self, v: &SchedView, out: &mut [f32]) {
        let n = self.frames.len();
        out[..n].copy_from_slice(&self.frames);
        let mask = &mut out[n..n + self.layout.mask_len()];
        for (i, m) in mask.iter_mut().enumerate() {
            *m = f32::from(u8::from(v.subflows.get(i).is_some_and(|s| s.usable)));
        }
    }
}

/// `x` for a feature a sender computes, else 0.
fn sender_only(who: SeenBy, x: f32) -> f32 {
    if who == SeenBy::Sender {
        x
    } else {
        0.0
    }
}

/// What observation index `k` of `layout` stands for.
enum Slot {
    Subflow { age: usize, slot: usize, f: SubflowFeature },
    Conn { age: usize, f: ConnFeature },
    Flow { age: usize, slot: usize, f: FlowFeature },
    Mask(usize),
}

fn locate(layout: &ObsLayout, k: usize) -> Option<Slot> {
    if k >= layout.size() {
        return None;
    }
    if k >= layout.path_mask_offset() {
        return Some(Slot::Mask(k - layout.path_mask_offset()));
    }
    let (h, o) = (k / layout.frame_len(), k % layout.frame_len());
    let age = layout.history - 1 - h;
    Some(if o < layout.conn_offset() {
        let r = o - layout.subflow_offset();
        Slot::Subflow { age, slot: r / SubflowFeature::COUNT, f: SubflowFeature::ALL[r % SubflowFeature::COUNT] }
    } else if o < layout.flow_offset() {
        Slot::Conn { age, f: ConnFeature::ALL[o - layout.conn_offset()] }
    } else {
        let r = o - layout.flow_offset();
        Slot::Flow { age, slot: r / FlowFeature::COUNT, f: FlowFeature::ALL[r % FlowFeature::COUNT] }
    })
}

/// Whether a sender computes what observation index `k` of `layout` stands for (masks are
/// the sender's); `None` past the end.
pub fn sender_computes(layout: &ObsLayout, k: usize) -> Option<bool> {
    let who = match locate(layout, k)? {
        Slot::Subflow { f, .. } => f.info().seen_by,
        Slot::Conn { f, .. } => f.info().seen_by,
        Slot::Flow { f, .. } => f.info().seen_by,
        Slot::Mask(_) => SeenBy::Sender,
    };
    Some(who == SeenBy::Sender)
}

/// The name of observation index `k` of `layout` (`"t-1/subflow 0/srtt"`, `"mask/2"`), for
/// messages; empty past the end.
pub fn feature_name(layout: &ObsLayout, k: usize) -> String {
    match locate(layout, k) {
        None => String::new(),
        Some(Slot::Mask(i)) => format!("mask/{i}"),
        Some(Slot::Subflow { age, slot, f }) => format!("t-{age}/subflow {slot}/{}", f.info().name),
        Some(Slot::Conn { age, f }) => format!("t-{age}/connection/{}", f.info().name),
        Some(Slot::Flow { age, slot, f }) => format!("t-{age}/flow {slot}/{}", f.info().name),
    }
}
