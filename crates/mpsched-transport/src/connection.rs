//! A connection: the application's byte stream over one or more subflows.
//!
//! This first version carries one subflow per path and hands new data to the first subflow with
//! window space; MPTCP scheduling, path management and reinjection build on this shape.

use crate::cc::AnyCc;
use crate::segment::Segment;
use crate::subflow::{ConnShared, Role, Subflow, SubflowConfig, SubflowCx, SubflowInfo};
use crate::time::Instant;

/// Index of a network path, assigned by the driver.
pub type PathId = u16;

/// Which end of the connection this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Opens the connection (sends SYN).
    Client,
    Server,
}

#[derive(Clone, Debug)]
pub struct ConnConfig {
    pub subflow: SubflowConfig,
    /// Congestion-control name, see [`AnyCc::NAMES`].
    pub cc: String,
    /// Receive buffer in bytes (its free space is the advertised window).
    pub rcv_buf: u64,
    /// One subflow per path, in this order.
    pub paths: Vec<PathId>,
}

/// A segment to put on a path.
#[derive(Clone, Copy, Debug)]
pub struct Transmit {
    pub path: PathId,
    pub seg: Segment,
}

/// Connection-level counters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ConnInfo {
    /// Bytes the application has written.
    pub bytes_written: u64,
    /// Bytes handed to subflows at least once.
    pub bytes_sent_new: u64,
    /// Bytes delivered in order to the receiving application.
    pub bytes_delivered: u64,
    /// Bytes waiting out of order in the receive buffer.
    pub ooo_bytes: u64,
    /// Bytes received more than once at the connection level.
    pub duplicate_bytes: u64,
    /// Free receive window advertised.
    pub rcv_window: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownCc(pub String);

impl std::fmt::Display for UnknownCc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown congestion control {:?}, expected one of {:?}", self.0, AnyCc::NAMES)
    }
}

pub struct Connection {
    side: Side,
    shared: ConnShared,
    subflows: Vec<Subflow>,
    paths: Vec<PathId>,
    read_total: u64,
    /// Subflow polled first on the next `poll_transmit` (round robin for fairness among subflows).
    next_poll: usize,
}

impl Connection {
    pub fn new(cfg: &ConnConfig, side: Side, now: Instant) -> Result<Self, UnknownCc> {
        let role = match side {
            Side::Client => Role::Client,
            Side::Server => Role::Server,
        };
        let mut subflows = Vec::with_capacity(cfg.paths.len());
        for (i, _) in cfg.paths.iter().enumerate() {
            let cc = AnyCc::by_name(&cfg.cc).ok_or_else(|| UnknownCc(cfg.cc.clone()))?;
            subflows.push(Subflow::new(i as u8, role, cfg.subflow.clone(), cc, now));
        }
        Ok(Connection {
            side,
            shared: ConnShared::new(cfg.rcv_buf),
            subflows,
            paths: cfg.paths.clone(),
            read_total: 0,
            next_poll: 0,
        })
    }

    pub fn side(&self) -> Side {
        self.side
    }

    /// Application writes `bytes` more bytes; all are accepted (the send buffer is unbounded).
    pub fn write(&mut self, bytes: u64) -> u64 {
        self.shared.snd_end_dsn = self.shared.snd_end_dsn.saturating_add(bytes);
        bytes
    }

    /// Application reads up to `max` in-order bytes; returns how many.
    pub fn read(&mut self, max: u64) -> u64 {
        let avail = self.shared.rcv.next() - self.read_total;
        let n = avail.min(max);
        self.read_total += n;
        self.shared.rcv_unread = self.shared.rcv.next() - self.read_total;
        n
    }

    pub fn handle_segment(&mut self, now: Instant, _path: PathId, seg: &Segment) {
        let i = seg.sf as usize;
        if i >= self.subflows.len() {
            return;
        }
        self.refresh_siblings();
        let mut cx = SubflowCx { conn: &mut self.shared, may_send_new: false };
        self.subflows[i].handle_segment(now, seg, &mut cx);
        self.shared.rcv_unread = self.shared.rcv.next() - self.read_total;
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        let mut cx = SubflowCx { conn: &mut self.shared, may_send_new: false };
        for sf in self.subflows.iter_mut() {
            if sf.poll_timeout().is_some_and(|t| t <= now) {
                sf.handle_timeout(now, &mut cx);
            }
        }
    }

    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        let n = self.subflows.len();
        for k in 0..n {
            let i = (self.next_poll + k) % n;
            let mut cx = SubflowCx { conn: &mut self.shared, may_send_new: true };
            if let Some(seg) = self.subflows[i].poll_transmit(now, &mut cx) {
                self.next_poll = (i + 1) % n;
                return Some(Transmit { path: self.paths[i], seg });
            }
        }
        None
    }

    pub fn poll_timeout(&self) -> Option<Instant> {
        self.subflows.iter().filter_map(|s| s.poll_timeout()).min()
    }

    pub fn info(&self) -> ConnInfo {
        ConnInfo {
            bytes_written: self.shared.snd_end_dsn,
            bytes_sent_new: self.shared.snd_next_dsn,
            bytes_delivered: self.shared.rcv.next(),
            ooo_bytes: self.shared.rcv.ooo_bytes(),
            duplicate_bytes: self.shared.rcv.duplicate_bytes(),
            rcv_window: self.shared.rcv_window(),
        }
    }

    pub fn subflow_count(&self) -> usize {
        self.subflows.len()
    }

    pub fn subflow_info(&self, i: usize) -> SubflowInfo {
        self.subflows[i].info()
    }

    pub fn subflows(&self) -> impl Iterator<Item = (u8, SubflowInfo)> + '_ {
        self.subflows.iter().map(|s| (s.id, s.info()))
    }

    pub fn cc_name(&self) -> &'static str {
        self.subflows.first().map(|s| s.cc_name()).unwrap_or("")
    }

    fn refresh_siblings(&mut self) {
        if self.subflows.len() > 1 {
            self.shared.siblings.clear();
            self.shared.siblings.extend(self.subflows.iter().map(|s| s.sibling_info()));
        }
    }
}
