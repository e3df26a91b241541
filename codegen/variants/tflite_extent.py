"""`--max-shape` on a TFLite model: the bounded dimension is the one the converter left open in
the input (-1 in its shape signature, as it writes a Keras model's `None` time axis), and the
reference the code is compared with at extent T is the model with its open dimensions set to T
(TFLite Micro reads only the tensors' shapes, so a model of that length)."""

from __future__ import annotations

import struct
from pathlib import Path

from codegen.errors import KilnError

_SHAPE_FIELD = 4  # vtable offset of Tensor.shape (field 0 of schema.fbs's table Tensor)


def tflite_declared_inputs(model: Path) -> dict[str, tuple[int | None, ...]]:
    """Each graph input of a TFLite model with its dimensions, None where the shape signature
    leaves one open; by tensor name and by Kiln's unique name (the frontend takes both)."""
    from codegen.frontends.tflite.importer import unique_names
    from codegen.frontends.tflite.reader import read_model

    info = read_model(model.read_bytes())
    names = unique_names(info)
    declared = {}
    for i in info.inputs:
        t = info.tensors[i]
        dims = tuple(None if k in t.dynamic_dims else d for k, d in enumerate(t.shape))
        declared[t.name] = declared[names[i]] = dims
    return declared


def tflite_at_extent(data: bytes, extent: int) -> bytes:
    """The model with every open dimension (-1 in a tensor's shape signature) of every tensor set
    to `extent` in the tensor's shape, patched in place (the flatbuffer keeps its layout)."""
    import tflite

    out = bytearray(data)
    model = tflite.Model.GetRootAsModel(data, 0)
    for g in range(model.SubgraphsLength()):
        sg = model.Subgraphs(g)
        for i in range(sg.TensorsLength()):
            t = sg.Tensors(i)
            if not t.ShapeSignatureLength() or t.ShapeSignatureLength() != t.ShapeLength():
                continue
            start = t._tab.Vector(t._tab.Offset(_SHAPE_FIELD))
            for k, d in enumerate(t.ShapeSignatureAsNumpy()):
                if d < 0:
                    struct.pack_into("<i", out, start + 4 * k, extent)
    return bytes(out)


def reference_at_extent(model: Path, extent: int, folder: Path) -> Path:
    """The model the reference runtime runs at `extent`: an ONNX model itself (onnxruntime takes
    any length of a dynamic dimension), a TFLite model written at that length into `folder`."""
    if model.suffix.lower() != ".tflite":
        return model
    path = folder / f"{model.stem}_at_{extent}.tflite"
    try:
        path.write_bytes(tflite_at_extent(model.read_bytes(), extent))
    except OSError as err:
        raise KilnError(f"cannot write the reference model at extent {extent}: {err}") from None
    return path


def reference_for_shapes(model: Path, shapes: dict[str, tuple[int, ...]], folder: Path) -> Path:
    """The model the reference runtime runs for a shape variant: an ONNX model itself, a TFLite
    model with its open dimensions set to the size the variant gives them (one size for all)."""
    if model.suffix.lower() != ".tflite":
        return model
    declared = tflite_declared_inputs(model)
    sizes = {shape[k] for name, shape in shapes.items() if name in declared
             for k, d in enumerate(declared[name]) if d is None and k < len(shape)}
    if not sizes:
        return model
    if len(sizes) > 1:
        raise KilnError(f"the variant gives the model's open dimensions the sizes {sorted(sizes)}: the reference "
                        "runtime runs a TFLite model at one size of them")
    return reference_at_extent(model, sizes.pop(), folder)
