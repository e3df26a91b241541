"""`python bench/fuzz_campaign.py --minutes 15`: a long fuzz campaign against Kiln's frontends,
compiler and CLI, the unbounded sibling of tests/robustness/test_fuzz.py (same mutation classes,
tests/robustness/mutations.py; seeds: every ONNX test model, the golden models and all nine
MLPerf Tiny models), plus the classes around a build of bench/fuzz_scenarios.py.

Every case runs in its own child of a fork server (bench/fuzz_forkserver.py): the parent imports
Kiln once, so a case costs a fork, not an interpreter start. A mutant goes through the real CLI
entry, `kiln build MUTANT --target host -o DIR` (after `kiln inspect MUTANT` on every fourth
case), in the child, under an address-space limit (an unbounded allocation is a finding, not an
OOM kill) and a wall-clock bound after which the parent kills the child's process group. A case
is clean when the build succeeds with an output folder that holds exactly what its manifest
records, or exits 2 with one stderr line naming the file (its message had one line before the
CLI escaped anything), no output folder and nothing left beside it; without a traceback, within
the bound, with a peak RSS below a limit and no MemoryError. Some mutants that compile ("weird
but valid" models) are also built with -fsanitize=address,undefined and run on random inputs:
generated code must stay in bounds even for models nobody would write. A sample of the cases is
run again through a real `kiln` process (`python -m codegen`, a fresh interpreter), which must
answer the same exit status and stderr line. Findings are written as files for reproduction;
the figures go to stdout as Markdown (recorded in bench/FUZZ.md).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "robustness")]

import mutations as mut  # noqa: E402

from bench import fuzz_scenarios as scen  # noqa: E402
from bench.fuzz_forkserver import Finished, ForkServer  # noqa: E402

TIME_BOUND_S = 60.0            # a case; the parent kills the child's group after it
EXTRA_BOUND_S = 300.0          # a sanitized build and run, or a cross-check through a real `kiln`
MEMORY_LIMIT = 6 * 2 ** 30     # address space of a case's process
RSS_FINDING = 3 * 2 ** 30      # peak RSS above this marks the case that reached it
KINDS = ["ok", "kiln_error", "crash", "bad_message", "timeout", "memory", "worker_died", "lost_file",
         "partial_output", "wrong_refusal"]


def _sanitized_run(path: Path, input_shapes: dict, work: Path) -> tuple[str, str]:
    """Build a compiled mutant with ASan/UBSan and run it on two random samples."""
    import numpy as np

    from codegen.compiler import compile_model
    from codegen.options import CompileOptions
    from codegen.targets import load_target
    from codegen.verify import host
    from codegen.verify.samples import random_samples

    build = compile_model(path, CompileOptions(target=load_target("host"), input_shapes=input_shapes,
                                               planner="greedy"))
    if build.manifest["arena_bytes"] > 64 * 2 ** 20:
        return "skipped", "arena over 64 MiB"
    try:
        exe = host.build_host(build.files, build.name, work, sanitize=True, cflags=("-O1",))
    except Exception as err:  # generated C that does not compile is a finding too
        return "compile_failed", str(err)[-2000:]
    inputs = build.manifest["inputs"]
    samples = random_samples(inputs, 2, seed=0)
    with open(work / "inputs.bin", "wb") as f:
        for s in samples:
            for io in inputs:
                f.write(np.ascontiguousarray(s[io["name"]]).tobytes())
    try:
        proc = subprocess.run([str(exe), "inputs.bin", "outputs.bin", "2"], cwd=work, capture_output=True,
                              text=True, timeout=60, preexec_fn=_unlimited)
    except subprocess.TimeoutExpired:
        return "skipped", "run longer than 60 s"
    if proc.returncode != 0:
        return "sanitizer", proc.stderr[-3000:]
    return "clean", ""


def _unlimited() -> None:
    """ASan reserves terabytes of shadow address space: lift the worker's soft limit for it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))


# Classes around a build (bench/fuzz_scenarios.py) beside the model mutations; concurrent builds
# start processes, so they are drawn less often.
SCENARIO_WEIGHTS = {"out_folder": 0.5, "os_fault": 0.5, "onnx_external": 1.0, "concurrent": 0.04}


