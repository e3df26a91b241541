"""Every (builtin, type) pair TFLite Micro supports, through Kiln: build, compile, run, compare.

Run from the repository root:  python -m bench.tflite_conformance  [--jobs 2] [--only REGEX]
                                                                   [--out bench/TFLITE_CONFORMANCE.md]

The pairs come from bench/tflite_builtins.py (TFLite Micro's op resolver and the types its
kernels accept). For each pair, tests/tflite_case_table.py writes one or more single-operator
models with tests/tflite_models.py (no TensorFlow needed) covering the attributes' edge cases;
tests/tflite_cases.py imports each with Kiln, compiles it for the host, builds the C with gcc
and the strict flags, runs it on three random inputs and compares with TFLite Micro's Python
interpreter (quantized, integer and bool types: bit-exact) or LiteRT's builtin kernels
(float32: within 1e-5 of the largest |expected|).

A pair passes when all its cases pass; it is `refused` when Kiln declines a case with a clean
one-line error (the reason is listed), `fail` when a case gives other numbers or crashes,
`unverified` when the reference interpreter cannot run the case. Builtins listed in
NEEDS_KERNEL have no converter yet: their pairs are refused with what is missing.
"""

from __future__ import annotations

import argparse
import multiprocessing
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests")]
DEFAULT_OUT = ROOT / "bench" / "TFLITE_CONFORMANCE.md"

from bench.tflite_builtins import BUILTINS, NEEDS_KERNEL, TFLM_COMMIT, pairs  # noqa: E402
from tflite_case_table import cases_for  # noqa: E402
from tflite_cases import run_case  # noqa: E402

STATUSES = ("pass", "fail", "refused", "unverified")
# Measured with this driver on the frontend before issue 16's converters (commit be13713).
BEFORE = ("Before the converters of issue 16 (commit be13713, about 30 builtins): 62 pairs passed, 3 failed "
          "(int16 ADD, SUB and MUL compiled but gave other numbers; now refused) and 214 were refused.")
STATEFUL_NOTE = ("Builtins that keep state or hold subgraphs (resource variables, UNIDIRECTIONAL_SEQUENCE_LSTM, "
                 "SVDF, IF, WHILE) are small models with their own runner (`tests/tflite_streaming.py`): eight "
                 "consecutive calls in one interpreter against one run of the generated code, the state carried "
                 "between calls; int8 LSTM and SVDF bit-exact with TFLite Micro, float32 LSTM against LiteRT.")
# The second round of issue 16 (resource variables, LSTM, SVDF, DYNAMIC_UPDATE_SLICE, IF, WHILE).
BEFORE_STATE = ("Before the stateful, recurrent and control-flow builtins (commit 29908c8): 226 pairs passed, "
                "0 failed and 53 were refused (15 of them for want of a Kiln operator: resource variables, "
                "LSTM, SVDF, DYNAMIC_UPDATE_SLICE, IF, WHILE).")
# The third round: int16 (16x8) kernels.
BEFORE_INT16 = ("Before the int16 kernels (commit 3ca1bed): 240 pairs passed, 0 failed and 39 were refused "
                "(22 of them int16 pairs, 2 more the QUANTIZE of int8 and uint8 to other integer types).")
# The fourth round: quantized PRELU and ADD_N.
BEFORE_PRELU = ("Before the int8 / int16 PRELU and int8 ADD_N kernels (commit f598672): 265 pairs passed, "
                "0 failed and 14 were refused.")


@dataclass
class PairResult:
    builtin: str
    dtype: str
    status: str
    cases: int
    reason: str = ""


def run_pair(pair: tuple[str, str]) -> PairResult:
    builtin, dtype = pair
    if builtin in NEEDS_KERNEL:
        return PairResult(builtin, dtype, "refused", 0, f"needs a kernel: {NEEDS_KERNEL[builtin]}")
    cases = cases_for(builtin, dtype)
    if not cases:
        return PairResult(builtin, dtype, "refused", 0, "no conformance case written for this pair")
    outcomes = [(c, run_case(c)) for c in cases]
    for status in ("fail", "unverified", "refused"):
        bad = [(c, o) for c, o in outcomes if o.status == status]
        if bad:
            c, o = bad[0]
            return PairResult(builtin, dtype, status, len(cases), f"{c.label}: {_clean(o.reason)}")
    return PairResult(builtin, dtype, "pass", len(cases))


def _clean(reason: str) -> str:
    """The reason without the node prefix, on one line."""
    return re.sub(r"^node '[^']*': ", "", reason.replace("\n", " ")).replace("|", "\\|")


