"""A fast subset of the ONNX backend node tests through Kiln (bench/onnx_conformance.py runs
them all and writes bench/ONNX_CONFORMANCE.md): ninety-odd cases, one or two per family of
operators and tensor types, each imported, compiled, built with gcc's strict flags, run and compared as onnx's
backend runner compares (rtol 1e-3, atol 1e-7). Also the driver's own rules: weight inputs are
baked, data inputs are not, and refusals come back as reasons."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/ lives in the checkout, not the package
from bench.onnx_conformance import (Result, bake_weights, collect_cases, run_case,  # noqa: E402
                                    sequences_as_tensors, specialized_inputs)

SUBSET = [
    # activations and elementwise math
    "test_abs", "test_exp_example", "test_log", "test_sqrt", "test_erf", "test_tan", "test_acosh",
    "test_leakyrelu", "test_elu_default", "test_selu", "test_hardsigmoid", "test_hardswish", "test_gelu_tanh_2",
    "test_mish", "test_softplus", "test_thresholdedrelu", "test_shrink_soft", "test_sign", "test_round",
    "test_prelu_broadcast", "test_div_bcast", "test_pow_bcast_array", "test_mod_mixed_sign_float32",
    "test_max_example", "test_mean_example", "test_clip_default_inbounds", "test_isinf",
    # comparisons, logic, selection
    "test_greater_equal_bcast", "test_less_equal_bcast_expanded", "test_clip_splitbounds",
    # reductions and normalisation
    "test_reduce_mean_keepdims_random", "test_reduce_l2_keep_dims_random", "test_argmax_negative_axis_keepdims_random_select_last_index",
    "test_reduce_prod_do_not_keepdims_random", "test_logsoftmax_axis_1", "test_hardmax_axis_2",
    "test_softmax_axis_0_expanded", "test_layer_normalization_4d_axis_negative_2",
    "test_rms_normalization_3d_axis2_epsilon", "test_group_normalization_example", "test_instancenorm_epsilon",
    "test_mvn", "test_l2normalization_axis_1",
    # convolution, pooling, resampling
    "test_conv_with_strides_and_asymmetric_padding", "test_convtranspose_group_2", "test_convtranspose_output_shape",
    "test_globalaveragepool", "test_globalmaxpool_precomputed",  # (the pool modules take seconds to generate)
    "test_resize_downsample_scales_cubic_antialias", "test_resize_tf_crop_and_resize",
    "test_resize_upsample_sizes_nearest_floor_align_corners", "test_gridsample_bicubic", "test_depthtospace_example",
    # data movement
    "test_slice_neg_steps", "test_split_variable_parts_2d_opset18", "test_gather_2d_indices", "test_tile_precomputed",
    "test_expand_dim_changed", "test_gather_elements_negative_indices", "test_scatter_elements_with_axis",
    "test_reversesequence_batch", "test_center_crop_pad_crop_and_pad",
    # sequence models and transformers
    "test_lstm_with_peepholes", "test_gru_seq_length", "test_attention_3d_gqa_causal",
    "test_attention_4d_with_past_and_present", "test_rotary_embedding_interleaved", "test_dft_rfft",
    "test_gemm_all_attributes", "test_matmul_4d",
    # tensor types: narrow floats, float64, sub-byte and unsigned integers, integer arithmetic
    "test_cast_FLOAT_to_FLOAT16", "test_cast_FLOAT8E4M3FN_to_FLOAT", "test_cast_no_saturate_FLOAT_to_FLOAT8E5M2",
    "test_castlike_FLOAT_to_BFLOAT16_expanded", "test_cast_FLOAT_to_INT4", "test_castlike_UINT2_to_FLOAT16",
    "test_reduce_log_sum_exp_keepdims_random", "test_add_uint64", "test_sub_int8", "test_div_uint8",
    "test_mod_mixed_sign_int32", "test_max_uint32", "test_less_equal_uint16", "test_pow_types_int32_float32",
    "test_top_k_uint64", "test_clip_default_int8_min", "test_reduce_max_bool_inputs", "test_quantizelinear_int4",
    "test_dequantizelinear_uint16", "test_qlinearmatmul_2D_uint8_float32", "test_qlinearconv", "test_cumsum_2d_int32",
    "test_center_crop_pad_crop_expanded",
    # -inf in constants
    "test_attention_4d_with_past_and_present_qk_matmul_bias_3d_mask_causal",
    # sequences fed and read as tensors, optional inputs, models of other domains only, baked loop counts
    "test_sequence_insert_at_back", "test_split_to_sequence_1", "test_optional_has_element_optional_input",
    "test_adagrad", "test_ai_onnx_ml_binarizer", "test_loop11", "test_maxunpool_export_with_output_shape",
    # integer products exact in float32
    "test_convinteger_with_padding", "test_matmulinteger",
    # inputs specialised (every input a parameter), a model of opset 1
    "test_range_float_type_positive_delta_expanded", "test_hannwindow_symmetric", "test_not_2d",
    # outputs whose length depends on the data (a bound, the actual length reported), 3-D ConvTranspose
    "test_nonzero_example", "test_unique_sorted_with_axis_3d", "test_nonmaxsuppression_two_batches",
    "test_convtranspose_3d",
    # ai.onnx.ml trees, n-gram counts
    "test_ai_onnx_ml_tree_ensemble_set_membership", "test_tfidfvectorizer_tf_batch_uniandbigrams_skip5",
]


EXTRA = ["test_conv_with_strides_padding", "test_range_float_type_positive_delta", "test_equal_string",
         "test_training_dropout", "test_optional_has_element_empty_optional_input"]


@pytest.fixture(scope="module")
def cases():
    return {c.name: c for c in collect_cases(SUBSET + EXTRA)}


@pytest.mark.parametrize("name", SUBSET)
def test_case_passes(cases, name):
    result = run_case(cases[name])
    assert result.status == "pass", f"{name}: {result.status}: {result.reason}"


def test_weights_are_baked_but_data_stays_an_input(cases):
    model, feeds, baked = bake_weights(cases["test_conv_with_strides_padding"])
    assert baked == ("W",) and list(feeds) == ["x"]
    assert [vi.name for vi in model.graph.input] == ["x"]
    # every input of Range is a parameter: baking them all would leave nothing to run
    _, feeds, baked = bake_weights(cases["test_range_float_type_positive_delta"])
    assert baked == () and len(feeds) == 3
    # ... so the build is specialised to them: runtime inputs that the generated code checks
    assert list(specialized_inputs(cases["test_range_float_type_positive_delta"])) == ["start", "limit", "delta"]
    assert specialized_inputs(cases["test_conv_with_strides_padding"]) == {}


def test_refusals_are_reasons_and_failures_are_counted(cases):
    refused = run_case(cases["test_equal_string"])
    assert refused.status == "unsupported" and "string" in refused.reason
    dropout = run_case(cases["test_training_dropout"])
    assert dropout.status == "unsupported" and "at random" in dropout.reason
    assert isinstance(refused, Result) and not refused.strict


def test_sequences_are_fed_and_read_as_tensors(cases):
    case = cases["test_sequence_insert_at_back"]
    assert isinstance(case.inputs[0], list)
    tensors = sequences_as_tensors(case)
    graph = tensors.model.graph
    assert [vi.name for vi in graph.input] == [f"sequence__{k}" for k in range(len(case.inputs[0]))] + ["tensor"]
    assert graph.node[0].op_type == "SequenceConstruct" and graph.node[-1].op_type == "SequenceAt"
    assert len(graph.output) == len(tensors.outputs) == len(case.outputs[0])
    assert all(isinstance(a, np.ndarray) for a in tensors.inputs + tensors.outputs)
    plain = cases["test_conv_with_strides_padding"]
    assert sequences_as_tensors(plain) is plain
    # an absent optional input becomes an empty Optional node
    absent = sequences_as_tensors(cases["test_optional_has_element_empty_optional_input"])
    assert not absent.model.graph.input and absent.model.graph.node[0].op_type == "Optional"
    assert run_case(cases["test_optional_has_element_empty_optional_input"]).status == "pass"
