"""The documentation: the MkDocs site builds with --strict, every relative link in docs/ and
README.md resolves, nothing points outside the repository, and every example script runs."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest
from conftest import REPO

DOCS = REPO / "docs"
EXAMPLES = REPO / "examples"
PAGES = sorted(DOCS.rglob("*.md")) + [REPO / "README.md", REPO / "BENCHMARKS.md"]
# [text](target) and ![alt](target), target without blanks (an optional "title" after it).
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_FENCE = re.compile(r"^\s*(```|~~~)")


def links(page: Path) -> Iterator[Tuple[int, str]]:
    """(line number, target) of every Markdown link outside fenced code blocks and code spans."""
    fenced = False
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            for target in _LINK.findall(re.sub(r"`[^`]*`", "", line)):
                yield number, target


def test_every_relative_link_resolves():
    broken: List[str] = []
    checked = 0
    for page in PAGES:
        for number, target in links(page):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue  # http:, https:, mailto:, an anchor in the same page
            path = (page.parent / target.split("#", 1)[0]).resolve()
            checked += 1
            if not path.exists() or REPO.resolve() not in path.parents:
                broken.append(f"{page.relative_to(REPO)}:{number}: {target}")
    assert not broken, "\n".join(broken)
    assert checked > 50  # the checker found the links


def test_the_link_checker_finds_a_broken_link(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("[a](missing.md) `[b](in-code.md)`\n```\n[c](fenced.md)\n```\n![d](img.png)\n")
    assert list(links(page)) == [(1, "missing.md"), (5, "img.png")]


@pytest.mark.parametrize(
    "needle", ["/work/", "../shared", "shared/specs", "shared/papers", "docs/experiments.md"]
)
def test_no_reference_outside_the_repository(needle):
    found = [
        f"{page.relative_to(REPO)}:{n}"
        for page in sorted(DOCS.rglob("*.md")) + [REPO / "README.md"]
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1)
        if needle in line
    ]
    assert not found, f"{needle!r} in " + ", ".join(found)


def test_docs_site_builds_strict(tmp_path):
    if importlib.util.find_spec("mkdocs") is None:
        pytest.fail("mkdocs is not installed: `make dev` installs it (the `test` extra pins it)")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
         "--config-file", str(REPO / "mkdocs.yml"), "--site-dir", str(tmp_path / "site")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    for page in ("index.html", "tutorials/first-comparison/index.html", "scenarios/index.html"):
        assert (tmp_path / "site" / page).is_file(), page


# Each example with lines its output must contain.
EXAMPLE_OUTPUT = {
    "first_comparison.py": ["redundant", "figures in"],
    "real_traces.py": ["lte.fwd", "goodput_mbps"],
    "write_a_scheduler.py": ["fastest-only", "minrtt"],
    "train_and_deploy.py": ["iteration 1:", "policy:"],
    "probe_a_link.py": ["one-way delays [10067200] ns", "probes.parquet", "udp_flows.parquet"],
}


def test_every_example_is_tested():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(EXAMPLE_OUTPUT)


@pytest.mark.parametrize("script", sorted(EXAMPLE_OUTPUT))
def test_example_runs(script, tmp_path):
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / script), str(tmp_path / "out")],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    for needle in EXAMPLE_OUTPUT[script]:
        assert needle in proc.stdout, (needle, proc.stdout)