def pick_class(rng: random.Random, fmt: str) -> str:
    extra = {c: w for c, w in SCENARIO_WEIGHTS.items() if c != "onnx_external" or fmt == "onnx"}
    names = mut.classes_for(fmt) + list(extra)
    return rng.choices(names, weights=[1.0] * len(mut.classes_for(fmt)) + list(extra.values()))[0]


def _shape_args(input_shapes: dict) -> list[str]:
    return [a for name, dims in input_shapes.items() for a in ("--input-shape", f"{name}={','.join(map(str, dims))}")]


def _judge_run(run: scen.CliRun, path: Path) -> tuple[str, str]:
    """A `kiln` run on a mutant: ok, or one clean line naming the file; else what went wrong."""
    kind, message = scen._judge_cli(run.rc, run.stderr)
    if kind == "crash" and run.traceback:
        message = run.traceback
    if kind == "kiln_error" and (run.raw_multiline or not message.startswith(f"kiln: error: {path}")):
        kind, message = "bad_message", message + (" (several lines before escaping)" if run.raw_multiline else "")
    return kind, message


def mutant_case(k: int, path: Path, seed: mut.Seed, work: Path) -> tuple[str, str, list[str], tuple[int, str]]:
    """`kiln inspect` (every fourth case) and `kiln build` on the mutant at `path`, through the
    CLI entry; (kind, message: the stderr line of a clean error, the build's argv, its exit
    status and stderr)."""
    out = work / "gen"
    shapes = _shape_args(seed.input_shapes)
    build = ["build", str(path), "--target", "host", "-o", str(out), "--planner", "greedy", "--time-limit", "1",
             "--quiet", *shapes]
    kind, message, answer = "ok", "", (0, "")
    for argv in ([["inspect", str(path), *shapes]] if k % 4 == 0 else []) + [build]:
        run = scen.run_cli(argv)
        kind, message, answer = *_judge_run(run, path), (run.rc, run.stderr)
        if kind not in ("ok", "kiln_error"):
            return kind, message, build, answer
    if kind == "ok" and not scen._consistent(out):
        kind, message = "partial_output", f"exit 0 but {sorted(p.name for p in out.iterdir())[:20]}"
    elif kind == "kiln_error" and out.exists():
        kind, message = "partial_output", f"refused ({message}) but {out.name}/ exists"
    elif scen._leftovers(work):
        kind, message = "partial_output", f"left {scen._leftovers(work)}"
    return kind, message, build, answer


def cross_check(build: list[str], work: Path, expected: tuple[int, str]) -> tuple[str, str]:
    """The same build through a real `kiln` process: the same exit status and stderr."""
    out = work / "gen"
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "codegen", *build], cwd=work, capture_output=True, text=True,
                          timeout=EXTRA_BOUND_S - 10, env=env)
    if (proc.returncode, proc.stderr.strip()) == (expected[0], expected[1].strip()):
        return "same", ""
    return "differs", f"in-process {expected[0]} {expected[1].strip()[:300]!r}, kiln {proc.returncode} " \
                      f"{proc.stderr.strip()[-300:]!r}"


def case_runner(seeds: list[mut.Seed], tmpdir: Path, sanitize_every: int, cross_every: int):
    """The function a fork-server child runs for case `k` (see fuzz_forkserver)."""
    def run(k: int):
        import warnings

        warnings.simplefilter("ignore")  # numpy's RuntimeWarnings on NaN weights: the CLI hides them too
        rng = random.Random(k)
        seed = rng.choice(seeds)
        cls = pick_class(rng, seed.fmt)
        work = tmpdir / f"case{k}"
        work.mkdir()
        start = time.perf_counter()
        if cls in scen.SCENARIOS:
            kind, _, message = scen.run_scenario(cls, rng, work)
            yield {"case": k, "seed": seed.name, "class": cls, "kind": kind, "message": message[-4000:],
                   "seconds": time.perf_counter() - start}
            return
        if cls == "onnx_external":
            _, _, path = scen.onnx_external(rng, work, seed.data)
        else:
            data = mut.mutate(seed, cls, rng, steps=rng.choice([1, 1, 2, 3, 5]))
            path = work / f"case{k}{seed.suffix}"
            path.write_bytes(data)
        (work / "mutant").write_text(str(path.relative_to(work)))  # for the findings, should the case be killed
        kind, message, build, answer = mutant_case(k, path, seed, work)
        yield {"case": k, "seed": seed.name, "class": cls, "kind": kind, "message": message[-4000:],
               "seconds": time.perf_counter() - start}
        if kind == "ok" and k % sanitize_every == 0:
            shutil.rmtree(work / "gen", ignore_errors=True)
            san = work / "san"
            san.mkdir()
            try:
                yield {"sanitizer": _sanitized_run(path, seed.input_shapes, san)}
            except Exception as err:  # noqa: BLE001 - reported as a finding
                yield {"sanitizer": ("error", f"{type(err).__name__}: {err}")}
        if kind in ("ok", "kiln_error") and k % cross_every == 1:
            yield {"cross_check": cross_check(build, work, answer)}
    return run


