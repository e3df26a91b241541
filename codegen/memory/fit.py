"""`--ram-limit`: the fastest combination of kernel variants and plans whose RAM fits.

What a build can trade for RAM, each at its own price in speed:
- reference kernels: the reference variant of some kernels runs in place (depthwise one
  channel at a time over its input, convolution with a smaller partial overlap) where the
  target's faster variant (cortex_m_dsp, mve, neon) needs more room, and of others needs no
  scratch (or less) where the faster one takes some (the DSP matmul's packed rows, the fully
  connected kernel's row, the convolution's window): per kernel stem, the target's variant or
  the reference one (`Config.reference`);
- the patch-based first stage (--patch-stage): fewer live bytes, halo rows computed again;
- inputs and outputs inside the arena (--io-in-arena): free in speed, another C API;
- compact kernels: the target's kernels without the fast paths that take more scratch (the
  DSP depthwise ring of int16 rows), a little slower than those paths and far faster than the
  reference kernels (`Config.compact`).

RAM is what the model itself needs: the arena, plus the inputs and outputs when they are the
caller's buffers (the stack is the application's; `codegen.budget`). Speed is the fusion cost
model's estimate of the lowered program (codegen/fusion/costmodel.py), each node priced with
the constants of the kernel family that computes it: estimates, good for ranking, not for
promising a count (`kiln profile` measures the build taken).

The search itself (`search`; `choose` over trials already planned) is pure: the compiler hands
it the configurations, how to price one and how to plan one, and it returns the fastest that
fits, or says how close the smallest came.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, replace
from typing import Callable

from codegen.fusion.costmodel import kernel_estimate
from codegen.fusion.target_cost import cost_params
from codegen.fusion.work import node_work
from codegen.ops.request import ScratchArg

MAX_FREE_STEMS = 4  # beyond this many candidate kernels: none, each alone, or all of them


@dataclass(frozen=True)
class Config:
    """One way to build: kernels run by their reference (in-place or scratch-free) variant,
    patch stage, I/O."""

    reference: tuple[str, ...] = ()
    patch_stage: bool = False
    io_in_arena: bool = False
    compact: bool = False

    def describe(self) -> str:
        parts = ([f"reference kernels for {', '.join(self.reference)}"] if self.reference else
                 ["the target's kernels"])
        parts += ["compact fast kernels (no widened scratch)"] if self.compact else []
        parts += ["patch-based first stage"] if self.patch_stage else []
        parts += ["inputs and outputs in the arena"] if self.io_in_arena else []
        return ", ".join(parts)

    @property
    def changes(self) -> int:
        """How far from the build as asked: fewer is preferred between equally fast ones."""
        return len(self.reference) + self.patch_stage + self.io_in_arena + self.compact

    def manifest(self) -> dict:
        return {"reference_kernels": list(self.reference), "patch_stage": self.patch_stage,
                "io_in_arena": self.io_in_arena, "compact_kernels": self.compact}


@dataclass(frozen=True)
class Trial:
    """A configuration planned: its RAM (arena + I/O outside it) and estimated cycles."""

    config: Config
    arena_bytes: int
    ram_bytes: int
    cycles: int
    planner_status: str = "OPTIMAL"  # "FEASIBLE": a better planner might still find less
    floor_bytes: int | None = None  # RAM no plan of this configuration can go below (None: ram_bytes)

    @property
    def floor(self) -> int:
        return self.ram_bytes if self.floor_bytes is None else self.floor_bytes

    @property
    def improvable(self) -> bool:
        return self.planner_status != "OPTIMAL" and self.floor < self.ram_bytes


@dataclass(frozen=True)
class Fit:
    """What the search took (`chosen`, None when nothing fits) out of `trials`."""

    limit: int
    chosen: Trial | None
    trials: tuple[Trial, ...]

    @property
    def smallest(self) -> Trial:
        return min(self.trials, key=lambda t: (t.ram_bytes, t.cycles, t.config.changes))

    def manifest(self) -> dict:
        return {"ram_limit_bytes": self.limit,
                "chosen": None if self.chosen is None else {**self.chosen.config.manifest(),
                                                           "ram_bytes": self.chosen.ram_bytes,
                                                           "estimated_cycles": self.chosen.cycles},
                "trials": [{**t.config.manifest(), "arena_bytes": t.arena_bytes, "ram_bytes": t.ram_bytes,
                            "estimated_cycles": t.cycles} for t in self.trials]}


def configs(stems: list[str], patch: bool, io: bool = True, compact: bool = False) -> list[Config]:
    """Every combination to try: subsets of the kernel `stems` whose reference variant saves
    RAM (all of them up to MAX_FREE_STEMS stems; past that none, each alone, or all), with and
    without the patch stage when the model has one (`patch`), I/O outside and inside, the
    target's kernels as they are and, where that changes their scratch (`compact`), compact."""
    stems = sorted(stems)
    if len(stems) <= MAX_FREE_STEMS:
        subsets = [c for k in range(len(stems) + 1) for c in itertools.combinations(stems, k)]
    else:
        subsets = [()] + [(s,) for s in stems] + [tuple(stems)]
    return [Config(tuple(sub), p, i, k) for sub in subsets for p in ((False, True) if patch else (False,))
            for i in ((False, True) if io else (False,)) for k in ((False, True) if compact else (False,))]


