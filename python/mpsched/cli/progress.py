"""The progress bar of ``mpsched run``: simulated time out of the scenario's duration, events
per second and the time left, on stderr, only on a terminal and only for runs longer than a
second (no output at all when stderr is redirected: logs and pipes stay clean)."""

import sys
import time
from typing import Any, Optional, TextIO

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

#: Wall time before the bar appears (a short run shows none).
DELAY_S = 1.0


class RunProgress:
    """``progress(now_s, end_s, events)`` callback of :func:`mpsched.api.run_to_dir` drawing
    the bar; use as a context manager (the bar is removed when the run ends)."""

    def __init__(self, stream: Optional[TextIO] = None, delay_s: float = DELAY_S) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._enabled = bool(getattr(self._stream, "isatty", lambda: False)())
        self._delay_s = delay_s
        self._started = time.perf_counter()
        self._bar: Optional[Progress] = None
        self._task: Any = None

    def __enter__(self) -> "RunProgress":
        self._started = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def __call__(self, now_s: float, end_s: float, events: int) -> None:
        if not self._enabled:
            return
        wall = time.perf_counter() - self._started
        if self._bar is None:
            if wall < self._delay_s:
                return
            self._bar = Progress(
                TextColumn("simulating"),
                BarColumn(),
                TextColumn("{task.completed:,.1f} / {task.total:,.1f} s simulated"),
                TextColumn("{task.fields[rate]}"),
                TimeRemainingColumn(),
                console=Console(file=self._stream),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("run", total=max(end_s, 1e-9), rate="")
        rate = f"{events / wall / 1e6:,.2f} M events/s" if wall > 0 else ""
        self._bar.update(self._task, completed=min(now_s, end_s), rate=rate)
