//! Path management: subflow timeouts that mark a subflow potentially failed (Linux
//! `mptcp_is_def_unavailable`: pf after an RTO), interface up / down / backup events from the driver, and reinjection of a failed
//! subflow's unacknowledged data on the others (Linux `mptcp_reinject_data`).

use super::{Connection, Derived, Event, PathId, PathState};
use crate::subflow::SubflowCx;
use crate::time::Instant;

impl Connection {
    /// Fires every subflow timer due at `now` (a no-op before [`Connection::poll_timeout`]).
    /// An RTO on an established subflow of a multipath connection marks it potentially failed
    /// and reinjects its unacknowledged data (Linux `mptcp_is_def_unavailable`, `mptcp_reinject_data`).
    /// Also fires the DATA_FIN retransmission timer and the deadline of an unanswered
    /// per-packet decision ([`super::ConnConfig::decision_timeout`]).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.on_close_timeout(now);
        self.on_decision_timeout(now);
        self.on_scheduler_timeout(now);
        for i in 0..self.subflows.len() {
            if self.subflows[i].poll_timeout().is_none_or(|t| t > now) {
                continue;
            }
            let mut cx = SubflowCx { conn: &mut self.shared };
            self.subflows[i].handle_timeout(now, &mut cx);
            let rtos = self.subflows[i].info().rto_count;
            if rtos > self.meta[i].rto_seen {
                self.meta[i].rto_seen = rtos;
                if std::mem::take(&mut self.meta[i].up_restart) {
                    // The restart armed by set_path(Up): the path was just declared usable (the
                    // potentially-failed flag is cleared when the interface comes back up, as Linux
                    // does), so this is no new failure.
                    continue;
                }
                if !self.meta[i].path_up {
                    // The path is down: SubflowDown was reported and the subflow's data queued for
                    // reinjection at set_path(Down), and nothing new was put on it since.
                    continue;
                }
                if self.subflows.len() > 1 && self.subflows[i].is_established() {
                    // Linux: RTO => potentially failed, reinject its unacknowledged data elsewhere.
                    if !self.meta[i].pf {
                        self.events.push_back(Event::SubflowDown(i as u8));
                    }
                    self.meta[i].pf = true;
                    self.forget_usable(i);
                    self.reinject_from(i);
                }
            }
        }
        self.check_closed();
    }

    /// Queues subflow `i`'s unacknowledged data, and what waits in its send queue
    /// (connection/queue.rs), for reinjection on the others.
    pub(super) fn reinject_from(&mut self, i: usize) {
        self.requeue_for_reinjection(i);
        let mut unacked = std::mem::take(&mut self.scratch);
        unacked.clear();
        self.subflows[i].unacked_data(&mut unacked);
        for &(dsn, len) in &unacked {
            if dsn + len as u64 > self.data_una {
                self.add_reinjection(dsn, len);
            }
        }
        self.scratch = unacked;
    }

    /// Puts `len` bytes at `dsn` in the reinjection queue, which stays sorted by DSN and free of
    /// duplicates (a segment already there is not added again).
    pub(super) fn add_reinjection(&mut self, dsn: u64, len: u32) {
        let pos = self.reinject.partition_point(|r| r.0 < dsn);
        if self.reinject.get(pos).is_none_or(|r| r.0 != dsn) {
            self.reinject.insert(pos, (dsn, len));
        }
    }

    /// Subflow `i`'s `pf` or `path_up` changed, and with it maybe whether it is usable: its
    /// view's fields are recomputed, and its snapshot copied again, which puts it in the
    /// scheduler's [`SchedView::changed`](crate::sched::SchedView::changed) (the other ways
    /// `usable` changes borrow the subflow mutably, which does the same).
    fn forget_usable(&mut self, i: usize) {
        self.subflows.forget(Derived::Fields, i);
        self.subflows.forget(Derived::View, i);
    }

    /// Interface events from the driver for `path` (ignored for a path the connection has no
    /// subflow on).
    pub fn set_path(&mut self, now: Instant, path: PathId, st: PathState) {
        let Some(i) = self.index_of_path(path) else { return };
        match st {
            PathState::Down => {
                if self.close.fin_acked {
                    // Closing, and the interface is gone: the subflow's FIN exchange cannot
                    // finish; drop it (see `on_data_fin_acked`).
                    self.meta[i].path_up = false;
                    self.forget_usable(i);
                    self.subflows[i].finish();
                    self.check_closed();
                } else if self.meta[i].path_up {
                    self.meta[i].path_up = false;
                    self.forget_usable(i);
                    self.events.push_back(Event::SubflowDown(i as u8));
                    if self.subflows.len() > 1 {
                        self.reinject_from(i);
                    }
                }
            }
            PathState::Up => {
                if !self.meta[i].path_up {
                    self.meta[i].path_up = true;
                    self.meta[i].pf = false;
                    self.forget_usable(i);
                    self.meta[i].up_restart = self.subflows[i].path_up(now);
                }
            }
            PathState::Backup(b) => {
                self.meta[i].backup = b;
                self.subflows.forget(Derived::Fields, i);
            }
        }
    }
}