def scratch_of(calls) -> tuple[tuple[int, ...], ...]:
    """The scratch bytes of each call: what compact kernels change."""
    return tuple(tuple(a.nbytes for a in c.args if isinstance(a, ScratchArg)) for c in calls)


def choose(trials: list[Trial], limit: int, refine: Callable[[Trial], Trial] | None = None) -> Fit:
    """The fastest trial within `limit` bytes (ties: the fewest changes, then the least RAM).

    `refine` plans a trial again with a better (slower) planner. Fastest first, a trial whose
    plan is above the limit but whose floor is not is refined before a slower one is taken;
    when nothing fits, the trials whose floor is below the least RAM found are refined (fewest
    bytes first), so that the figure reported is the least Kiln can reach. `search` over
    trials already planned (the first is the baseline); `Fit.trials` holds those it looked at."""
    by_config = {t.config: t for t in trials}
    return search(list(by_config), lambda c: by_config[c].cycles, by_config.__getitem__, limit, refine)


def search(configs: list[Config], price: Callable[[Config], int | None], plan: Callable[[Config], Trial],
           limit: int, refine: Callable[[Trial], Trial] | None = None, bound: Callable[[Config], int] | None = None,
           price_floor: Callable[[Config], int] | None = None) -> Fit:
    """`choose` without planning every configuration: each priced (the cost model, far cheaper
    than a plan), then planned fastest first, a group of equal price at a time, until one fits.
    The first configuration (the build as asked, the baseline) is always planned. `price`
    None: the configuration does not exist (a patch stage the model has none of).
    `price_floor` (a cheap price no more than `price`) defers pricing a configuration until
    it could come next: the patch stage is searched only when a build with it might be taken.
    `bound` (the RAM no plan of a configuration goes below, cheaper than a plan) skips those
    that cannot fit; when nothing fits, the rest are planned to report the least RAM reached,
    but for those whose bound is above the least found."""
    planned = {configs[0]: plan(configs[0])}
    floor = price_floor or price
    heap = [((floor(c), c.compact, c.changes), False, k) for k, c in enumerate(configs)]
    heapq.heapify(heap)
    priced: list[Config] = []
    while heap:
        key = heap[0][0]
        group = []
        while heap and heap[0][0] == key:
            group.append(heapq.heappop(heap))
        if not all(exact for _, exact, _ in group):  # choose's order on the exact price
            for _, exact, k in group:
                p = price(configs[k]) if not exact else key[0]
                if p is not None:
                    heapq.heappush(heap, ((p, configs[k].compact, configs[k].changes), True, k))
            continue
        group = [configs[k] for _, _, k in group]
        priced += group
        group = [c for c in group if c in planned or bound is None or bound(c) <= limit]  # others cannot fit
        trials = [planned[c] if c in planned else plan(c) for c in group]
        chosen = _fastest_fit(trials, limit, refine)
        planned.update((t.config, t) for t in trials)
        if chosen is not None:
            return Fit(limit, chosen, tuple(planned[c] for c in configs if c in planned))
    for c in sorted(priced, key=bound or (lambda c: 0)):
        least = min(t.ram_bytes for t in planned.values())
        if c not in planned and (bound is None or bound(c) <= least):
            planned[c] = plan(c)
    trials = [planned[c] for c in configs if c in planned]
    _refine_least(trials, refine)
    return Fit(limit, None, tuple(trials))


