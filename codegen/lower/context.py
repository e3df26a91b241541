"""The state an op's `lower` hook writes into: kernel calls, constants and buffer aliases."""

from __future__ import annotations

import re
from typing import Any, Sequence

import numpy as np

from codegen.ir.graph import Graph, Node
from codegen.ir.types import np_dtype
from codegen.kernels.select import lower_request
from codegen.lower.kernel import Arg, ConstArray, KernelCall, ParamValue, TensorArg
from codegen.ops.request import KernelRequest
from codegen.targets import Target


def c_identifier(text: str) -> str:
    ident = re.sub(r"[^0-9A-Za-z_]", "_", text).strip("_") or "v"
    return ("v_" + ident) if ident[0].isdigit() else ident


class LowerContext:
    """Collects the lowered program in execution order."""

    def __init__(self, g: Graph, target: Target, optimize: str = "speed"):
        self.g = g
        self.target = target
        self.optimize = optimize  # --optimize: speed, size or ram
        self.reference_stems: frozenset[str] = frozenset()  # kernels run by their reference variant (--ram-limit)
        self.compact_kernels = False  # the target's kernels without scratch-hungry fast paths (--ram-limit)
        self.calls: list[KernelCall] = []
        self.consts: list[ConstArray] = []
        self.aliases: dict[str, str] = {}  # value -> value whose storage it shares
        # value -> byte offset of its storage inside its root's (views of H bands, set by
        # codegen.lower.band_views; absent means 0, the whole root)
        self.view_offsets: dict[str, int] = {}
        self._const_of_value: dict[str, ConstArray] = {}
        self._cnames: dict[str, int] = {}
        self._node_cname: dict[str, str] = {}

    # -- names ---------------------------------------------------------------------------
    def cname(self, node: Node) -> str:
        """A short, stable C name for a node: op name in snake case and a running index."""
        if node.name not in self._node_cname:
            base = re.sub(r"(?<!^)(?=[A-Z][a-z])", "_", node.op).lower()
            base = c_identifier(base.replace("2_d", "2d"))
            idx = self._cnames.get(base, 0)
            self._cnames[base] = idx + 1
            self._node_cname[node.name] = f"{base}_{idx}"
        return self._node_cname[node.name]

    # -- constants -----------------------------------------------------------------------
    def constant(self, node: Node, role: str, data: Any, dtype: str) -> ConstArray:
        """Register a constant array derived at compile time (weights, multipliers, tables)."""
        arr = np.ascontiguousarray(np.asarray(data).astype(np_dtype(dtype)).reshape(-1))
        const = ConstArray(f"{role}_{self.cname(node)}", dtype, arr)
        self.consts.append(const)
        return const

    def tensor(self, name: str) -> TensorArg | ConstArray:
        """A kernel argument for a graph value; constants become flash arrays (shared per value)."""
        v = self.g.values[name]
        if not v.is_const:
            return TensorArg(name)
        if name not in self._const_of_value:
            arr = np.ascontiguousarray(v.data.reshape(-1))
            const = ConstArray(f"c_{c_identifier(name)}"[:60], v.dtype, arr)
            taken = {c.name for c in self.consts}
            base, k = const.name, 1
            while const.name in taken:
                const = ConstArray(f"{base}_{k}", v.dtype, arr)
                k += 1
            self.consts.append(const)
            self._const_of_value[name] = const
        return self._const_of_value[name]

    # -- program -------------------------------------------------------------------------
    def request(self, request: KernelRequest) -> KernelCall:
        """Append the call the kernel registry chooses for `request`."""
        return lower_request(request, self)

    def append_call(self, request: KernelRequest, variant: str, params: dict[str, ParamValue],
                    args: Sequence[Arg], headers: Sequence[str]) -> KernelCall:
        """Append the call a spec prepared for `request` (codegen/kernels/select.py only)."""
        node = request.node
        call = KernelCall(
            cname=self.cname(node) + (f"_{request.part}" if request.part else ""),
            kernel=request.kernel,
            function=f"kiln_{request.kernel}",
            params=dict(params),
            args=list(args),
            writes=list(node.outputs),
            origin=node.origin or (node.name,),
            headers=tuple(headers),
            reads=[a.value for a in args if isinstance(a, TensorArg) and a.value not in node.outputs],
            template_vars=request.template_vars,
            variant=variant,
            template=request.stem,
        )
        self.calls.append(call)
        return call

    def is_io(self, name: str) -> bool:
        return name in self.g.inputs or name in self.g.outputs

    def alias(self, out: str, source: str) -> bool:
        """Let `out` share the storage of `source` (a view, no copy) when that is safe.

        Not safe when either side lives in a user buffer (graph input/output) or is a
        constant: the caller then emits a copy instead.
        """
        if self.is_io(out) or self.is_io(source) or self.g.values[source].is_const:
            return False
        self.aliases[out] = self.aliases.get(source, source)
        return True

    def allow_inplace(self, call: KernelCall, out: str, inp: str, kernel: str | None = None,
                      temp_bytes: int = 0, overlap: int | None = None) -> None:
        """Declare that `call` may write `out` over `inp` (same start address).

        Without `kernel`: the call's own kernel is safe in place because it reads element i
        of `inp` before it writes element i of `out`; only declared when both have the same
        size in bytes. With `kernel`: that in-place variant (same params and args, plus a
        temp of `temp_bytes`) replaces the call when the planner takes the pair; the caller
        has checked it fits (`out` no larger than `inp`). Constants are never overwritten;
        the planner also skips pairs where `inp` lives on after this call or either side is
        a graph input/output. With `overlap`: not the same address, but the input starting at
        least `overlap` bytes above the output (the call's own kernel, any sizes).
        """
        vo, vi = self.g.values[out], self.g.values[inp]
        if vi.is_const or inp in call.writes or out not in call.writes:
            return
        nbytes_out = vo.size * np_dtype(vo.dtype).itemsize
        nbytes_in = vi.size * np_dtype(vi.dtype).itemsize
        if overlap is None and (nbytes_out != nbytes_in if kernel is None else nbytes_out > nbytes_in):
            return
        if (out, inp) not in call.inplace_ok:
            call.inplace_ok.append((out, inp))
        if overlap is not None:
            call.inplace_overlap, call.inplace_overlap_input = overlap, inp
        if kernel is not None:
            call.inplace_kernel, call.inplace_temp = kernel, temp_bytes

    def root(self, name: str) -> str:
        return self.aliases.get(name, name)

    def offset(self, name: str) -> int:
        """Byte offset of `name`'s storage inside its root's (0 unless it is a band view)."""
        return self.view_offsets.get(name, 0)
