"""``mpsched emulate SCENARIO``: the scenario on the machine's own Linux TCP/MPTCP through
user-space emulated links (docs/emulate.md)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.
import os
import shutil
import signal
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from .._display import print_summary, print_written
from ..results import OUTPUT_FILES, check_replaceable, write_results
from .errors import EXIT_FAILURE, EXIT_INTERRUPTED, fail
from .run import ScenarioArgument, default_out_dir

#: Where the emulator binary is looked for, after ``--emulator`` and ``$MPSCHED_EMU``.
_REPO = Path(__file__).resolve().parents[3]


def find_emulator(given: Optional[Path]) -> Optional[str]:
    """The ``mpsched-emu`` binary: ``--emulator``, ``$MPSCHED_EMU``, ``PATH``, then the cargo
    target directories (``$CARGO_TARGET_DIR`` or the repository's ``target/``)."""
    if given is not None:
        return str(given)
    env = os.environ.get("MPSCHED_EMU")
    if env:
        return env
    found = shutil.which("mpsched-emu")
    if found:
        return found
    targets = [os.environ.get("CARGO_TARGET_DIR"), str(_REPO / "target")]
    for t in filter(None, targets):
        p = Path(t) / "release" / "mpsched-emu"
        if p.is_file():
            return str(p)
    return None


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def emulate_command(
    scenario: ScenarioArgument,
    out: Annotated[
        Optional[Path],
        typer.Option(
            "--out",
            "-o",
            metavar="DIR",
            help="Output directory (default `out/<stem>-kernel`).",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[
        Optional[int],
        typer.Option("--seed", "-s", help="Seed of the links' loss streams.", show_default=False),
    ] = None,
    emulator: Annotated[
        Optional[Path],
        typer.Option(
            "--emulator",
            metavar="PATH",
            help="The `mpsched-emu` binary (default: found as documented).",
            show_default=False,
        ),
    ] = None,
    prefix: Annotated[
        str,
        typer.Option("--netns-prefix", help="Namespaces are <prefix>-client and <prefix>-server."),
    ] = "mpsched",
    cc: Annotated[
        Optional[str],
        typer.Option(
            "--cc",
            metavar="NAME",
            help="Congestion control of every flow: reno, cubic or bbr.",
            show_default=False,
        ),
    ] = None,
    kernel_scheduler: Annotated[
        bool,
        typer.Option(
            "--kernel-scheduler", help="Every multipath flow uses the kernel's MPTCP scheduler."
        ),
    ] = False,
    max_lateness_us: Annotated[
        float,
        typer.Option(
            "--max-lateness-us",
            help="Flag the run if the p99 departure lateness exceeds this (µs).",
        ),
    ] = 500.0,
) -> None:
    """Run a scenario on the machine's Linux TCP/MPTCP through emulated links (root).

    Two network namespaces (client, server) joined by one TUN pair per path; the link emulator
    applies the scenario's link model in real time. Writes the tables of `mpsched run`, with an
    `emulation` section in summary.json (departure lateness percentiles; `flagged` when the
    p99 exceeds `--max-lateness-us`). Unsupported fields are refused (exit 2).
    """
    from ..emulate.engine import EmulateOptions, emulate
    from ..emulate.plan import UnsupportedError, check_udp
    from ..emulate.topology import TopologyError, unavailable_reason

    out_dir = out if out is not None else Path(str(default_out_dir(scenario, seed)) + "-kernel")
    try:
        check_replaceable(out_dir)
    except (FileExistsError, NotADirectoryError) as e:
        fail(f"{out_dir}: {e.strerror or e}")
    try:
        check_udp(scenario)  # before the machine's checks: the file alone decides
    except UnsupportedError as e:
        fail(f"{scenario}: {e}")
    why = unavailable_reason()
    if why is not None:
        fail(f"cannot emulate here: {why}", code=EXIT_FAILURE)
    binary = find_emulator(emulator)
    if binary is None:
        fail(
            "no mpsched-emu binary: `cargo build --release -p mpsched-emu`, or --emulator PATH",
            code=EXIT_FAILURE,
        )
    opts = EmulateOptions(
        emulator=binary,
        seed=seed,
        prefix=prefix,
        max_lateness_us=max_lateness_us,
        cc=cc,
        kernel_scheduler=kernel_scheduler,
    )
    signal.signal(signal.SIGTERM, _interrupt)  # cleaned up as Ctrl-C is, from here on
    try:
        results = emulate(scenario, opts)
    except UnsupportedError as e:
        fail(f"{scenario}: {e}")
    except ValueError as e:  # the scenario itself is invalid
        fail(str(e))
    except TopologyError as e:
        fail(str(e), code=EXIT_FAILURE)
    except KeyboardInterrupt:
        fail("interrupted (namespaces and processes removed)", code=EXIT_INTERRUPTED)
    write_results(results, out_dir)
    console = Console()
    print_summary(console, results.summary, results.summary["duration_s"])
    emu = results.summary["emulation"]
    lat = emu.get("lateness") or {}
    console.print(
        f"departure lateness: p50 {lat.get('p50_us')} us, p99 {lat.get('p99_us')} us, max {lat.get('max_us')} us"
        + (f"  [bold red]FLAGGED: {emu['flag']}[/bold red]" if emu["flagged"] else ""),
        highlight=False,
    )
    print_written(console, out_dir, OUTPUT_FILES)


def calibrate_command(
    out: Annotated[
        Path, typer.Option("--out", "-o", metavar="DIR", help="Output directory.")
    ] = Path("out/calibration"),
    seeds: Annotated[str, typer.Option("--seeds", help="Comma-separated seeds.")] = "1,2,3",
    duration_s: Annotated[
        float, typer.Option("--duration-s", help="Length of each steady case (s).")
    ] = 30.0,
    outage_s: Annotated[
        float, typer.Option("--outage-s", help="Length of the outage cases' outage (s).")
    ] = 20.0,
    only: Annotated[
        Optional[str],
        typer.Option(
            "--only", metavar="CASES", help="Comma-separated case names.", show_default=False
        ),
    ] = None,
    engines: Annotated[str, typer.Option("--engines", help="sim, kernel or both.")] = "sim,kernel",
    emulator: Annotated[
        Optional[Path],
        typer.Option(
            "--emulator", metavar="PATH", help="The `mpsched-emu` binary.", show_default=False
        ),
    ] = None,
) -> None:
    """Run the calibration suite on the simulator and the kernel; write a side-by-side report.

    Cases: single TCP Reno/CUBIC with and without 0.5 % loss at 10 and 100 Mbit/s; two-path
    MPTCP symmetric, lossy, heterogeneous (20 Mbit/s·10 ms + 5 Mbit/s·100 ms) with the default
    and a 256 KB receive buffer; an outage on one path of an MPTCP connection and of a single TCP
    flow. Writes every run under DIR/runs/, calibration.json and calibration.md (medians over the
    seeds; goodput and first-path share within ±10 % or not). Over an earlier report in DIR, a
    case run again replaces the engines it ran and keeps the others' (--engines sim re-runs
    the simulator's side after a model change).
    """
    import sys

    from .. import api
    from ..emulate import calibrate
    from ..emulate.engine import EmulateOptions, emulate
    from ..emulate.topology import unavailable_reason

    seed_list = [int(s) for s in seeds.split(",") if s.strip()]
    cases = calibrate.suite(duration_s, outage_s)
    if only:
        wanted = set(only.split(","))
        unknown = wanted - {c.name for c in cases}
        if unknown:
            fail(
                f"--only: unknown case {sorted(unknown)[0]!r} (cases: {', '.join(c.name for c in cases)})"
            )
        cases = [c for c in cases if c.name in wanted]
    runners = {}
    # "both" is what --help offers; anything but sim and kernel is refused (before, an unknown
    # name, "both" included, ran no engine and wrote an empty table).
    names = (
        ["sim", "kernel"] if engines.strip() == "both" else [e.strip() for e in engines.split(",")]
    )
    unknown = [n for n in names if n not in ("sim", "kernel")]
    if unknown:
        fail(f"--engines: unknown engine {unknown[0]!r} (sim, kernel or both)")
    if "sim" in names:
        runners["sim"] = lambda path, seed: api.run(path, seed=seed)
    if "kernel" in names:
        why = unavailable_reason()
        binary = find_emulator(emulator)
        if why is not None or binary is None:
            fail(f"cannot emulate here: {why or 'no mpsched-emu binary'}", code=EXIT_FAILURE)
        runners["kernel"] = lambda path, seed: emulate(
            path, EmulateOptions(emulator=binary, seed=seed)
        )
    signal.signal(signal.SIGTERM, _interrupt)
    out.mkdir(parents=True, exist_ok=True)
    console = Console()
    rows = []
    command = "mpsched calibrate " + " ".join(sys.argv[2:])
    suite_cases = calibrate.suite(duration_s, outage_s)
    try:
        for case in cases:
            console.print(f"{case.name} ...", highlight=False)
            rows.append(calibrate.run_case(case, runners, seed_list, out))
            merged = calibrate.merge(out, rows[-1:], [c.name for c in suite_cases])
            calibrate.write(out, merged, seed_list, command, calibrate.outages(suite_cases))
    except KeyboardInterrupt:
        fail(
            "interrupted (namespaces and processes removed; finished cases are in the report)",
            code=EXIT_INTERRUPTED,
        )
    console.print(
        calibrate.report(calibrate.merge(out, [], []), seed_list, command), highlight=False
    )
    console.print(f"Wrote {out}/calibration.md and calibration.json", highlight=False)
