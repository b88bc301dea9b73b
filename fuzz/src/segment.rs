//! The segment target: a client and a server [`Connection`] over two paths, driven by a byte
//! string read as operations ([`Op`]): honest exchange, timers, loss, reordering, duplication,
//! corrupted and arbitrary injected segments (unknown paths, forged MP_JOINs, RSTs,
//! MP_FASTCLOSEs, SACK blocks past the data, ...), application writes and reads, interface
//! events, close and abort. Whatever arrives, a connection must not panic, and must not emit
//! more than [`MAX_BURST`] segments at one instant (a livelock).
//!
//! The first two bytes pick the scheduler and the congestion control; bytes past the end read
//! as 0, so every byte string is an input.

use mpsched_transport::{
    CcSpec, ConnConfig, Connection, Decision, Event, Flags, Instant, PathState, SackBlock, SchedSpec, Segment, Side,
    Transmit,
};

use crate::Outcome;

/// The most segments one end may emit at one instant before the input counts as a livelock.
pub const MAX_BURST: usize = 100_000;
/// The latest simulated time an input may reach, ns (about 3 hours).
const HORIZON_NS: u64 = 10_000_000_000_000;

const SCHEDULERS: [&str; 6] = ["minrtt", "redundant", "blest", "ecf", "roundrobin", "peekaboo"];
const CCS: [&str; 6] = ["cubic", "newreno", "lia", "olia", "balia", "wvegas"];

/// Reads bytes, 0 past the end.
struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn done(&self) -> bool {
        self.pos >= self.data.len()
    }
    fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
    /// A 64-bit value near `base` mostly (an offset of a few segments), sometimes anything.
    fn near(&mut self, base: u64) -> u64 {
        match self.u8() % 4 {
            0 => base.wrapping_add(self.u16() as u64),
            1 => base.wrapping_sub(self.u16() as u64),
            2 => u64::from_le_bytes(std::array::from_fn(|_| self.u8())),
            _ => base.wrapping_add(self.u32() as u64 * 1448),
        }
    }
}

/// The operations of an input, one byte each (then their operands).
#[derive(Clone, Copy, Debug)]
enum Op {
    /// Both ends send what they may; everything in flight arrives, in order.
    Exchange,
    /// Time moves on by (operand + 1) × 250 µs; due timers fire.
    Wait,
    /// Time jumps to the earliest timer, which fires.
    NextTimer,
    /// One segment of an end is lost.
    Drop,
    /// One segment of an end is held back (delivered, reversed, by `Release`).
    Hold,
    /// The held-back segments arrive, last first.
    Release,
    /// One segment of an end arrives twice.
    Duplicate,
    /// One segment of an end arrives with one field changed.
    Corrupt,
    /// A segment of arbitrary fields arrives at an end, on path 0, 1 or an unknown path 2.
    Inject,
    /// An end's application writes.
    Write,
    /// An end's application reads.
    Read,
    /// An interface event at an end.
    PathEvent,
    /// An end closes (DATA_FIN).
    Close,
    /// An end aborts (MP_FASTCLOSE).
    Abort,
}

const OPS: [Op; 16] = [
    Op::Exchange,
    Op::Exchange,
    Op::Exchange,
    Op::Wait,
    Op::Wait,
    Op::NextTimer,
    Op::Drop,
    Op::Hold,
    Op::Release,
    Op::Duplicate,
    Op::Corrupt,
    Op::Inject,
    Op::Write,
    Op::Read,
    Op::PathEvent,
    Op::Close,
];

struct Pair {
    ends: [Connection; 2],
    now: Instant,
    held: Vec<(usize, Transmit)>,
}

/// The segment target.
pub fn segments(data: &[u8]) -> Outcome {
    let mut r = Reader { data, pos: 0 };
    let mut pair = Pair::new(&mut r)?;
    let mut steps = 0u32;
    while !r.done() {
        let b = r.u8();
        // One op in 64 aborts (rarely: an abort ends the interesting part of an input).
        let op = if b == 0xff { Op::Abort } else { OPS[(b % 16) as usize] };
        pair.apply(op, &mut r)?;
        pair.events();
        steps += 1;
    }
    let [c, s] = &pair.ends;
    Ok(format!("{:?}/{:?} after {} ops", c.state(), s.state(), if steps > 100 { ">100" } else { "<=100" }))
}

impl Pair {
    fn new(r: &mut Reader) -> Result<Pair, String> {
        let scheduler = SchedSpec::parse(SCHEDULERS[r.u8() as usize % SCHEDULERS.len()]).map_err(|e| e.to_string())?;
        let cc = CcSpec::parse(CCS[r.u8() as usize % CCS.len()]).map_err(|e| e.to_string())?;
        let cfg = ConnConfig { paths: vec![0, 1], backup: vec![false, false], scheduler, cc, ..Default::default() };
        let server_cfg = ConnConfig { key: cfg.key ^ 0x5a5a_5a5a_5a5a_5a5a, ..cfg.clone() };
        let now = Instant(0);
        let client = Connection::new(&cfg, Side::Client, now).map_err(|e| format!("{e:?}"))?;
        let server = Connection::new(&server_cfg, Side::Server, now).map_err(|e| format!("{e:?}"))?;
        let mut pair = Pair { ends: [client, server], now, held: Vec::new() };
        pair.ends[0].write(1 << 20);
        Ok(pair)
    }

