"""``mpsched bench --instructions`` and ``mpsched bench --against REV`` (issue 22).

Thin wrappers over the repository's own tools, so they work from a checkout only:

- ``--instructions`` runs ``bench/instructions.sh`` (callgrind instruction counts inside the
  event loop: per event, per packet, per delivered packet, and the structures' sizes) on the
  product build (``scripts/pgo.sh``: profile-guided), or with ``--plain`` the plain release build.
- ``--against REV`` builds the ``bench`` example of ``mpsched-sim`` for the working tree and for
  revision ``REV`` (checked out in a temporary git worktree), each as its revision builds its
  product (profile-guided when it has ``scripts/pgo.sh``; ``--plain``: both plain), then runs
  the two binaries in turn,
  ``rounds`` times per benchmark with the order alternating, and prints each side's fastest wall
  time and the ratio ``REV / this tree`` (above 1: this tree is faster). Same-run ratios hold
  when the machine's load drifts; absolute times do not.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Sequence

__all__ = [
    "BenchRevError",
    "repo_root",
    "instructions",
    "parse_walls",
    "interleave",
    "format_ratios",
    "against",
]

#: A line of the ``bench`` example: ``NAME  sim  100.0 s  wall  0.0123 s ...``.
_WALL = re.compile(r"^(\S+)\s+sim\s+[0-9.]+ s\s+wall\s+([0-9.]+) s")


class BenchRevError(Exception):
    """A wrapper could not run (no checkout, unknown revision, failed build or run)."""


def repo_root(start: Optional[Path] = None) -> Path:
    """The checkout holding ``bench/instructions.sh`` above ``start`` (default: this file)."""
    here = (start or Path(__file__)).resolve()
    for d in [here, *here.parents]:
        if (d / "bench" / "instructions.sh").is_file() and (d / "Cargo.toml").is_file():
            return d
    raise BenchRevError("needs a source checkout of mpsched (bench/instructions.sh not found)")


def instructions(names: Sequence[str], root: Optional[Path] = None, pgo: bool = True) -> int:
    """Runs ``bench/instructions.sh NAMES...`` on the product build (``pgo``) or the plain
    release build; its output goes to this process's stdout."""
    root = root or repo_root()
    env = {**os.environ, "PGO": "1" if pgo else "0"}
    return subprocess.run(
        ["bash", str(root / "bench" / "instructions.sh"), *names], cwd=root, env=env
    ).returncode


def parse_walls(text: str) -> Dict[str, float]:
    """Wall seconds per benchmark name from the ``bench`` example's output."""
    out = {}
    for line in text.splitlines():
        m = _WALL.match(line)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


Runner = Callable[[Path, str], float]


def _run_bench(binary: Path, name: str) -> float:
    proc = subprocess.run([str(binary), name], capture_output=True, text=True)
    walls = parse_walls(proc.stdout)
    if proc.returncode != 0 or name not in walls:
        raise BenchRevError(f"{binary} {name} failed: {proc.stderr.strip() or proc.stdout.strip()}")
    return walls[name]


def interleave(
    ours: Path, theirs: Path, names: Sequence[str], rounds: int, run: Runner = _run_bench
) -> List[dict]:
    """Runs both binaries on every benchmark ``rounds`` times, alternating which goes first.

    Returns one row per name: fastest wall of each side, and ``ratio`` = theirs / ours of the
    fastest runs plus ``median_pair_ratio`` over the rounds' pairs.
    """
    if rounds < 1:
        raise BenchRevError("rounds must be at least 1")
    rows = []
    for name in names:
        a: List[float] = []
        b: List[float] = []
        for r in range(rounds):
            if r % 2 == 0:
                a.append(run(ours, name))
                b.append(run(theirs, name))
            else:
                b.append(run(theirs, name))
                a.append(run(ours, name))
        pairs = [y / x for x, y in zip(a, b) if x > 0]
        rows.append(
            {
                "name": name,
                "ours_s": min(a),
                "theirs_s": min(b),
                "ratio": min(b) / min(a) if min(a) > 0 else float("inf"),
                "median_pair_ratio": statistics.median(pairs) if pairs else float("inf"),
                "rounds": rounds,
            }
        )
    return rows


