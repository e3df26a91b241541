"""Progress of the long steps (import of a big model, compilation, the CP-SAT arena search,
firmware builds, QEMU runs, reference runs) on a terminal: one line on stderr, rewritten in place
with the innermost step's name, its detail and its seconds so far, and erased when the step ends,
so that what Kiln prints afterwards starts on a clean line.

Off unless `configure` found stderr to be a terminal and no --quiet: piped or redirected output
and the tests see nothing of it. A background thread redraws the line twice a second, so a step
that reports nothing (a 60 s model import) still shows that it is alive.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator, TextIO

REDRAW_S = 0.5


@dataclass
class _Step:
    name: str
    detail: str = ""
    start: float = field(default_factory=time.monotonic)


_lock = threading.Lock()
_steps: list[_Step] = []
_stream: TextIO | None = None  # None: progress is off
_ticker: threading.Thread | None = None


def configure(quiet: bool, stream: TextIO | None = None) -> None:
    """Show progress on `stream` (default stderr) when it is a terminal and not `quiet`."""
    global _stream
    stream = stream or sys.stderr
    _stream = stream if not quiet and stream.isatty() else None


def enabled() -> bool:
    return _stream is not None


@contextmanager
def step(name: str) -> Iterator[None]:
    """A long step: shown while it runs (nested steps show the innermost), erased at its end."""
    if _stream is None:
        yield
        return
    entry = _Step(name)
    with _lock:
        _steps.append(entry)
        _draw()
    _start_ticker()
    try:
        yield
    finally:
        with _lock:
            _steps.remove(entry)
            _draw()


def update(detail: str) -> None:
    """New detail of the innermost step (a count, a bound); safe from other threads."""
    if _stream is None:
        return
    with _lock:
        if _steps:
            _steps[-1].detail = detail
            _draw()


def _draw() -> None:
    """Rewrite the line (the caller holds the lock); an empty line once no step is left."""
    if _stream is None:
        return
    text = ""
    if _steps:
        s = _steps[-1]
        text = f"kiln: {s.name}" + (f": {s.detail}" if s.detail else "") + f" ({time.monotonic() - s.start:.0f} s)"
        text = text[:max(20, shutil.get_terminal_size().columns - 1)]
    try:
        _stream.write("\r" + text + "\x1b[K" + ("" if text else "\r"))
        _stream.flush()
    except (OSError, ValueError):  # the terminal went away: nothing more to show
        pass


def _tick() -> None:
    while True:
        time.sleep(REDRAW_S)
        with _lock:
            if _steps:
                _draw()


def _start_ticker() -> None:
    global _ticker
    if _ticker is None:
        _ticker = threading.Thread(target=_tick, name="kiln-progress", daemon=True)
        _ticker.start()
