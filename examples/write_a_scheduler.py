"""Write a scheduler (docs/tutorials/write-a-scheduler.md): a Python scheduler registered by
name, compared with the built-in minRTT over three seeds.

    python examples/write_a_scheduler.py
"""

from pathlib import Path

import mpsched

HERE = Path(__file__).resolve().parent


@mpsched.scheduler("fastest-only")
def fastest_only(view):
    """Only the usable active subflow with the smallest smoothed RTT: wait for its window
    rather than send on a slower one (no head-of-line blocking, but no aggregation either);
    the slower subflow carries data only while the fast one is down."""
    usable = [s for s in view.subflows if s.usable and not s.backup]
    if not usable:
        return None
    best = min(usable, key=lambda s: s.srtt_ms)
    return best.index if best.available else None


def main() -> None:
    cmp = mpsched.compare(
        HERE / "wifi-lte.toml", schedulers=["minrtt", "fastest-only"], seeds=[1, 2, 3]
    )
    table = cmp.summary[cmp.summary["flow"] == "mptcp"]
    columns = ["variant", "goodput_mbps", "goodput_ci_mbps", "retransmits", "mean_ooo_bytes"]
    print(table[columns].to_string(index=False))


# Worker processes of compare import this file again (that is how they learn the scheduler):
# run only as a script.
if __name__ == "__main__":
    main()
