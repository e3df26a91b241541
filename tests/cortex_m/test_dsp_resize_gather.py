"""The DSP int8 bilinear resize (templates/kernels/cortex_m_dsp/resize_bilinear_s8.c.j2) and
the DSP gather by constant offsets (templates/kernels/cortex_m_dsp/index_map.c.j2) equal the
numpy reference, bit-exact with TFLite Micro's RESIZE_BILINEAR, in QEMU on the M4 (Armv7E-M)
and M33 (Armv8-M Mainline): up- and downscaling, align_corners and half-pixel centres (the
negative weights left of the first centre), channel counts that are and are not multiples of
4, two images; gathers whose chunks take the block, word and byte copies; also built at -O0."""

from __future__ import annotations

import numpy as np
import pytest

from codegen.ir import Graph, GraphBuilder, Quant
from test_dsp_kernels import check_target

pytestmark = pytest.mark.usefixtures("cortex_m")

Q = Quant.of(0.05, -7)

# (input NHWC, output size, align_corners, half_pixel_centers)
RESIZES = [((1, 16, 16, 32), (32, 32), False, False),  # a U-Net's 2x upsampling
           ((1, 4, 5, 8), (8, 10), False, True),  # half-pixel centres: negative weights at the edges
           ((2, 4, 5, 3), (7, 9), True, False),  # two images, three channels (the scalar tail only)
           ((1, 9, 7, 6), (4, 3), False, True),  # downscaling, one group of 4 and a tail of 2
           ((1, 3, 3, 13), (5, 6), True, False),  # three groups and a tail of 1
           ((1, 1, 1, 4), (3, 2), False, False)]  # one input pixel

# (input NHWC int8, axis, constant indices): chunks of 1, 3, 20, 21 and 120 bytes
GATHERS = [((1, 4, 5, 1), 2, [4, 0, 0, 2, 1, 3]), ((1, 4, 5, 3), 2, [1, 1, 0, 4]),
           ((1, 4, 5, 20), 2, [3, 3, 2, 0]), ((1, 4, 5, 21), 2, [0, 4, 4, 1, 2]),
           ((2, 4, 5, 24), 1, [3, 0, 0, 1, 2, 2])]


def _resize(shape, size, align, half) -> Graph:
    b = GraphBuilder("resize_bilinear")
    x = b.input("x", "int8", shape, Q)
    y = b.node("ResizeBilinearInt8", [x], size=size, align_corners=int(align), half_pixel_centers=int(half), quant=Q)
    return b.output(y).build()


def _gather(shape, axis, indices) -> Graph:
    b = GraphBuilder("gather")
    x = b.input("x", "int8", shape, Q)
    y = b.node("Gather", [x, b.const("i", np.array(indices, np.int32))], axis=axis, quant=Q)
    return b.output(y).build()


def _layers() -> list[Graph]:
    return [_resize(*c) for c in RESIZES] + [_gather(*c) for c in GATHERS]


@pytest.mark.parametrize("target,opt_level", [("cortex-m4", None), ("cortex-m33", None), ("cortex-m4", "O0")])
def test_dsp_resize_and_gather_equal_the_reference(target, opt_level):
    check_target(_layers(), target, "cortex_m_dsp", {"resize_bilinear_s8", "index_map"}, opt_level=opt_level)
