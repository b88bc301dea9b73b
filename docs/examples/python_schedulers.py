"""Schedulers written in Python (docs/python-schedulers.md).

Load with ``mpsched run|compare --plugin docs/examples/python_schedulers.py --scheduler NAME``
or ``mpsched.load_plugin(...)``. Registers:

- ``py-minrtt``: minRTT as Linux's ``get_available_subflow`` (mptcp_sched.c), without
  opportunistic retransmission: the same results as the built-in ``minrtt-norp``;
- ``py-minrtt-rp``: the same function with opportunistic retransmission and penalization on:
  the same results as the built-in ``minrtt``;
- ``py-rr``: round-robin as Linux's mptcp_rr.c: the same results as the built-in ``rr``;
- ``ect``: earliest completion time, a scheduler that has no built-in equivalent.

The tests (python/tests/test_python_schedulers.py) check the first three against the built-ins.
"""

import mpsched


def _select(view, backup, masked):
    """One pass of Linux's ``get_subflow_from_selectors`` over the active (``backup=False``) or
    backup subflows. With ``masked``, subflows that already carried the segment count as used.
    Returns (choice or None, force): force is set when the choice is an unused subflow, or,
    without a choice, when an unused subflow is only busy (its window is full)."""
    best, found_unused, unused_busy = None, False, False
    for s in view.subflows:
        unused = not (masked and s.carried)
        if s.backup != backup or (not unused and found_unused) or not s.usable:
            continue
        if not s.available:
            unused_busy |= unused
            continue
        if unused and not found_unused:  # the first unused candidate wipes a used one
            best, found_unused = None, True
        if best is None or s.srtt_ms < best.srtt_ms:  # ties: the lower index
            best = s
    force = found_unused if best is not None else unused_busy
    return (best.index if best is not None else None), force


def min_rtt(view):
    """The available active subflow with the smallest srtt; backups only when no active
    subflow is usable; reinjections prefer subflows that have not carried the segment."""
    masked = view.reinjection
    while True:
        best, force = _select(view, False, masked)
        if force:
            return best
        best, force = _select(view, True, masked)
        if force or not masked:
            return best
        masked = False  # every candidate carried it: clear the mask, one more round


mpsched.register_scheduler("py-minrtt", min_rtt)
mpsched.register_scheduler("py-minrtt-rp", min_rtt, opportunistic_retransmission=True)


@mpsched.scheduler("py-rr")
class RoundRobin:
    """Available active subflows take turns, one segment each (mptcp_rr.c with
    num_segments = 1, cwnd_limited = true). One instance per connection."""

    def __init__(self):
        self.served = set()  # subflows that had their turn in this round

    def get_send(self, view):
        ready = [s.index for s in view.subflows if s.available and not s.backup]
        if not ready:
            return view.min_rtt()  # wait for a busy active subflow, or use a backup
        if all(i in self.served for i in ready):
            self.served = set()  # everyone had a turn: a new round
        i = next(i for i in ready if i not in self.served)
        self.served.add(i)
        return i

    def get_retrans(self, view):
        """Reinjections: the last available subflow that has not carried the segment, else
        the last available one."""
        for skip_carriers in (True, False):
            for s in reversed(view.subflows):
                if s.available and not (skip_carriers and s.carried):
                    return s.index
        return None


@mpsched.scheduler("ect")
def earliest_completion(view):
    """The subflow on which the segment would arrive first: half an RTT plus the time to
    drain what the subflow already queued, at its current rate (cwnd per srtt). Waits for a
    busy fast subflow rather than sending on a much slower one."""
    best, best_t = None, float("inf")
    for s in view.subflows:
        if not s.usable or s.backup or s.srtt_ms == 0:
            continue
        rate = s.cwnd / s.srtt_ms  # bytes per ms
        t = s.srtt_ms / 2 + (s.queued + view.seg_len) / rate
        if t < best_t:
            best, best_t = s, t
    if best is None:
        return view.min_rtt()  # no RTT sample yet, or only backups: as minRTT
    return best.index if best.available else None