def _fastest_fit(trials: list[Trial], limit: int, refine: Callable[[Trial], Trial] | None) -> Trial | None:
    """Fastest first, the first within `limit` (trials refined in place): one price group of `search`."""
    # The cost model prices compact kernels like the fast paths they replace, though they are a
    # few per cent slower (KWS on cortex-m4: +4.6 %): among builds estimated equal they come last.
    order = sorted(range(len(trials)), key=lambda k: (trials[k].cycles, trials[k].config.compact,
                                                      trials[k].config.changes, trials[k].ram_bytes))
    for k in order:
        if trials[k].ram_bytes > limit and refine is not None and trials[k].improvable and trials[k].floor <= limit:
            trials[k] = refine(trials[k])
        if trials[k].ram_bytes <= limit:
            return trials[k]
    return None


def _refine_least(trials: list[Trial], refine: Callable[[Trial], Trial] | None) -> None:
    """Nothing fits: the trials whose floor is below the least RAM found, refined in place."""
    for k in sorted(range(len(trials)), key=lambda k: trials[k].floor):
        least = min(t.ram_bytes for t in trials)
        if refine is not None and trials[k].improvable and trials[k].floor < least:
            trials[k] = refine(trials[k])


def program_cycles(g, calls, target) -> int:
    """Estimated cycles of a lowered program: each node of the lowered graph `g` priced with
    the cost constants of the kernel family (variant) of the call that computes it."""
    base = cost_params(target)
    family = {tuple(c.origin): c.variant for c in calls}
    params = {}
    total = 0
    for node in g.nodes:
        variant = family.get(tuple(node.origin or (node.name,)), base.family)
        if variant not in params:
            params[variant] = replace(base, family=variant)
        total += kernel_estimate(node_work(node, g), params[variant]).cycles
    return total


def inplace_stems(target_calls, reference_calls) -> list[str]:
    """Kernel stems whose reference variant declares an in-place reuse that the target's
    variant does not declare the same way (the two lowerings of one graph, call by call)."""
    stems = set()
    for fast, ref in zip(target_calls, reference_calls):
        if fast.variant == ref.variant or not ref.inplace_ok:
            continue
        if (fast.inplace_kernel, fast.inplace_overlap, bool(fast.inplace_ok)) != \
                (ref.inplace_kernel, ref.inplace_overlap, True):
            stems.add(request_stem(fast))
    return sorted(stems)


def scratch_stems(target_calls, reference_calls) -> list[str]:
    """Kernel stems whose target variant takes more scratch, at some call, than the reference
    variant of the same call (the two lowerings of one graph, call by call): the reference
    kernel frees those bytes while the call runs."""
    stems = set()
    for fast, ref in zip(target_calls, reference_calls):
        if fast.variant != ref.variant and sum(scratch_of([fast])[0]) > sum(scratch_of([ref])[0]):
            stems.add(request_stem(fast))
    return sorted(stems)


def request_stem(call) -> str:
    """The registry key the call was selected by (what `select`'s `reference` names): the kernel
    of a fixed kernel or family member, the template stem of a kernel generated per call site."""
    return call.template if "__" in call.kernel else call.kernel


def format_fit(fit: Fit, baseline: Trial | None) -> str:
    """One line: what --ram-limit took and what it costs against the build as asked."""
    t = fit.chosen
    if t is None:
        s = fit.smallest
        return (f"nothing fits {fit.limit} B: the least RAM Kiln reaches is {s.ram_bytes} B "
                f"({s.config.describe()})")
    cost = ""
    if baseline is not None and baseline.cycles:
        cost = f", estimated {100.0 * (t.cycles - baseline.cycles) / baseline.cycles:+.1f}% cycles"
    return f"took {t.config.describe()}: RAM {t.ram_bytes} B of {fit.limit} B (arena {t.arena_bytes} B){cost}"
