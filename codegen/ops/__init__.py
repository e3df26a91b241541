"""Operators: one module per operator, each registering an `Op` subclass (see registry.py)."""

from codegen.ops.registry import Op, OpKind, all_ops, get_op, register

__all__ = ["Op", "OpKind", "all_ops", "get_op", "register"]
