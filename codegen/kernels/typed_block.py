"""A kernel spec whose op lays out every field itself (svdf, lstm_s8, dynamic_update_slice):
the spec types them as its frozen `Params` dataclass and passes arguments and headers on."""

from __future__ import annotations

from codegen.kernels.spec import KernelSpec, Prepared


class OpLaidOut(KernelSpec):
    @classmethod
    def prepare(cls, request, ctx):
        return Prepared(cls.Params(**request.params), tuple(request.args), tuple(request.headers))