def _keep_finding(k: int, work: Path, findings: Path, tag: str) -> None:
    """Copy an unclean case's mutant (or its whole folder of external data) to `findings`."""
    pointer = work / "mutant"
    if not pointer.exists():
        return
    src = work / pointer.read_text()
    dst = findings / f"case{k}_{tag}{''.join(src.suffixes)}"
    if src.parent != work:  # onnx_external: the model and its data file
        shutil.copytree(src.parent, dst.with_suffix(""), dirs_exist_ok=True)
    elif src.exists():
        shutil.copyfile(src, dst)


def campaign(minutes: float, first: int, findings: Path, sanitize_every: int, workers: int = 1,
             cases: int | None = None, cross_every: int = 200, log: Path | None = None) -> dict:
    """Cases first, first+1, ... until `minutes` have passed (or `cases` were run)."""
    findings.mkdir(parents=True, exist_ok=True)
    stats: dict[str, Counter] = defaultdict(Counter)
    seconds: dict[str, list[float]] = defaultdict(list)
    sanitizer: Counter = Counter()
    cross: Counter = Counter()
    found: list[dict] = []
    slowest: dict = {"case": None, "seconds": 0.0, "class": None, "seed": None}
    peak = {"case": None, "bytes": 0}
    seeds = mut.onnx_seeds() + mut.tflite_seeds()
    _warm_up()
    started = time.monotonic()
    deadline = started + minutes * 60
    with tempfile.TemporaryDirectory(prefix="kiln-fuzz-") as tmp:
        tmpdir = Path(tmp)
        server = ForkServer(case_runner(seeds, tmpdir, sanitize_every, cross_every), workers,
                            (TIME_BOUND_S, EXTRA_BOUND_S), MEMORY_LIMIT)
        k, done, last_log = first, 0, 0.0
        while server.children or (time.monotonic() < deadline and (cases is None or k < first + cases)):
            while server.free and time.monotonic() < deadline and (cases is None or k < first + cases):
                server.start(k)
                k += 1
            for fin in server.wait(timeout=1.0):
                done += 1
                _record(fin, seeds, stats, seconds, sanitizer, cross, found, slowest, peak, tmpdir, findings)
            if log and time.monotonic() - last_log > 30:
                last_log = time.monotonic()
                with open(log, "a") as f:
                    f.write(f"{time.strftime('%H:%M:%S')} {done} cases, {len(found)} findings, "
                            f"{done / max(1e-9, last_log - started):.2f} cases/s, last case {k - 1}\n")
        server.stop()
    return {"cases": done, "first_case": first, "stats": {c: dict(v) for c, v in stats.items()},
            "max_seconds": {c: max(v) for c, v in seconds.items()},
            "mean_seconds": {c: sum(v) / len(v) for c, v in seconds.items()},
            "sanitizer": dict(sanitizer), "cross_check": dict(cross), "findings": found, "slowest": slowest,
            "peak_rss_bytes": peak["bytes"], "peak_rss_case": peak["case"], "workers": workers,
            "wall_minutes": (time.monotonic() - started) / 60}


