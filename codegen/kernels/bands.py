"""Bands of the Cortex-A int8 convolutions (neon and neon_dotprod conv2d_s8): the input rows
under a few output rows' windows copied once into scratch with their padding, so that no
window at the image's border is copied on its own and every window is read there in place."""
from __future__ import annotations

BAND_BYTES = 16384  # a band of several output rows up to this size (each input row copied once or so)
BAND_OUTPUT_ROWS = 8  # beyond this, the copies saved are few (k_h - stride_h rows per band)


def reaches_padding(shape: dict) -> bool:
    """Whether some window of the layer reads the padding (a band is worth its copies)."""
    reach_h = (shape["out_h"] - 1) * shape["stride_h"] + (shape["k_h"] - 1) * shape["dilation_h"] + 1
    reach_w = (shape["out_w"] - 1) * shape["stride_w"] + shape["k_w"]
    return (shape["pad_top"] > 0 or shape["pad_left"] > 0 or reach_h > shape["in_h"]
            or reach_w > shape["in_w"])


def band_input_rows(shape: dict, output_rows: int) -> int:
    """Input rows under `output_rows` output rows' windows."""
    return (output_rows - 1) * shape["stride_h"] + (shape["k_h"] - 1) * shape["dilation_h"] + 1


def band_budget(ctx) -> int:
    """Bytes a band may take: BAND_BYTES, or none past one output row under --optimize ram
    (each band then copies again the k_h - stride_h rows it shares with the one before)."""
    return 0 if ctx.optimize == "ram" else BAND_BYTES


def output_rows_per_band(shape: dict, pitch: int, column: int, budget: int) -> int:
    """Output rows per band: up to BAND_OUTPUT_ROWS, as long as the band (and, compacted, its
    windows' columns of `column` bytes) stays within `budget` bytes (always at least one)."""
    rows = min(shape["out_h"], BAND_OUTPUT_ROWS)
    while rows > 1 and band_input_rows(shape, rows) * pitch + rows * shape["out_w"] * column > budget:
        rows -= 1
    return rows
