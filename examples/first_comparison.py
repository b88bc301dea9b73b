"""Your first comparison (docs/tutorials/first-comparison.md): two schedulers × three seeds on
a WiFi/LTE scenario, the summary as a DataFrame, and the figures.

    python examples/first_comparison.py [OUT_DIR]      # default: out/first-comparison
"""

import sys
from pathlib import Path

import mpsched
from mpsched import plot

HERE = Path(__file__).resolve().parent


def main(out: Path) -> None:

    # The same dataset as `mpsched compare examples/wifi-lte.toml --scheduler minrtt,redundant
    # --seeds 1-3 --out OUT_DIR`, returned as pandas DataFrames.
    cmp = mpsched.compare(
        HERE / "wifi-lte.toml", schedulers=["minrtt", "redundant"], seeds=range(1, 4), out=out
    )
    columns = ["variant", "flow", "goodput_mbps", "goodput_ci_mbps", "fct_s"]
    print(cmp.summary[columns].to_string(index=False))

    # Per-run numbers are ordinary pandas: the multipath flow's goodput in each run.
    mp = cmp.flows[cmp.flows["name"] == "mptcp"]
    print(mp.pivot(index="seed", columns="variant", values="goodput_mbps").round(2))

    # The figures of `mpsched plot OUT_DIR` (the outage of LTE is shaded in the time series).
    written = plot.render(cmp.dataset, out / "plots", ["png"])
    print(f"{len(written)} figures in {out / 'plots'}")


# Worker processes of compare import this file again: run only as a script (multiprocessing).
if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("out/first-comparison"))
