"""Both frontends register converters the same way (codegen/frontends/converters.py), and an
op's attributes and defaults are declared once, by the op, the frontends naming only where a
framework attribute differs."""

from __future__ import annotations

import pytest

from codegen.frontends.converters import ConverterTable, op_attrs
from codegen.frontends.onnx.context import CONVERTERS as ONNX
from codegen.frontends.tflite import CONVERTERS as TFLITE
from codegen.frontends.tflite.converter import Converter


def test_both_frontends_use_one_converter_table():
    assert isinstance(ONNX, ConverterTable) and isinstance(TFLITE, ConverterTable)
    assert "Conv" in ONNX and callable(ONNX["Conv"])
    assert isinstance(TFLITE["CONV_2D"], Converter)


def test_a_name_registered_twice_is_an_error():
    table = ConverterTable("test")
    table.converts("Op")(lambda ctx, node: None)
    with pytest.raises(ValueError, match="test converter for Op registered twice"):
        table.converts("Op")(lambda ctx, node: None)


def test_op_attrs_reads_the_declared_attributes_under_their_framework_names():
    node = {"mode": "bilinear", "align_corners": 1, "unknown": 3}
    attrs = op_attrs("GridSample", node.get, convert={"mode": {"bilinear": "linear"}.get, "align_corners": bool})
    assert attrs == {"mode": "linear", "align_corners": True}  # padding_mode unset: the op's default
    tfidf = {"min_gram_length": 2, "weights": [1.0]}
    assert op_attrs("TfIdfVectorizer", tfidf.get, names={"min_gram": "min_gram_length", "weights": None}) == \
        {"min_gram": 2}
