"""Shape variants as the user writes them (`--variant 'x=1,256;sr=8000'`), each item told apart
as an input shape (`--input-shape`) or an input value (`--specialize`) by the model's inputs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from codegen.errors import KilnError


@dataclass(frozen=True)
class VariantSpec:
    """One shape variant: the input shapes and specialised input values it is compiled for."""

    label: str  # C suffix of its entry point: N_<label>_run
    input_shapes: tuple[tuple[str, tuple[int, ...]], ...] = ()
    specialized: tuple[tuple[str, tuple[float, ...]], ...] = ()

    def describe(self) -> str:
        items = [f"{n}={','.join(str(d) for d in s)}" for n, s in self.input_shapes]
        items += [f"{n}={','.join(f'{v:g}' for v in s)} (value)" for n, s in self.specialized]
        return "; ".join(items) or "the model's own shapes"


def split_items(text: str) -> list[tuple[str, tuple[float, ...]]]:
    """`NAME=v0,v1;NAME2=...` as (name, numbers); a malformed item is one clear error."""
    items = []
    for item in (t.strip() for t in text.split(";")):
        if not item:
            continue
        name, sep, values = item.rpartition("=")
        try:
            parsed = tuple(int(v) if v.strip().lstrip("+-").isdigit() else float(v) for v in values.split(","))
        except ValueError:
            parsed = ()
        if not sep or not name or not parsed:
            raise KilnError(f"--variant '{text}': '{item}' is not NAME=v0,v1,... with numbers")
        items.append((name, parsed))
    if not items:
        raise KilnError(f"--variant '{text}' names no input (NAME=d0,d1,...;NAME2=...)")
    return items


def declared_inputs(model: Path) -> dict[str, tuple[int | None, ...] | None]:
    """Each runtime input of an ONNX model with its declared dimensions (None: unknown); a
    TFLite model: every input shape-like (its inputs take no values that size tensors)."""
    if model.suffix.lower() != ".onnx":
        return {}
    import onnx

    try:
        proto = onnx.load(str(model), load_external_data=False)
    except Exception as err:  # the build's own import reports the file properly
        raise KilnError(f"cannot read the model's inputs: {err}") from None
    inits = {t.name for t in proto.graph.initializer}
    result = {}
    for vi in proto.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        result[vi.name] = (tuple(d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim)
                           if tt.HasField("shape") else None)
    return result


def _is_value(name: str, values: tuple[float, ...], declared: dict) -> bool:
    """An item gives an input's value when the input's declared shape is static and holds
    exactly that many elements; otherwise it gives the input's shape."""
    dims = declared.get(name)
    if dims is None or any(d is None for d in dims):
        return False
    count = 1
    for d in dims:
        count *= d
    return count == len(values) and not (len(dims) == len(values) and tuple(dims) == tuple(values))


def parse_variants(texts: list[str], model: Path) -> list[VariantSpec]:
    """The variants in order, labelled v0, v1, ...; two variants with the same items are refused."""
    declared = declared_inputs(model)
    specs, seen = [], {}
    for k, text in enumerate(texts):
        shapes, values = [], []
        for name, numbers in split_items(text):
            if _is_value(name, numbers, declared):
                values.append((name, numbers))
            elif any(isinstance(v, float) or v < 0 for v in numbers):
                raise KilnError(f"--variant '{text}': '{name}' takes a shape, dimensions of at least 0")
            else:
                shapes.append((name, tuple(int(v) for v in numbers)))
        spec = VariantSpec(f"v{k}", tuple(sorted(shapes)), tuple(sorted(values)))
        key = (spec.input_shapes, spec.specialized)
        if key in seen:
            raise KilnError(f"--variant '{text}' repeats variant {seen[key]}")
        seen[key] = spec.label
        specs.append(spec)
    return specs
