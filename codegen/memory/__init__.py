"""Memory planning: one static arena for all activations and scratch buffers."""

from __future__ import annotations

import time
from dataclasses import replace

from codegen.memory.buffers import Alias, Buffer, Plan, PlanError, alias_bound, lower_bound, validate_plan
from codegen.memory.planners import PLANNERS, plan_greedy_by_size, plan_linear

PLANNER_CHOICES = ("auto", "cpsat", "greedy", "linear")
DEFAULT_TIME_LIMIT_S = 10.0


def plan_memory(buffers: list[Buffer], planner: str = "auto", time_limit: float = DEFAULT_TIME_LIMIT_S,
                aliases: list[Alias] = ()) -> Plan:
    """Place the buffers with the named planner and validate the result before returning it.

    `auto`: greedy first; if it sits on the lower bound it is optimal and is kept (planner
    "greedy"), otherwise CP-SAT improves on it within `time_limit` seconds (planner "cpsat";
    never worse than greedy, whose plan is the solver's hint and upper bound). `cpsat` always
    names the plan "cpsat", skipping the solver too when greedy is on the bound. The plan's
    `seconds` covers the whole call.

    `aliases`: the in-place reuse lowering allows (see `Alias`). Greedy takes them greedily,
    CP-SAT chooses them as part of the model, linear ignores them; "on the bound" then means
    on the aliasing-aware bound (`Plan.alias_bound`), which can be below `lower_bound`.
    """
    aliases = list(aliases)
    if planner not in PLANNER_CHOICES:
        raise ValueError(f"unknown planner '{planner}' (known: {', '.join(PLANNER_CHOICES)})")
    t0 = time.perf_counter()
    if planner in PLANNERS:
        plan = PLANNERS[planner](buffers, aliases)
    else:
        from codegen.memory.cpsat import solve_cpsat  # OR-Tools loads in ~0.3 s: only when needed

        greedy = plan_greedy_by_size(buffers, aliases)
        validate_plan(buffers, greedy, aliases)
        if planner == "auto" and greedy.status == "OPTIMAL":
            plan = greedy  # on the lower bound already: nothing for the solver to improve or prove
        else:
            plan = solve_cpsat(buffers, greedy, time_limit, started=t0, aliases=aliases)
    validate_plan(buffers, plan, aliases)
    return replace(plan, seconds=time.perf_counter() - t0)


__all__ = ["Alias", "Buffer", "alias_bound", "DEFAULT_TIME_LIMIT_S", "PLANNER_CHOICES", "Plan", "PlanError",
           "lower_bound",
           "plan_memory", "plan_greedy_by_size", "plan_linear", "validate_plan"]
