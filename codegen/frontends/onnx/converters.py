"""Every ONNX converter module, imported once so that each registers its converters in
context.CONVERTERS before the driver (convert.py) looks them up. The package imports this
module first; convert.py and subgraph.py import no converter module, so that converters may
use the driver (subgraphs, folding) without an import cycle."""

from codegen.frontends.onnx import (ops_attention, ops_elementwise, ops_gather, ops_linear, ops_loss,  # noqa: F401
                                    ops_misc, ops_norm, ops_quant, ops_recurrent, ops_reduce, ops_shape,
                                    ops_ms_fused, ops_quant_ms, ops_spatial)
from codegen.frontends.onnx import (ops_bitwise, ops_control, ops_einsum, ops_flex_attention, ops_linalg,  # noqa: F401
                                    ops_integer, ops_ml, ops_optional, ops_sampling, ops_sequence,
                                    ops_training, ops_value_shaped)
from codegen.frontends.onnx import ops_data_shaped  # noqa: F401
from codegen.frontends.onnx import ops_ml_linear, ops_ml_svm  # noqa: F401
