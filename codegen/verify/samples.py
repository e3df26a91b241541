"""Seeded random inputs for verification, covering each input's whole range."""

from __future__ import annotations

import numpy as np

from codegen.ir.types import np_dtype


def random_samples(inputs: list[dict], count: int, seed: int) -> list[dict[str, np.ndarray]]:
    """`count` samples for the manifest's `inputs`: integers uniform over their whole range
    (all 256 int8 codes), floats standard normal; an input the build is specialised to
    (`--specialize`) always holds its one accepted value."""
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(count):
        sample = {}
        for io in inputs:
            dt = np_dtype(io["dtype"])
            shape = tuple(io["shape"])
            if io.get("specialized") is not None:
                sample[io["name"]] = np.asarray(io["specialized"]).astype(dt).reshape(shape)
            elif np.issubdtype(dt, np.integer):
                info = np.iinfo(dt)
                sample[io["name"]] = rng.integers(info.min, int(info.max) + 1, size=shape, dtype=dt)
            elif dt == np.bool_:
                sample[io["name"]] = rng.integers(0, 2, size=shape).astype(np.bool_)
            else:
                sample[io["name"]] = rng.standard_normal(shape).astype(dt)
        samples.append(sample)
    return samples