    fn apply(&mut self, op: Op, r: &mut Reader) -> Result<(), String> {
        let e = (r.u8() & 1) as usize;
        match op {
            Op::Exchange => self.exchange()?,
            Op::Wait => self.advance(self.now.0 + (r.u8() as u64 + 1) * 250_000),
            Op::NextTimer => {
                let next = self.ends.iter().filter_map(|c| c.poll_timeout()).min();
                if let Some(t) = next {
                    self.advance(t.0.max(self.now.0));
                }
            }
            Op::Drop => drop(self.ends[e].poll_transmit(self.now)),
            Op::Hold => self.held.extend(self.ends[e].poll_transmit(self.now).map(|t| (e, t))),
            Op::Release => {
                for (from, t) in std::mem::take(&mut self.held).into_iter().rev() {
                    self.deliver(1 - from, t);
                }
            }
            Op::Duplicate => {
                if let Some(t) = self.ends[e].poll_transmit(self.now) {
                    self.deliver(1 - e, t);
                    self.deliver(1 - e, t);
                }
            }
            Op::Corrupt => {
                if let Some(mut t) = self.ends[e].poll_transmit(self.now) {
                    corrupt(&mut t.seg, r);
                    self.deliver(1 - e, t);
                }
            }
            Op::Inject => {
                let path = (r.u8() % 3) as u16;
                let seg = arbitrary(r);
                self.deliver(e, Transmit { path, seg });
            }
            Op::Write => drop(self.ends[e].write(r.u16() as u64 * 64)),
            Op::Read => drop(self.ends[e].read(r.u32() as u64)),
            Op::PathEvent => {
                let path = (r.u8() % 3) as u16;
                let st = [PathState::Down, PathState::Up, PathState::Backup(true), PathState::Backup(false)];
                self.ends[e].set_path(self.now, path, st[r.u8() as usize % 4]);
            }
            Op::Close => self.ends[e].close(),
            Op::Abort => self.ends[e].abort(self.now),
        }
        Ok(())
    }

    fn deliver(&mut self, to: usize, t: Transmit) {
        self.ends[to].handle_segment(self.now, t.path, &t.seg);
    }

    /// Both ends send everything they may now; it all arrives (repeated until quiet).
    fn exchange(&mut self) -> Result<(), String> {
        for _ in 0..64 {
            let mut quiet = true;
            for e in 0..2 {
                let burst = self.burst(e)?;
                quiet &= burst.is_empty();
                for t in burst {
                    self.deliver(1 - e, t);
                }
            }
            self.events();
            if quiet {
                break;
            }
        }
        Ok(())
    }

    fn burst(&mut self, e: usize) -> Result<Vec<Transmit>, String> {
        let mut out = Vec::new();
        while let Some(t) = self.ends[e].poll_transmit(self.now) {
            out.push(t);
            if out.len() > MAX_BURST {
                return Err(format!("livelock: end {e} emitted more than {MAX_BURST} segments at {:?}", self.now));
            }
        }
        Ok(out)
    }

    /// Time moves to `to` (at most the horizon); due timers fire.
    fn advance(&mut self, to: u64) {
        self.now = Instant(to.min(HORIZON_NS).max(self.now.0));
        for c in self.ends.iter_mut() {
            if c.poll_timeout().is_some_and(|t| t <= self.now) {
                c.handle_timeout(self.now);
            }
        }
    }

    /// Events drained; a decision asked for is answered with the default.
    fn events(&mut self) {
        for c in self.ends.iter_mut() {
            let mut n = 0;
            while let Some(ev) = c.poll_event() {
                if ev == Event::DecisionNeeded {
                    c.decide(Decision::Path(None));
                }
                n += 1;
                if n > MAX_BURST {
                    break;
                }
            }
        }
    }
}

/// One field of `seg` changed.
fn corrupt(seg: &mut Segment, r: &mut Reader) {
    match r.u8() % 10 {
        0 => seg.flags = Flags(r.u8()),
        1 => seg.seq = r.near(seg.seq),
        2 => seg.ack = r.near(seg.ack),
        3 => seg.dsn = r.near(seg.dsn),
        4 => seg.data_ack = r.near(seg.data_ack),
        5 => seg.len = r.u16(),
        6 => seg.wnd = r.u32(),
        7 => seg.sf = r.u8(),
        8 => seg.mp_key = r.near(seg.mp_key),
        _ => {
            seg.n_sack = r.u8() % 5;
            let base = seg.ack;
            seg.sack = std::array::from_fn(|_| SackBlock { start: r.near(base), end: r.near(base) });
        }
    }
}

/// A segment of arbitrary fields (sequence numbers mostly near the start of the spaces).
fn arbitrary(r: &mut Reader) -> Segment {
    let mut seg = Segment {
        sf: r.u8() % 4,
        flags: Flags(r.u8()),
        n_sack: r.u8() % 5,
        len: r.u16() % 3000,
        wnd: r.u32(),
        ..Default::default()
    };
    seg.seq = r.near(0);
    seg.ack = r.near(0);
    seg.dsn = r.near(0);
    seg.data_ack = r.near(0);
    seg.ts_val = r.near(0);
    seg.ts_ecr = r.near(0);
    seg.mp_key = r.near(0);
    seg.sack = std::array::from_fn(|_| SackBlock { start: r.near(0), end: r.near(0) });
    seg
}