def reason_class(r: PairResult) -> str:
    """What would make the pair pass."""
    if r.status != "refused":
        return r.status
    if r.builtin in NEEDS_KERNEL:
        return "needs a kernel: a new Kiln operator (state, recurrence, control flow, run-time positions)"
    if "computed at run time" in r.reason:
        return "needs a kernel: values Kiln folds only when known at compile time"
    if "kernel" in r.reason or "is not supported (supported:" in r.reason or "only)" in r.reason:
        return "needs a kernel: TFLite Micro's quantized (int8 / int16) arithmetic for this op"
    return "refused: semantics Kiln does not reproduce"


def write_report(results: list[PairResult], out: Path) -> None:
    counts = Counter(r.status for r in results)
    total = len(results)
    by_builtin: dict[str, list[PairResult]] = defaultdict(list)
    for r in results:
        by_builtin[r.builtin].append(r)
    versions = {p: _version(p) for p in ("tflite-micro", "ai-edge-litert")}
    lines = [
        "# TFLite builtins as TFLite Micro runs them",
        "",
        f"Every (builtin, type) pair TFLite Micro registers (tensorflow/tflite-micro {TFLM_COMMIT[:12]}: "
        "`micro_mutable_op_resolver.h` and the type switches of its kernels, `bench/tflite_builtins.py`), "
        "as single-operator models written by `tests/tflite_models.py` (`tests/tflite_case_table.py`: "
        "edge-case attributes), imported by Kiln, compiled for the host, built with gcc and the strict flags, "
        "run on three random inputs and compared: quantized, integer and bool types bit-exact with the "
        f"TFLite Micro interpreter (tflite-micro {versions['tflite-micro']}), float32 within 1e-5 of the "
        f"largest |expected| of LiteRT's builtin kernels (ai-edge-litert {versions['ai-edge-litert']}).",
        "",
        STATEFUL_NOTE,
        "",
        "Command: `python -m bench.tflite_conformance`",
        "",
        "## Totals",
        "",
        "| pairs | pass | fail | refused | unverified | pass rate |",
        "|---:|---:|---:|---:|---:|---:|",
        f"| {total} | {counts['pass']} | {counts['fail']} | {counts['refused']} | {counts['unverified']} | "
        f"{100 * counts['pass'] / max(total, 1):.1f} % |",
        "",
        f"**{counts['pass']} of the {total} (builtin, type) pairs TFLite Micro supports pass.** "
        f"{sum(r.cases for r in results)} single-operator cases in all.",
        "",
        BEFORE,
        "",
        BEFORE_STATE,
        "",
        BEFORE_INT16,
        "",
        BEFORE_PRELU,
        "",
        "## Not passing, by reason",
        "",
        "| pairs | class | pairs (builtin type) |",
        "|---:|---|---|",
    ]
    classes: dict[str, list[PairResult]] = defaultdict(list)
    for r in results:
        if r.status != "pass":
            classes[reason_class(r)].append(r)
    for cls, rs in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"| {len(rs)} | {cls} | {', '.join(f'{r.builtin} {r.dtype}' for r in rs)} |")
    lines += ["", "## Every pair", "", "| builtin | type | status | cases | reason |", "|---|---|---|---:|---|"]
    for builtin in BUILTINS:
        for r in by_builtin.get(builtin, []):
            lines.append(f"| {r.builtin} | {r.dtype} | {r.status} | {r.cases} | {r.reason} |")
    out.write_text("\n".join(lines) + "\n" + _kept_sections(out))


# Sections of the report written by other measurements (tests/tflite_converted), kept as they are.
KEPT_SECTIONS = ("## Converter-built models",)


def _kept_sections(out: Path) -> str:
    """The report's hand-kept tail, from the first KEPT_SECTIONS heading on ('' if none)."""
    text = out.read_text() if out.is_file() else ""
    starts = [text.index(h) for h in KEPT_SECTIONS if h in text]
    return "\n" + text[min(starts):] if starts else ""


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="", help="regular expression on 'BUILTIN type'")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    todo = [p for p in pairs() if re.search(args.only, f"{p[0]} {p[1]}")]
    with multiprocessing.Pool(args.jobs) as pool:
        results = pool.map(run_pair, todo, chunksize=1)
    for r in results:
        if r.status != "pass":
            print(f"{r.builtin} {r.dtype}: {r.status}: {r.reason}")
    counts = Counter(r.status for r in results)
    print(f"{counts['pass']} of {len(results)} pairs pass ({', '.join(f'{counts[s]} {s}' for s in STATUSES[1:])})")
    if not args.only:
        write_report(results, args.out)
        print(f"wrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
