"""`python bench/fuzz_campaign.py --minutes 15`: a long fuzz campaign against Kiln's frontends
and compiler, the unbounded sibling of tests/robustness/test_fuzz.py (same mutation classes,
tests/robustness/mutations.py; seeds: every ONNX test model, the golden models and all nine
MLPerf Tiny models).

Cases run in a worker process under an address-space limit (so an unbounded allocation shows
as a finding instead of taking the machine down), each under a time bound; the parent
restarts the worker if it dies and records the case that killed it. A case is clean when it
compiles or ends in a one-line KilnError naming the file, within the time bound, without
the worker's peak memory growing past a limit and without a MemoryError hidden in a message.
Some of the mutants that compile ("weird but valid" models) are also built with
-fsanitize=address,undefined and run on random inputs: generated code must stay in bounds
even for models nobody would write. Findings are written as files for reproduction; the
figures go to stdout as Markdown (recorded in bench/FUZZ.md).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
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

TIME_BOUND_S = 10.0
MEMORY_LIMIT = 6 * 2 ** 30     # address space of the worker
RSS_FINDING = 3 * 2 ** 30      # peak RSS above this marks the case that reached it


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


def _worker(jobs: mp.Queue, results: mp.Queue, findings: Path, sanitize_every: int) -> None:
    import warnings

    warnings.simplefilter("ignore")  # numpy's RuntimeWarnings on NaN weights: the CLI hides them too
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, resource.getrlimit(resource.RLIMIT_AS)[1]))
    seeds = mut.onnx_seeds() + mut.tflite_seeds()
    ok_seen = 0
    with tempfile.TemporaryDirectory(prefix="kiln-fuzz-") as tmp:
        tmpdir = Path(tmp)
        while True:
            k = jobs.get()
            if k is None:
                return
            rng = random.Random(k)
            seed = rng.choice(seeds)
            cls = pick_class(rng, seed.fmt)
            results.put(("start", k, seed.name, cls))
            case_dir = tmpdir / f"case{k}"
            case_dir.mkdir()
            if cls in scen.SCENARIOS:
                kind, secs, message = scen.run_scenario(cls, rng, case_dir)
                o = mut.Outcome(kind, secs, message)
                data = b""
            else:
                if cls == "onnx_external":
                    _, _, path = scen.onnx_external(rng, case_dir, seed.data)
                    data = path.read_bytes()
                else:
                    data = mut.mutate(seed, cls, rng, steps=rng.choice([1, 1, 2, 3, 5]))
                    path = case_dir / f"case{k}{seed.suffix}"
                    path.write_bytes(data)
                o = mut.run_case(path, seed.input_shapes, time_bound=TIME_BOUND_S, inspect=k % 4 == 0)
            kind, message = o.kind, o.message
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
            if kind == "kiln_error" and "MemoryError" in message:
                kind = "memory"
            elif rss > RSS_FINDING:
                kind, message = "memory", f"peak RSS {rss >> 20} MiB ({message})"
            san = None
            if kind == "ok" and cls not in scen.SCENARIOS:
                ok_seen += 1
                if ok_seen % sanitize_every == 0:
                    work = tmpdir / f"san{k}"
                    work.mkdir()
                    try:
                        san = _sanitized_run(path, seed.input_shapes, work)
                    except Exception as err:
                        san = ("error", f"{type(err).__name__}: {err}")
            if kind not in ("ok", "kiln_error") or (san and san[0] in ("sanitizer", "compile_failed", "error")):
                (findings / f"case{k}_{seed.name}_{cls}{seed.suffix}").write_bytes(data)
            results.put(("done", k, seed.name, cls, kind, round(o.seconds, 3), message[-4000:], san, rss))
            shutil.rmtree(case_dir, ignore_errors=True)
            if rss > RSS_FINDING:
                return  # start afresh: ru_maxrss never goes down


# Classes around a build (bench/fuzz_scenarios.py) beside the model mutations; concurrent builds
# start processes, so they are drawn less often.
SCENARIO_WEIGHTS = {"out_folder": 0.5, "os_fault": 0.5, "onnx_external": 1.0, "concurrent": 0.04}


def pick_class(rng: random.Random, fmt: str) -> str:
    extra = {c: w for c, w in SCENARIO_WEIGHTS.items() if c != "onnx_external" or fmt == "onnx"}
    names = mut.classes_for(fmt) + list(extra)
    return rng.choices(names, weights=[1.0] * len(mut.classes_for(fmt)) + list(extra.values()))[0]


def campaign(minutes: float, first: int, findings: Path, sanitize_every: int) -> dict:
    ctx = mp.get_context("fork")
    findings.mkdir(parents=True, exist_ok=True)
    stats: dict[str, Counter] = defaultdict(Counter)
    seconds: dict[str, list[float]] = defaultdict(list)
    sanitizer: Counter = Counter()
    found: list[dict] = []
    slowest: list = [None, 0.0, None, None]  # case, seconds, class, seed
    peak_rss = [0]
    deadline = time.monotonic() + minutes * 60
    k = first
    while time.monotonic() < deadline:
        jobs, results = ctx.Queue(), ctx.Queue()
        proc = ctx.Process(target=_worker, args=(jobs, results, findings, sanitize_every), daemon=True)
        proc.start()
        current = None
        while time.monotonic() < deadline and proc.is_alive():
            jobs.put(k)
            k += 1
            while True:
                try:
                    msg = results.get(timeout=TIME_BOUND_S * 3 + 120)
                except Exception:
                    msg = None
                if msg is None:
                    if current is not None:
                        stats[current[1]]["hang"] += 1
                        found.append({"case": current[0], "class": current[1], "seed": current[2], "kind": "hang"})
                    proc.kill()
                    break
                if msg[0] == "start":
                    current = (msg[1], msg[3], msg[2])
                    continue
                _, case, seed_name, cls, kind, secs, message, san, rss = msg
                current = None
                stats[cls][kind] += 1
                seconds[cls].append(secs)
                if secs > slowest[1]:
                    slowest[:] = [case, secs, cls, seed_name]
                peak_rss[0] = max(peak_rss[0], rss)
                if san:
                    sanitizer[san[0]] += 1
                    if san[0] in ("sanitizer", "compile_failed", "error"):
                        found.append({"case": case, "class": cls, "seed": seed_name, "kind": san[0],
                                      "message": san[1]})
                if kind not in ("ok", "kiln_error"):
                    found.append({"case": case, "class": cls, "seed": seed_name, "kind": kind, "message": message})
                break
            if not proc.is_alive() and current is not None:  # died inside a case
                stats[current[1]]["worker_died"] += 1
                found.append({"case": current[0], "class": current[1], "seed": current[2], "kind": "worker_died",
                              "exitcode": proc.exitcode})
                current = None
        jobs.put(None)
        proc.join(5)
        if proc.is_alive():
            proc.kill()
    return {"cases": k - first, "first_case": first, "stats": {c: dict(v) for c, v in stats.items()},
            "max_seconds": {c: max(v) for c, v in seconds.items()},
            "mean_seconds": {c: sum(v) / len(v) for c, v in seconds.items()},
            "sanitizer": dict(sanitizer), "findings": found,
            "slowest": {"case": slowest[0], "seconds": slowest[1], "class": slowest[2], "seed": slowest[3]},
            "peak_rss_bytes": peak_rss[0]}


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
    return {"cases": sum(r["cases"] for r in results), "first_case": min(r["first_case"] for r in results),
            "stats": {c: dict(v) for c, v in stats.items()},
            "max_seconds": {c: max(r["max_seconds"].get(c, 0) for r in results) for c in stats},
            "sanitizer": dict(sum((Counter(r["sanitizer"]) for r in results), Counter())),
            "findings": [f for r in results for f in r["findings"]], "slowest": slowest,
            "peak_rss_bytes": max(r["peak_rss_bytes"] for r in results),
            "minutes": max(r.get("minutes", 0) for r in results), "runs": len(results)}


def markdown(result: dict, minutes: float) -> str:
    kinds = ["ok", "kiln_error", "crash", "bad_message", "timeout", "memory", "hang", "worker_died",
             "lost_file", "partial_output", "wrong_refusal"]
    runs = result.get("runs", 1)
    lines = [f"{result['cases']} cases in {minutes:g} min" + (f" ({runs} campaigns side by side)" if runs > 1 else
             f" (case numbers {result['first_case']}..{result['first_case'] + result['cases'] - 1})")
             + f", time bound {TIME_BOUND_S:g} s per case", "",
             "| class | tried | compiled | clean error | " + " | ".join(kinds[2:]) + " | max s |",
             "|---|" + "---:|" * (len(kinds) + 2)]
    total: Counter = Counter()
    for cls in sorted(result["stats"]):
        c = result["stats"][cls]
        total.update(c)
        lines.append(f"| {cls} | {sum(c.values())} | " + " | ".join(str(c.get(k, 0)) for k in kinds)
                     + f" | {result['max_seconds'].get(cls, 0):.2f} |")
    lines.append(f"| **all** | {sum(total.values())} | " + " | ".join(str(total.get(k, 0)) for k in kinds)
                 + f" | {max(result['max_seconds'].values(), default=0):.2f} |")
    slow = result["slowest"]
    lines += ["", f"Slowest case: {slow['case']} ({slow['class']} on {slow['seed']}), {slow['seconds']:.2f} s; "
              f"largest worker peak RSS: {result['peak_rss_bytes'] / 2 ** 20:.0f} MiB"]
    san = result["sanitizer"]
    lines += ["", f"Compiled mutants built with -fsanitize=address,undefined and run: "
              f"{sum(san.values())} ({', '.join(f'{k} {v}' for k, v in sorted(san.items())) or 'none'})"]
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
                    help="build and run every N-th compiled mutant with ASan/UBSan (default 10)")
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
    result = campaign(args.minutes, args.first_case, args.findings, args.sanitize_every)
    result["minutes"], result["time_bound"] = args.minutes, args.time_bound
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, sort_keys=True))
    print(markdown(result, args.minutes), end="")
    return 1 if result["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())
