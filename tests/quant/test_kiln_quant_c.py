"""runtime_c/kiln_quant.h against the numpy emulation, bit for bit.

tests/quant/c/test_kiln_quant.c is built with the strict flags of generated code plus
AddressSanitizer/UBSan (any undefined behaviour aborts), fed a few thousand random vectors
drawn with a fixed seed, and every result line is compared with codegen.quant.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from codegen import quant as q
from codegen.errors import KilnError
from codegen.quant.elementwise import div_int8, squared_difference_int8
from codegen.quant.gemmlowp_math import inv_sqrt_quantized_multiplier_exp
from codegen.quant.l2_normalization import l2_normalization_int8
from codegen.quant.log_softmax import log_softmax_int8, log_softmax_params, log_x_ge_1
from codegen.quant.params import div_params, squared_difference_params
from codegen.quant import fixedpoint as fp
from codegen.quant import gemmlowp_math as gm
from codegen.resources import RUNTIME_C

STRICT = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-Wconversion",
          "-Wdouble-promotion", "-Wshadow"]
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-g", "-O1"]
DRIVER = Path(__file__).parent / "c" / "test_kiln_quant.c"
I32 = np.iinfo(np.int32)


@pytest.fixture(scope="module")
def driver(tmp_path_factory) -> Path:
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed")
    exe = tmp_path_factory.mktemp("kiln_quant") / "test_kiln_quant"
    subprocess.run(["gcc", *STRICT, *SANITIZE, f"-I{RUNTIME_C}", str(DRIVER), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    return exe


def run_driver(exe: Path, lines: list[str]) -> list[str]:
    proc = subprocess.run([str(exe)], input="\n".join(lines) + "\n", capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def check(exe: Path, cases: list[tuple[str, str]]) -> None:
    """Run every (input line, expected output line) pair and report the first mismatches."""
    got = run_driver(exe, [c for c, _ in cases])
    assert len(got) == len(cases)
    bad = [(c, e, g) for (c, e), g in zip(cases, got) if e != g]
    assert not bad, f"{len(bad)} mismatches, first: {bad[:5]}"


def rand_i32(rng, n: int) -> np.ndarray:
    """Random int32 values with the edges (0, ±1, INT32_MIN/MAX) always included."""
    edges = np.array([0, 1, -1, I32.min, I32.max, I32.min + 1, 1 << 30, -(1 << 30)])
    return np.concatenate([edges, rng.integers(I32.min, I32.max, n, endpoint=True)])


def test_primitives(driver):
    rng = np.random.default_rng(1234)
    a, b = rand_i32(rng, 3000), rand_i32(rng, 3000)
    cases = []
    for x, y in zip(a, b):
        cases.append((f"srdhm {x} {y}", str(fp.saturating_rounding_doubling_high_mul(x, y))))
        cases.append((f"halfsum {x} {y}", str(fp.rounding_half_sum(x, y))))
        e = int(rng.integers(0, 32))
        cases.append((f"rdbpot {x} {e}", str(fp.rounding_divide_by_pot(x, e))))
        e = int(rng.integers(0, 31))
        cases.append((f"satshl {x} {e}", str(fp.saturating_left_shift(x, e))))
        s = int(rng.integers(-31, 31))
        cases.append((f"mbqm {x} {y} {s}", str(fp.multiply_by_quantized_multiplier(x, y, s))))
        u = int(x) & 0xFFFFFFFF >> int(rng.integers(0, 32))
        cases.append((f"clz {u}", str(fp.count_leading_zeros_u32(u))))
    cases.append(("srdhm -2147483648 -2147483648", "2147483647"))
    for k in range(-300, 300):  # products that are exact ties: odd multiples of 2**30
        x, y = (2 * k + 1) << 15, 1 << 15
        cases.append((f"srdhm {x} {y}", str(fp.saturating_rounding_doubling_high_mul(x, y))))
        cases.append((f"rdbpot {2 * k + 1} 1", str(fp.rounding_divide_by_pot(2 * k + 1, 1))))
    for _ in range(3000):  # the int16 (16x8) output stage: |x| < 2**47, multiplier >= 0, shift in [-31, 7]
        x, m, s = int(rng.integers(-(1 << 47), 1 << 47)), int(rng.integers(0, I32.max, endpoint=True)), int(rng.integers(-31, 8))
        cases.append((f"mbqm64 {x} {m} {s}", str(fp.multiply_by_quantized_multiplier_s64(x, m, s))))
    for m in (0x7FFF0000 - 1, 0x7FFF0000, I32.max):  # the reduced multiplier's saturation at 0x7FFF
        cases.append((f"mbqm64 123456789 {m} -3", str(fp.multiply_by_quantized_multiplier_s64(123456789, m, -3))))
    for _ in range(500):
        count = int(rng.integers(1, 65))
        acc = int(rng.integers(-128 * count, 127 * count, endpoint=True))
        cases.append((f"avg {acc} {count}", str(fp.rounding_average(acc, count))))
    check(driver, cases)


def test_gemmlowp_functions(driver):
    rng = np.random.default_rng(99)
    xs = rand_i32(rng, 2000)
    cases = []
    for x in xs:
        neg = -abs(int(x)) if x != I32.min else int(x)
        ib = int(rng.integers(0, 13))
        cases.append((f"exp {neg} {ib}", str(gm.exp_on_negative_values(neg, ib))))
        cases.append((f"oneover {x}", str(gm.one_over_one_plus_x_for_x_in_0_1(x))))
        digits = int(rng.integers(0, 32))
        r, n = gm.get_reciprocal(x, digits)
        cases.append((f"recip {x} {digits}", f"{r} {n}"))
    check(driver, cases)


def softmax_case(rng):
    scale = float(np.float32(10 ** rng.uniform(-3, 0.5)))
    beta = float(rng.choice([1.0, float(rng.uniform(0.05, 4.0))]))
    p = q.softmax_params(beta, scale)
    depth = int(rng.choice([1, 2, 3, 10, int(rng.integers(1, 400))]))
    lo = int(rng.integers(-128, 128))
    x = rng.integers(lo, 128, depth).astype(np.int8)
    return p, x


def test_softmax_rows(driver):
    rng = np.random.default_rng(7)
    cases = []
    for _ in range(300):
        p, x = softmax_case(rng)
        args = f"{p.input_multiplier} {p.input_left_shift} {p.diff_min} {x.size} " + " ".join(map(str, x))
        for bits, dtype in ((8, "int8"), (16, "int16")):
            want = " ".join(map(str, q.softmax_int8(x, p, dtype)))
            cases.append((f"softmax{bits} {args}", want))
    check(driver, cases)


def test_log_softmax_rows(driver):
    """kiln_log_softmax.h against codegen.quant.log_softmax: rows of every length up to 4096
    (the sum's headroom), ties at the maximum, and the log alone over its whole input range."""
    rng = np.random.default_rng(8)
    cases = []
    for _ in range(300):
        scale = float(np.float32(10 ** rng.uniform(-3, 0.5)))
        p = log_softmax_params(scale)
        depth = int(rng.choice([1, 2, 3, 10, int(rng.integers(1, 400)), 4096]))
        x = rng.integers(int(rng.integers(-128, 128)), 128, depth).astype(np.int8)
        args = (f"{p.input_multiplier} {p.input_left_shift} {p.reverse_scaling_divisor} "
                f"{p.reverse_scaling_right_shift} {p.diff_min} {x.size} " + " ".join(map(str, x)))
        cases.append((f"logsoftmax {args}", " ".join(map(str, log_softmax_int8(x, p)))))
    for z in np.concatenate([[1 << 19, (1 << 19) + 1, I32.max], rng.integers(1 << 19, I32.max, 3000)]):
        cases.append((f"log {z}", str(log_x_ge_1(z))))
    check(driver, cases)


def test_l2_normalization_rows(driver):
    """kiln_l2norm.h against codegen.quant.l2_normalization: rows of every length up to 4096,
    all at the zero point (a zero sum), and the inverse square root over the int32 range."""
    rng = np.random.default_rng(9)
    cases = []
    for _ in range(300):
        zp = int(rng.integers(-128, 128))
        depth = int(rng.choice([1, 2, 3, 10, int(rng.integers(1, 400)), 4096]))
        x = rng.integers(int(rng.integers(-128, 128)), 128, depth).astype(np.int8)
        if rng.random() < 0.05:
            x[:] = zp
        args = f"{zp} {x.size} " + " ".join(map(str, x))
        cases.append((f"l2norm {args}", " ".join(map(str, l2_normalization_int8(x, zp)))))
    for v in np.concatenate([[-5, 0, 1, 2, 3, 4, (1 << 29) - 1, 1 << 29, I32.max], rng.integers(2, I32.max, 2000)]):
        m, sh = inv_sqrt_quantized_multiplier_exp(v)
        cases.append((f"invsqrt {v}", f"{m} {sh}"))
    check(driver, cases)


def test_elementwise(driver):
    rng = np.random.default_rng(11)
    acts = ["none", "relu", "relu6", "relu_n1_to_1"]
    cases = []
    for i in range(150):
        s1, s2, so = (float(np.float32(10 ** rng.uniform(-3, 0.5))) for _ in range(3))
        z1, z2, zo = (int(v) for v in rng.integers(-128, 128, 3))
        act = acts[i % 4]
        x1 = rng.integers(-128, 128, 20)
        x2 = rng.integers(-128, 128, 20)
        for op, fn in (("add", q.add_int8), ("sub", q.sub_int8)):
            p = q.add_sub_params(op, s1, z1, s2, z2, so, zo, act)
            head = " ".join(str(v) for v in (
                p.left_shift, p.input1_offset, p.input1_multiplier, p.input1_shift,
                p.input2_offset, p.input2_multiplier, p.input2_shift, p.output_offset,
                p.output_multiplier, p.output_shift, p.activation_min, p.activation_max))
            for a, b in zip(x1, x2):
                cases.append((f"{op} {head} {a} {b}", str(fn(a, b, p))))
        m = q.mul_params(s1, z1, s2, z2, so, zo, act)
        head = " ".join(str(v) for v in (
            m.input1_offset, m.input2_offset, m.output_offset, m.output_multiplier,
            m.output_shift, m.activation_min, m.activation_max))
        for a, b in zip(x1, x2):
            cases.append((f"mul {head} {a} {b}", str(q.mul_int8(a, b, m))))
        mult, shift = q.requantize_params(s1, so)
        for a in x1:
            cases.append((f"requant {a} {mult} {shift} {z1} {zo}",
                          str(q.requantize_int8(a, mult, shift, z1, zo))))
    check(driver, cases)


def _fields(p) -> str:
    return " ".join(str(getattr(p, f.name)) for f in dataclasses.fields(p))


def test_div_and_squared_difference(driver):
    """int8 Div on random scales (fused clamps, zero divisors, the quotients whose final shift
    passes 31 bits) and int8 / int16 SquaredDifference, including both int16 extremes."""
    rng = np.random.default_rng(17)
    acts = ["none", "relu", "relu6", "relu_n1_to_1"]
    cases = []
    for i in range(120):
        s1, s2, so = (float(np.float32(10 ** rng.uniform(-3, 0.5))) for _ in range(3))
        z1, z2, zo = (int(v) for v in rng.integers(-128, 128, 3))
        x1, x2 = rng.integers(-128, 128, 40), rng.integers(-128, 128, 40)
        x2[:4] = z2  # zero divisors
        try:
            d = div_params(s1, z1, s2, z2, so, zo, acts[i % 4])
        except KilnError:
            d = None
        for a, b in zip(x1, x2):
            if d is not None:
                cases.append((f"div {_fields(d)} {a} {b}", str(div_int8(a, b, d))))
        p8 = squared_difference_params(s1, z1, s2, z2, so, zo)
        for a, b in zip(x1, x2):
            cases.append((f"sqdiff8 {_fields(p8)} {a} {b}", str(squared_difference_int8(np.int8(a), np.int8(b), p8))))
        p16 = squared_difference_params(s1 / 64, 0, s2 / 64, 0, so / 64, 0, "int16")
        y1, y2 = rng.integers(-32768, 32768, 40), rng.integers(-32768, 32768, 40)
        y1[:2], y2[:2] = (-32768, 32767), (32767, -32768)
        for a, b in zip(y1, y2):
            want = squared_difference_int8(np.int16(a), np.int16(b), p16)
            cases.append((f"sqdiff16 {_fields(p16)} {a} {b}", str(want)))
    check(driver, cases)


def f32_bits(x) -> int:
    return int(np.asarray(x, dtype=np.float32).view(np.uint32))


def test_quantize_dequantize(driver):
    rng = np.random.default_rng(5)
    cases = []
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1e30], dtype=np.float32)
    for _ in range(100):
        scale = np.float32(10 ** rng.uniform(-4, 1))
        zp = int(rng.integers(-128, 128))
        halves = (np.arange(-20, 20) + 0.5).astype(np.float32) * scale
        xs = np.concatenate([specials, halves, (rng.standard_normal(30) * 100 * scale)
                             .astype(np.float32)])
        for x in xs:
            want = q.quantize_float_to_int8(x, scale, zp)
            cases.append((f"quant {f32_bits(x)} {f32_bits(scale)} {zp}", str(want)))
        for v in rng.integers(-128, 128, 20):
            want = f32_bits(q.dequantize_int8(v, scale, zp))
            cases.append((f"deq {v} {f32_bits(scale)} {zp}", str(want)))
    check(driver, cases)


@pytest.mark.parametrize("cpu", ["cortex-m0plus", "cortex-m4", "cortex-m55"])
def test_headers_compile_for_cortex_m(tmp_path, cpu):
    """Where int32_t is `long` and 64-bit arithmetic is multi-word, the headers still compile
    warning-free under the strict flags."""
    if shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("arm-none-eabi-gcc not installed")
    src = tmp_path / "use.c"
    src.write_text('#include "kiln_quant.h"\n#include "kiln_log_softmax.h"\n#include "kiln_l2norm.h"\nint8_t f(int8_t x);\n'
                   "int8_t f(int8_t x) { return kiln_requantize_s8(x, 1 << 30, 1, 0, 0); }\n")
    subprocess.run(["arm-none-eabi-gcc", f"-mcpu={cpu}", "-mthumb", "-O2", *STRICT,
                    f"-I{RUNTIME_C}", "-c", str(src), "-o", str(tmp_path / "use.o")],
                   check=True, capture_output=True, text=True)
