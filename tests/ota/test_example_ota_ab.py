"""examples/ota_ab end to end: `make run` builds the models, the code image and the blobs, and
the A/B program refuses the damaged, cut and foreign updates, takes the good one and rolls back."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ota_ab"


@pytest.mark.slow  # three `kiln build` processes: about 10 s
@pytest.mark.skipif(shutil.which("make") is None, reason="make not installed")
def test_make_run_goes_through_every_step(tmp_path):
    bin_dir = Path(sys.executable).parent
    proc = subprocess.run(["make", "-s", "run", f"KILN={bin_dir / 'kiln'}", f"PYTHON={sys.executable}",
                           f"B={tmp_path}"], cwd=EXAMPLE, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    for line in ("ota_model_run -> ERR_NO_WEIGHTS", "refused: ERR_BLOB_CRC; slot A stays in use",
                 "refused: ERR_BLOB_TRUNCATED; slot A stays in use", "refused: ERR_BLOB_MODEL; slot A stays in use",
                 "update into slot B accepted", "boot: slot B -> ERR_BLOB_CRC", "all steps as expected"):
        assert line in out, out