def format_ratios(rows: Sequence[dict], rev: str) -> List[str]:
    """One line per row: both fastest times and the ratios (above 1: this tree is faster)."""
    return [
        f"{r['name']:<14} this tree {r['ours_s']:.6f} s  {rev} {r['theirs_s']:.6f} s  "
        f"{rev}/this {r['ratio']:.3f}x (median of pairs {r['median_pair_ratio']:.3f}x, "
        f"{r['rounds']} rounds)"
        for r in rows
    ]


def _git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BenchRevError(f"git {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout.strip()


def resolve(root: Path, rev: str) -> str:
    """The commit ``rev`` names in the checkout at ``root``."""
    try:
        return _git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except BenchRevError:
        raise BenchRevError(f"unknown revision {rev!r}") from None


@contextmanager
def revision_checkout(root: Path, commit: str) -> Iterator[Path]:
    """A temporary detached git worktree of ``commit``, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="mpsched-against-") as tmp:
        where = Path(tmp) / "src"
        _git(root, "worktree", "add", "--detach", str(where), commit)
        try:
            yield where
        finally:
            _git(root, "worktree", "remove", "--force", str(where))


def build_command(checkout: Path, target_dir: Path, pgo: bool = True) -> "tuple[List[str], Path]":
    """The command building the ``bench`` example of ``checkout`` and the binary it makes.

    Each revision is built the way it builds its product: through its own ``scripts/pgo.sh``
    (profile-guided, in ``target_dir/pgo/build``) when it has one and ``pgo`` is on, else the
    plain release build in ``target_dir`` (revisions before the script, or ``pgo`` off to
    compare code alone).
    """
    cargo = ["cargo", "build", "--release", "-q", "-p", "mpsched-sim", "--example", "bench"]
    script = checkout / "scripts" / "pgo.sh"
    if pgo and script.is_file():
        return [
            "bash",
            str(script),
            "exec",
            *cargo,
        ], target_dir / "pgo" / "build" / "release" / "examples" / "bench"
    return cargo, target_dir / "release" / "examples" / "bench"


def build_bench(checkout: Path, target_dir: Path, pgo: bool = True) -> Path:
    """Builds the ``bench`` example of ``checkout`` (see :func:`build_command`)."""
    env = {**os.environ, "CARGO_TARGET_DIR": str(target_dir)}
    cmd, binary = build_command(checkout, target_dir, pgo)
    if subprocess.run(cmd, cwd=checkout, env=env).returncode != 0:
        raise BenchRevError(f"cargo build failed in {checkout}")
    return binary


def against(
    rev: str, names: Sequence[str], rounds: int, root: Optional[Path] = None, pgo: bool = True
) -> List[dict]:
    """Builds this tree and ``rev``, copies both binaries aside and interleaves their runs.

    ``rev`` is built in ``$CARGO_TARGET_DIR/against`` (default ``target/against``), so its
    dependencies stay compiled between calls. Each side is built as its revision builds its
    product (:func:`build_command`); ``pgo=False`` builds both plain.
    """
    if rounds < 1:
        raise BenchRevError("rounds must be at least 1")
    root = root or repo_root()
    commit = resolve(root, rev)
    target = Path(os.environ.get("CARGO_TARGET_DIR") or root / "target")
    with tempfile.TemporaryDirectory(prefix="mpsched-bins-") as bins:
        ours = Path(bins) / "bench-ours"
        theirs = Path(bins) / "bench-theirs"
        ours.write_bytes(build_bench(root, target, pgo).read_bytes())
        with revision_checkout(root, commit) as checkout:
            theirs.write_bytes(build_bench(checkout, target / "against", pgo).read_bytes())
        ours.chmod(0o755)
        theirs.chmod(0o755)
        return interleave(ours, theirs, names, rounds)
