"""Re-applies the verdict rule to a written reproduction, without re-running anything.

A verdict is a pure function of a claim's numbers (:func:`protocol.judge`: the kind, the
paper's value, our mean and CI, the paper module's note). When the rule itself changes (as when
negligible 'A beats B' gains became *partly*), every committed reproduction's tables must follow,
and re-running hours of simulations to recompute the same numbers would add nothing. This
rewrites ``claims.md`` / ``claims.json`` / ``claims-short.md`` of a directory from its own
``claims.json``: the same claims, numbers, title and preamble, the verdicts and reasons of the
current rule. The numbers never change here; a test checks that re-judging the committed
reproductions is a no-op (so the committed tables always follow the current rule)::

    python -m mpsched.reproduce.rejudge docs/reproductions/olms [DIR ...]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Dict, List, Sequence

from . import protocol as P


def _preamble(md: Path) -> List[str]:
    """The lines of ``claims.md`` between its title and the verdict rule (the paper module's
    description of the run), as :func:`protocol.write_claims` wrote them."""
    lines = md.read_text(encoding="utf-8").splitlines()
    end = next(i for i, line in enumerate(lines) if line.startswith("Verdict rule ("))
    body = lines[2:end]
    while body and not body[-1]:
        body.pop()
    return body


def rejudge(directory: Path) -> Dict[str, int]:
    """Re-judges every measured claim of ``directory``'s ``claims.json`` by the current rule
    and rewrites its three tables; returns the new verdict counts."""
    claims, doc = P.load_committed(directory)
    preamble = _preamble(directory / "claims.md")
    out = []
    for c in claims.values():
        out.append(c if c.verdict == P.NOT_MEASURED else P.judge(c))
    P.write_claims(out, directory, title=doc["title"], preamble=preamble)
    return P.verdict_counts(out)


def main(argv: Sequence[str]) -> int:
    if not argv:
        print("usage: python -m mpsched.reproduce.rejudge DIR [DIR ...]", file=sys.stderr)
        return 2
    for arg in argv:
        d = Path(arg)
        if not (d / "claims.json").is_file() or not (d / "claims.md").is_file():
            print(f"{d}: expected a reproduction directory with claims.json and claims.md",
                  file=sys.stderr)  # fmt: skip
            return 2
        print(f"{d}: {rejudge(d)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
