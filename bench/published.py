"""Reference figures for TFLite Micro on the int8 models, NOT measured by this benchmark.

TFLite Micro cannot be built for the Cortex-M here without fetching its sources (and
CMSIS-NN's), so its Cortex-M figures come from ../shared/models/README.md: TFLM built from
source with arm-none-eabi-gcc 12.2 -O2, run in QEMU mps2-an386 with an instruction-counting
plugin, one Invoke() on a fixed int8 input. They are read from that file's table, and every
place the report uses them says so.
"""

from __future__ import annotations

import re
from pathlib import Path

from bench.config import SHARED_MODELS

README = SHARED_MODELS / "README.md"
# Row labels of the README's table -> model file stems.
ROWS = {"KWS": "kws_ref_model", "VWW": "vww_96_int8", "IC": "pretrainedResnet_quant", "AD": "ad01_int8",
        "streaming wake word": "str_ww_ref_model"}
COLUMNS = ("ref_instr", "cmsis_instr", "instr_per_mac", "arena_used", "flash_cmsis")


def _number(text: str) -> float:
    return float(text.replace(",", "").strip())


def tflm_cortex_m4(readme: Path = README) -> dict[str, dict[str, float]]:
    """stem -> reference-kernel and CMSIS-NN instructions, arena_used_bytes, firmware flash."""
    if not readme.is_file():
        return {}
    figures = {}
    for line in readme.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0] in ROWS and re.fullmatch(r"[\d,.]+", cells[1]):
            figures[ROWS[cells[0]]] = dict(zip(COLUMNS, (_number(c) for c in cells[1:])))
    return figures


def source_note() -> str:
    return (f"../shared/models/README.md: TFLite Micro built from source (arm-none-eabi-gcc 12.2, -O2, "
            f"TF_LITE_STATIC_MEMORY), run in QEMU mps2-an386 (Cortex-M4F) with an instruction-counting "
            f"plugin, one Invoke() on a fixed int8 input")
