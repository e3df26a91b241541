"""Figures of one tool on one model, each either measured or missing with the reason why.

A peer failing on one model must not abort the run: every measurement runs inside
`attempt(record, keys)`, which turns an exception into a one-line reason for the figures it
did not produce. The report prints the reason where the figure would be.
"""

from __future__ import annotations

import contextlib
import traceback
from dataclasses import dataclass, field
from typing import Any, Iterator

TOOLS = ("kiln", "emx", "tflm", "ort")
TOOL_NAMES = {"kiln": "Kiln", "emx": "emx-onnx-cgen", "tflm": "TFLite Micro interpreter",
              "ort": "onnxruntime"}


class Unavailable(Exception):
    """A figure that cannot exist for this tool or model (not a failure): the message says why."""


@dataclass
class Record:
    tool: str
    values: dict[str, Any] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)  # figure -> reason it is missing

    def set(self, key: str, value: Any) -> None:
        self.values[key] = value
        self.why.pop(key, None)

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def missing(self, key: str, reason: str) -> None:
        if key not in self.values:
            self.why.setdefault(key, reason)

    def reason(self, key: str) -> str | None:
        return self.why.get(key)


def one_line(err: BaseException, limit: int = 160) -> str:
    """The error in one line: a compiler's first "error:" line when there is one."""
    lines = str(err).splitlines()
    errors = [line.strip() for line in lines if "error:" in line and not line.lstrip().startswith("cc1")]
    text = " ".join((errors[0] if errors else str(err)).split()) or type(err).__name__
    if not isinstance(err, Unavailable) and type(err).__name__ not in text:
        text = f"{type(err).__name__}: {text}"
    return text if len(text) <= limit else text[: limit - 1] + "…"


@contextlib.contextmanager
def attempt(record: Record, *keys: str, log: list[str] | None = None) -> Iterator[None]:
    """Run a measurement; on an exception, the figures `keys` it did not set get its reason."""
    try:
        yield
    except KeyboardInterrupt:
        raise
    except Exception as err:  # any peer failure is a result, never the end of the run
        reason = one_line(err)
        for key in keys:
            record.missing(key, reason)
        if log is not None and not isinstance(err, Unavailable):
            log.append(f"{record.tool} [{', '.join(keys)}]: {reason}\n"
                       + "".join(traceback.format_exception(err))[-3000:])
