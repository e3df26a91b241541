"""What the ONNX and TFLite frontends share to map a framework node onto Kiln ops.

- `ConverterTable`: a frontend's converters by framework op name, registered with the
  table's `converts(*names, ...)` decorator (onnx/context.py `converter`, tflite/converter.py
  `converts`); a name registered twice is an error, not a silent replacement.
- `op_attrs`: a Kiln op's attributes and their defaults are declared once, by the op
  (codegen/ops/<op>.py `attributes`); a converter says only which framework attribute feeds
  which op attribute (when the names differ) and how its value is read. An attribute the
  node leaves out is left out here, so the op's own default applies.
"""

from __future__ import annotations

from typing import Any, Callable, Generic, Iterator, Mapping, TypeVar

from codegen.ops.registry import get_op

Entry = TypeVar("Entry")


class ConverterTable(Generic[Entry], Mapping[str, Entry]):
    """Framework op name -> the converter entry (a function, or the frontend's record of it)."""

    def __init__(self, frontend: str, entry: Callable[..., Entry] = lambda fn: fn):
        self.frontend = frontend
        self._entry = entry  # (fn, **options of converts) -> what the table holds
        self._table: dict[str, Entry] = {}

    def converts(self, *names: str, **options: Any) -> Callable:
        """Decorator: register the converter under each framework op name in `names`."""
        def register(fn):
            for name in names:
                if name in self._table:
                    raise ValueError(f"{self.frontend} converter for {name} registered twice")
                self._table[name] = self._entry(fn, **options)
            return fn
        return register

    def __getitem__(self, name: str) -> Entry:
        return self._table[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)


def op_attrs(op: str, read: Callable[[str], Any], names: Mapping[str, str | None] | None = None,
             convert: Mapping[str, Callable[[Any], Any]] | None = None) -> dict[str, Any]:
    """The attributes of Kiln op `op` that a framework node sets: each attribute the op
    declares, read as the framework attribute `names.get(attr, attr)` by `read` (None when the
    node does not set it: left out, the op's default applies; a name None: no framework
    attribute, the converter computes it), then passed through `convert[attr]` when given."""
    names, convert = names or {}, convert or {}
    out = {}
    for attr in get_op(op).attributes:
        framework = names.get(attr, attr)
        value = None if framework is None else read(framework)
        if value is not None:
            out[attr] = convert[attr](value) if attr in convert else value
    return out
