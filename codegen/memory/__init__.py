"""Memory planning: one static arena for all activations and scratch buffers."""

from codegen.memory.buffers import Buffer, Plan, PlanError, lower_bound, validate_plan
from codegen.memory.planners import PLANNERS, plan_greedy_by_size, plan_linear


def plan_memory(buffers: list[Buffer], planner: str = "greedy") -> Plan:
    """Place the buffers with the named planner and validate the result before returning it."""
    plan = PLANNERS[planner](buffers)
    validate_plan(buffers, plan)
    return plan


__all__ = ["Buffer", "Plan", "PlanError", "lower_bound", "plan_memory", "plan_greedy_by_size",
           "plan_linear", "validate_plan"]
