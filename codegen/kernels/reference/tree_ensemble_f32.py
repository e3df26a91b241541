"""templates/kernels/reference/tree_ensemble_f32.c.j2: ONNX TreeEnsemble's walk and vote
(codegen/ops/tree_ensemble.py), one kernel per call site (its index tables' C types and what
the model fixes are template variables); the flash tables as codegen/ops/tree_tables.py lays
them out."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.kernels.spec import REFERENCE, TypedSpec, kernel_spec
from codegen.ops.request import ConstArray
from codegen.ops.tree_tables import INDEX_TABLES


@dataclass(frozen=True)
class TreeEnsembleF32:
    rows: int  # N
    features: int  # F
    targets: int  # scores per row
    trees: int
    roots: ConstArray  # per tree: its first node, or -1 (a one-leaf tree)
    leaf_base: ConstArray  # per tree: its first leaf
    feature: ConstArray  # per node: the feature it tests
    mode: ConstArray  # per node: the comparison and its flags
    split: ConstArray  # per node: the threshold
    second_step: ConstArray  # per node: to its second child
    true_step: ConstArray  # per node: to its true child
    false_step: ConstArray  # ... and to its false child
    member_begin: ConstArray  # per node + 1: its set in members
    members: ConstArray
    leaf_begin: ConstArray  # per leaf + 1: its votes
    leaf_target: ConstArray  # per vote: its target
    leaf_weight: ConstArray
    base: ConstArray  # per target: the base value


@kernel_spec
class TreeEnsembleF32Reference(TypedSpec):
    kernel, variant, Params = "tree_ensemble_f32", REFERENCE, TreeEnsembleF32
    example_vars = (("name", "tree_ensemble_f32"), *((f"{table}_t", "int32_t") for table in INDEX_TABLES),
                    ("uniform_cmp", "<="), ("two_steps", True), ("nan_true", False), ("one_vote", False),
                    ("one_target", False), ("aggregate", 0), ("has_base", True), ("has_members", True),
                    ("track_seen", True))
