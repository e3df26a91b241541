"""Reference runtimes the generated code is compared with.

ONNX models: onnxruntime (one thread). int8 TFLite models: the TFLite Micro interpreter
(reference kernels: the bit-exact reference of DESIGN.md). float TFLite models: LiteRT.
These are test-time dependencies, imported only when a comparison is asked for.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from codegen.errors import KilnError
from codegen.frontends import model_format
from codegen.resources import install_command


def _missing(package: str) -> KilnError:
    return KilnError(f"the reference runtime needs the Python package '{package}' ({install_command('verify')})")


# Node types that make an ONNX model quantized (any domain: com.microsoft writes its own).
_QUANT_OP_PREFIXES = ("QuantizeLinear", "DequantizeLinear", "DynamicQuantize", "QLinear", "QGemm", "QAttention",
                      "MatMulInteger", "ConvInteger", "MatMulIntegerToFloat")


def is_quantized_onnx(proto) -> bool:
    return any(n.op_type.startswith(_QUANT_OP_PREFIXES) for n in proto.graph.node)


def run_onnxruntime(model: Path, samples: list[dict[str, np.ndarray]],
                    numerics: str = "tflite") -> list[dict[str, np.ndarray]]:
    try:
        import onnxruntime as ort
    except ImportError:
        raise _missing("onnxruntime") from None
    import onnx

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    if is_quantized_onnx(onnx.load(str(model), load_external_data=False)):
        # The model's own arithmetic (its QLinear* kernels, DequantizeLinear -> float op ->
        # QuantizeLinear), not the extended level's QDQ fusions: onnxruntime 1.32 turns QDQ
        # around Gemm/MatMul into a u8s8 kernel whose int16 pair sums saturate on x86 without
        # VNNI, so its answer would depend on the host's CPU (tests/onnx_models.py).
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        if numerics == "onnxruntime":
            # Kiln in onnxruntime's numerics computes what its QLinear* kernels compute: QDQ
            # groups fused into them (the extended level), int8 activations too (on x86 without
            # VNNI onnxruntime leaves s8s8 QDQ groups in float unless asked)
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            opts.add_session_config_entry("session.qdqisint8allowed", "1")
    sess = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    feeds_names = [i.name for i in sess.get_inputs()]
    results = []
    for s in samples:
        outs = sess.run(names, {k: s[k] for k in feeds_names if k in s})
        results.append(dict(zip(names, outs)))
    return results


def _tflite_io_names(model: Path) -> tuple[list[str], list[str]]:
    import tflite

    m = tflite.Model.GetRootAsModel(model.read_bytes(), 0)
    sg = m.Subgraphs(0)
    name = lambda i: sg.Tensors(i).Name().decode()  # noqa: E731
    return ([name(sg.Inputs(k)) for k in range(sg.InputsLength())],
            [name(sg.Outputs(k)) for k in range(sg.OutputsLength())])


def is_quantized_tflite(model: Path) -> bool:
    """Integer activations: a quantized model, run by TFLite Micro.

    Only int8 constants (weights) with float activations is a dynamic-range ("hybrid")
    float model: TFLite Micro refuses those, and LiteRT runs them.
    """
    import tflite

    m = tflite.Model.GetRootAsModel(model.read_bytes(), 0)
    sg = m.Subgraphs(0)

    def is_constant(t) -> bool:
        buf = m.Buffers(t.Buffer()) if t.Buffer() < m.BuffersLength() else None
        return buf is not None and (buf.DataLength() > 0 or buf.Size() > 0)

    return any(t.Type() in (tflite.TensorType.INT8, tflite.TensorType.INT16, tflite.TensorType.UINT8)
               and not is_constant(t) for t in (sg.Tensors(i) for i in range(sg.TensorsLength())))


def run_tflite_micro(model: Path, samples: list[dict[str, np.ndarray]]) -> list[dict[str, np.ndarray]]:
    try:
        from tflite_micro.python.tflite_micro import runtime
    except ImportError:
        raise _missing("tflite-micro") from None
    in_names, out_names = _tflite_io_names(model)
    interp = runtime.Interpreter.from_file(str(model))
    results = []
    for s in samples:
        for k, n in enumerate(in_names):
            d = interp.get_input_details(k)
            interp.set_input(np.asarray(s[n]).reshape(d["shape"]).astype(d["dtype"]), k)
        interp.invoke()
        results.append({n: np.array(interp.get_output(k)) for k, n in enumerate(out_names)})
    # No reset between samples: a streaming model's variables carry over from one call to the
    # next, as they do when the generated code runs the samples one after the other.
    return results


def run_litert(model: Path, samples: list[dict[str, np.ndarray]]) -> list[dict[str, np.ndarray]]:
    try:
        from ai_edge_litert.interpreter import Interpreter, OpResolverType
    except ImportError:
        raise _missing("ai-edge-litert") from None
    # LiteRT's reference kernels, as TFLite Micro's are for int8 (DESIGN.md). Not the default
    # XNNPACK delegate: it runs hybrid (dynamic-range) convolutions with its own per-image
    # input quantization, ~4e-2 relative away from TFLite's hybrid kernels. Not the optimized
    # builtins either: their depthwise sums in another order, and in a hybrid model that
    # last-bit difference can move the next layer's input quantization by one step (1.5e-4
    # relative seen on KWS float over 50 samples).
    interp = Interpreter(model_path=str(model), num_threads=1,
                         experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    interp.allocate_tensors()
    ins, outs = interp.get_input_details(), interp.get_output_details()
    in_names, out_names = _tflite_io_names(model)
    results = []
    for s in samples:
        for d, n in zip(ins, in_names):
            interp.set_tensor(d["index"], np.asarray(s[n]).reshape(d["shape"]).astype(d["dtype"]))
        interp.invoke()
        results.append({n: interp.get_tensor(d["index"]).copy() for d, n in zip(outs, out_names)})
    return results


def output_lsbs(model: Path, count: int) -> list[float | None]:
    """The quantization step of each graph output (by position), None for a float or integer
    output that is not quantized: an int8/uint8 output of an ONNX quantized op or of a TFLite
    model is judged in its integers (step 1), a float output of DequantizeLinear with a constant
    scalar scale in that scale."""
    if model_format(model) != "onnx":
        return [1.0 if dtype in ("int8", "uint8", "int16") else None for dtype in _tflite_output_dtypes(model)]
    import onnx
    from onnx import numpy_helper

    proto = onnx.load(str(model), load_external_data=False)
    producer = {o: n for n in proto.graph.node for o in n.output}
    consts = {t.name: t for t in proto.graph.initializer}
    consts.update({n.output[0]: a.t for n in proto.graph.node if n.op_type == "Constant"
                   for a in n.attribute if a.name == "value"})
    lsbs: list[float | None] = []
    for vi in proto.graph.output:
        node = producer.get(vi.name)
        elem = vi.type.tensor_type.elem_type
        lsb = None
        if node is not None and node.op_type == "DequantizeLinear" and node.input[1] in consts:
            scale = numpy_helper.to_array(consts[node.input[1]])
            lsb = float(scale.reshape(-1)[0]) if scale.size == 1 else None
        elif node is not None and node.op_type.startswith(_QUANT_OP_PREFIXES) and \
                elem in (onnx.TensorProto.INT8, onnx.TensorProto.UINT8):
            lsb = 1.0
        lsbs.append(lsb)
    return (lsbs + [None] * count)[:count]


def _tflite_output_dtypes(model: Path) -> list[str]:
    import tflite

    m = tflite.Model.GetRootAsModel(model.read_bytes(), 0)
    sg = m.Subgraphs(0)
    names = {tflite.TensorType.INT8: "int8", tflite.TensorType.UINT8: "uint8", tflite.TensorType.INT16: "int16"}
    return [names.get(sg.Tensors(sg.Outputs(k)).Type(), "other") for k in range(sg.OutputsLength())]


def default_tolerance_lsb(reference: str, numerics: str = "tflite") -> int:
    """0 where Kiln's numerics are the reference's (TFLite Micro), 1 against onnxruntime, whose
    requantization (float multiplier, round half to even) Kiln's TFLite numerics differ from by
    one step where a value falls near a rounding boundary."""
    return 0 if reference == "tflite-micro" or numerics == "onnxruntime" else 1


def reference_name(model: Path) -> str:
    if model_format(model) == "onnx":
        return "onnxruntime"
    return "tflite-micro" if is_quantized_tflite(model) else "litert"


def run_reference(model: Path, samples: list[dict[str, np.ndarray]],
                  numerics: str = "tflite") -> list[dict[str, np.ndarray]]:
    name = reference_name(model)
    try:
        if name == "onnxruntime":
            return run_onnxruntime(model, samples, numerics)
        return {"tflite-micro": run_tflite_micro, "litert": run_litert}[name](model, samples)
    except KilnError:
        raise
    except Exception as err:  # the runtime refuses a model Kiln compiled: nothing to compare with
        text = " ".join(str(err).split())
        raise KilnError(f"the reference runtime {name} refuses the model, so there is nothing to compare "
                        f"with: {type(err).__name__}: {text[:400]}", where=str(model)) from None