def _record(fin: Finished, seeds, stats, seconds, sanitizer, cross, found, slowest, peak, tmpdir, findings) -> None:
    """Fold one finished child into the figures."""
    work = tmpdir / f"case{fin.case}"
    first = fin.messages[0] if fin.messages else {}
    if "harness_error" in first or not first:
        rng = random.Random(fin.case)  # what the child drew
        seed = rng.choice(seeds)
        cls = pick_class(rng, seed.fmt)
        if fin.killed_after == 0:
            kind, message = "timeout", f"killed after {TIME_BOUND_S:g} s"
        elif "harness_error" in first:
            kind, message = "crash", first["harness_error"]
        else:
            kind, message = "worker_died", f"wait status {fin.exit_status}"
        first = {"case": fin.case, "seed": seed.name, "class": cls, "kind": kind, "message": message,
                 "seconds": fin.seconds}
    kind = first["kind"]
    if kind in ("ok", "kiln_error") and fin.peak_rss > RSS_FINDING:
        kind, first["message"] = "memory", f"peak RSS {fin.peak_rss >> 20} MiB"
    cls = first["class"]
    stats[cls][kind] += 1
    seconds[cls].append(first["seconds"])
    if first["seconds"] > slowest["seconds"]:
        slowest.update(case=fin.case, seconds=first["seconds"], **{"class": cls}, seed=first["seed"])
    if fin.peak_rss > peak["bytes"]:
        peak.update(case=fin.case, bytes=fin.peak_rss)
    unclean = []
    if kind not in ("ok", "kiln_error"):
        unclean.append({"kind": kind, "message": first["message"]})
    for extra in fin.messages[1:]:
        if "sanitizer" in extra:
            sanitizer[extra["sanitizer"][0]] += 1
            if extra["sanitizer"][0] in ("sanitizer", "compile_failed", "error"):
                unclean.append({"kind": extra["sanitizer"][0], "message": extra["sanitizer"][1]})
        elif "cross_check" in extra:
            cross[extra["cross_check"][0]] += 1
            if extra["cross_check"][0] != "same":
                unclean.append({"kind": "cross_check", "message": extra["cross_check"][1]})
        elif "harness_error" in extra:
            unclean.append({"kind": "harness_error", "message": extra["harness_error"]})
    if fin.killed_after and fin.killed_after > 0:
        unclean.append({"kind": "extra_timeout", "message": f"sanitized build or cross-check past {EXTRA_BOUND_S:g} s"})
    for u in unclean:
        found.append({"case": fin.case, "class": cls, "seed": first["seed"], **u})
    if unclean:
        _keep_finding(fin.case, work, findings, f"{first['seed']}_{cls}")
    shutil.rmtree(work, ignore_errors=True)


def _warm_up() -> None:
    """Import and render everything a case needs once, in the parent, so that every child
    inherits it: the frontends, the planners (ortools), the Jinja templates. Then freeze the
    heap, so that a child's garbage collections do not copy the parent's pages."""
    import gc
    import warnings

    import codegen.memory.cpsat  # noqa: F401 - ortools, imported on demand by the planner

    with tempfile.TemporaryDirectory(prefix="kiln-fuzz-warm-") as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for model in scen.MODELS:
            scen.run_cli(["inspect", model])
            scen.run_cli(["build", model, "--target", "host", "-o", Path(tmp) / model.stem])
    gc.freeze()


def set_time_bound(seconds: float) -> None:
    global TIME_BOUND_S
    TIME_BOUND_S = seconds


def merge(results: list[dict]) -> dict:
    """One result from campaigns run side by side on disjoint case numbers."""
    stats: dict[str, Counter] = defaultdict(Counter)
    for r in results:
        for cls, c in r["stats"].items():
            stats[cls].update(c)
    slowest = max((r["slowest"] for r in results), key=lambda s: s["seconds"])
    set_time_bound(max(r.get("time_bound", TIME_BOUND_S) for r in results))
    top = max(results, key=lambda r: r["peak_rss_bytes"])
    return {"cases": sum(r["cases"] for r in results), "first_case": min(r["first_case"] for r in results),
            "stats": {c: dict(v) for c, v in stats.items()},
            "max_seconds": {c: max(r["max_seconds"].get(c, 0) for r in results) for c in stats},
            "sanitizer": dict(sum((Counter(r["sanitizer"]) for r in results), Counter())),
            "cross_check": dict(sum((Counter(r.get("cross_check", {})) for r in results), Counter())),
            "findings": [f for r in results for f in r["findings"]], "slowest": slowest,
            "peak_rss_bytes": top["peak_rss_bytes"], "peak_rss_case": top.get("peak_rss_case"),
            "minutes": max(r.get("minutes", 0) for r in results), "runs": len(results)}


