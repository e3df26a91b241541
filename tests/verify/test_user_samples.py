"""`kiln verify --inputs DIR_OR_NPZ`: the user's samples (a folder of .npy files or an .npz, by
input name, one sample or N stacked), float data quantized for a quantized input, the metrics
per output (max abs error, l2 relative error, cosine, top-1) and one clear line for bad data."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from codegen.cli import main as kiln
from codegen.errors import KilnError
from codegen.verify.compare import compare_output
from codegen.verify.metrics import format_metrics_table, is_classifier, output_metrics
from codegen.verify.user_samples import load_user_samples

TINY = Path(__file__).resolve().parent.parent / "golden" / "models" / "tiny_int8.tflite"
IMAGE = {"name": "image", "dtype": "int8", "shape": [1, 6, 6, 2], "scale": 0.05, "zero_point": -10}
PROBS = {"name": "probs", "dtype": "int8", "shape": [1, 3], "scale": 1 / 256, "zero_point": -128}


def _stack(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(-128, 128, (n, 6, 6, 2), dtype=np.int8)


def test_npz_folder_and_single_files_give_the_same_samples(tmp_path):
    x = _stack(3)
    np.savez(tmp_path / "s.npz", image=x)
    (tmp_path / "named").mkdir()
    np.save(tmp_path / "named" / "image.npy", x.reshape(3, 1, 6, 6, 2))  # [N, *shape]
    (tmp_path / "each").mkdir()
    for k in range(3):
        np.save(tmp_path / "each" / f"sample_{k}.npy", x[k].reshape(1, 6, 6, 2))
    for source in (tmp_path / "s.npz", tmp_path / "named", tmp_path / "each"):
        samples = load_user_samples(source, [IMAGE])
        assert len(samples) == 3
        assert all(np.array_equal(s["image"], x[k].reshape(1, 6, 6, 2)) for k, s in enumerate(samples))
        assert all(s["image"].dtype == np.int8 for s in samples)


def test_float_data_for_a_quantized_input_is_quantized_with_its_scale(tmp_path):
    real = np.array([0.0, 0.05, -0.5, 100.0, -100.0, 0.074], np.float32)
    np.savez(tmp_path / "f.npz", image=np.resize(real, (1, 6, 6, 2)))
    (sample,) = load_user_samples(tmp_path / "f.npz", [IMAGE])
    assert sample["image"].reshape(-1)[:6].tolist() == [-10, -9, -20, 127, -128, -9]


@pytest.mark.parametrize("arrays,message", [
    ({"other": _stack(1)}, "no data for input 'image'"),
    ({"image": np.zeros((2, 5, 5), np.int8)}, "input 'image' takes shape [1, 6, 6, 2]"),
    ({"image": np.full((1, 6, 6, 2), 300, np.int16)}, "values outside -128..127"),
    ({"image": np.zeros((0, 6, 6, 2), np.int8)}, "no samples in the data"),
])
def test_bad_data_is_one_clear_error(tmp_path, arrays, message):
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(KilnError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_user_samples(tmp_path / "bad.npz", [IMAGE])


def test_inputs_with_different_sample_counts_are_refused(tmp_path):
    other = {**IMAGE, "name": "mask"}
    np.savez(tmp_path / "two.npz", image=_stack(2), mask=_stack(3))
    with pytest.raises(KilnError, match="different numbers of samples: image 2, mask 3"):
        load_user_samples(tmp_path / "two.npz", [IMAGE, other])
    (tmp_path / "pickled.npz").write_bytes(b"not a zip at all")
    with pytest.raises(KilnError, match="not a readable .npz"):
        load_user_samples(tmp_path / "pickled.npz", [IMAGE])


def test_metrics_by_hand():
    got = [np.array([[-128, 127, -128]], np.int8), np.array([[127, -128, -128]], np.int8)]
    ref = [np.array([[-128, 127, -128]], np.int8), np.array([[-128, 127, -128]], np.int8)]
    report = compare_output("probs", np.concatenate(got), np.concatenate(ref), lsb=1.0)
    m = output_metrics(PROBS, got, ref, report)
    assert m.top1_agree == 1 and m.samples == 2
    step = 255 / 256  # one full-scale swing, dequantized
    assert m.max_abs_error == pytest.approx(step)
    assert m.l2_relative_error == pytest.approx(math.sqrt(2 * step ** 2) / math.sqrt(2 * step ** 2))
    assert m.cosine == pytest.approx(0.5)  # one of two equal-norm vectors agrees, the other is orthogonal
    table = format_metrics_table([m])
    assert "1/2" in table and "MISMATCH" in table and "255 max, 2 off (tol 0)" in table
    assert is_classifier((1, 12)) and not is_classifier((1, 49, 10, 1)) and not is_classifier((1, 1))


def test_cli_verifies_on_saved_samples_and_prints_the_metrics_table(tmp_path, capsys):
    np.savez(tmp_path / "samples.npz", image=_stack(4, seed=9))
    assert kiln(["verify", str(TINY), "--target", "host", "--inputs", str(tmp_path / "samples.npz")]) == 0
    out = capsys.readouterr().out
    assert f"samples from {tmp_path / 'samples.npz'}" in out and "kiln verify: 4 samples" in out
    row = next(line for line in out.splitlines() if line.strip().startswith("probs") and "1x3" in line)
    assert "1.000000" in row and "4/4" in row and "0 max, 0 off (tol 0)" in row and row.endswith("ok")
    assert kiln(["verify", str(TINY), "--target", "host", "--inputs", str(tmp_path / "missing")]) == 2
    assert "no such folder or .npz file" in capsys.readouterr().err