def markdown(result: dict, minutes: float) -> str:
    runs = result.get("runs", 1)
    lines = [f"{result['cases']} cases in {minutes:g} min" + (f" ({runs} campaigns side by side)" if runs > 1 else
             f" (case numbers {result['first_case']}..{result['first_case'] + result['cases'] - 1}, "
             f"{result.get('workers', 1)} at a time)") + f", time bound {TIME_BOUND_S:g} s per case", "",
             "| class | tried | compiled | clean error | " + " | ".join(KINDS[2:]) + " | max s |",
             "|---|" + "---:|" * (len(KINDS) + 2)]
    total: Counter = Counter()
    for cls in sorted(result["stats"]):
        c = result["stats"][cls]
        total.update(c)
        lines.append(f"| {cls} | {sum(c.values())} | " + " | ".join(str(c.get(k, 0)) for k in KINDS)
                     + f" | {result['max_seconds'].get(cls, 0):.2f} |")
    lines.append(f"| **all** | {sum(total.values())} | " + " | ".join(str(total.get(k, 0)) for k in KINDS)
                 + f" | {max(result['max_seconds'].values(), default=0):.2f} |")
    slow = result["slowest"]
    lines += ["", f"Slowest case: {slow['case']} ({slow['class']} on {slow['seed']}), {slow['seconds']:.2f} s; "
              f"largest peak RSS of a case's process: {result['peak_rss_bytes'] / 2 ** 20:.0f} MiB "
              f"(case {result.get('peak_rss_case')})"]
    san, cross = result["sanitizer"], result.get("cross_check", {})
    lines += ["", f"Compiled mutants built with -fsanitize=address,undefined and run: "
              f"{sum(san.values())} ({', '.join(f'{k} {v}' for k, v in sorted(san.items())) or 'none'}); "
              f"cases run again through a real `kiln` process: {sum(cross.values())} "
              f"({', '.join(f'{k} {v}' for k, v in sorted(cross.items())) or 'none'})"]
    if result["findings"]:
        lines += ["", "Findings:"] + [f"- case {f['case']} ({f['seed']}, {f['class']}): {f['kind']}: "
                                      f"{((f.get('message') or '').strip().splitlines() or [''])[-1][:300]}"
                                      for f in result["findings"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=15.0, help="wall-clock length of the campaign")
    ap.add_argument("--first-case", type=int, default=1_000_000,
                    help="number of the first case; a case is reproducible from its number alone "
                         "(default 1000000, far from the suite's cases 0..1199)")
    ap.add_argument("--findings", type=Path, default=Path(tempfile.gettempdir()) / "kiln-fuzz-findings",
                    help="folder for the files of unclean cases")
    ap.add_argument("--sanitize-every", type=int, default=10,
                    help="build and run the compiled mutants of every N-th case with ASan/UBSan (default 10)")
    ap.add_argument("--workers", type=int, default=1, help="cases run at once (default 1)")
    ap.add_argument("--cases", type=int, help="stop after this many cases (default: when --minutes are over)")
    ap.add_argument("--cross-check-every", type=int, default=200, metavar="N",
                    help="run every N-th mutant again through a real `kiln` process (default 200)")
    ap.add_argument("--log", type=Path, help="append progress lines to this file every 30 s")
    ap.add_argument("--json", type=Path, help="also write the raw figures as JSON")
    ap.add_argument("--time-bound", type=float, default=TIME_BOUND_S,
                    help=f"seconds a case may take (default {TIME_BOUND_S:g}; raise it on a loaded machine)")
    ap.add_argument("--merge", type=Path, nargs="+", metavar="JSON",
                    help="print the figures of several runs (their --json files, e.g. of parallel campaigns "
                         "over disjoint case numbers) as one table instead of running")
    args = ap.parse_args(argv)
    if args.merge:
        result = merge([json.loads(p.read_text()) for p in args.merge])
        print(markdown(result, result["minutes"]), end="")
        return 1 if result["findings"] else 0
    set_time_bound(args.time_bound)
    result = campaign(args.minutes, args.first_case, args.findings, args.sanitize_every, args.workers,
                      args.cases, args.cross_check_every, args.log)
    result["minutes"], result["time_bound"] = args.minutes, args.time_bound
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, sort_keys=True))
    print(markdown(result, args.minutes), end="")
    return 1 if result["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())
