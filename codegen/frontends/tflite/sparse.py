"""Sparse TFLite constants (the converter's sparsity parameters), densified at import.

A sparse tensor stores only some values; `SparsityParameters` say where they go. The n
original dimensions may be cut into blocks (`block_map` names the blocked dimensions; each
block dimension is a further level), and the n + k levels are walked in `traversal_order`.
Each level is DENSE (all `dense_size` positions) or SPARSE_CSR (for each position of the
level above, the positions from `array_segments[p]` to `array_segments[p + 1]` of
`array_indices`). The values are stored in that walk's order. This is TFLite's own
`FormatConverter::Populate`; Kiln then treats the tensor as an ordinary dense constant
(`reader.fold_densify`: a DENSIFY operator in front of it is dropped, its output becoming that
constant, so that a float16 one still folds through DEQUANTIZE).

Everything read here is checked (permutations, index ranges, segment order, value count),
so a malformed file gives one clear error naming the tensor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import tflite

from codegen.errors import KilnError

DENSE, SPARSE_CSR = 0, 1
_INDEX_VECTORS = {1: tflite.Int32Vector, 2: tflite.Uint16Vector, 3: tflite.Uint8Vector}


@dataclass(frozen=True)
class Level:
    dense: bool
    dense_size: int
    segments: tuple[int, ...] = ()
    indices: tuple[int, ...] = ()


@dataclass(frozen=True)
class Sparsity:
    traversal_order: tuple[int, ...]
    block_map: tuple[int, ...]
    levels: tuple[Level, ...]


def read_sparsity(sp, charge, label: str) -> Sparsity:
    """The `tflite.SparsityParameters` table as plain data; `charge(n, what)` bounds the reading."""
    order = _vector(sp.TraversalOrderAsNumpy, sp.TraversalOrderLength(), charge, f"the traversal order of '{label}'")
    block_map = _vector(sp.BlockMapAsNumpy, sp.BlockMapLength(), charge, f"the block map of '{label}'")
    n = sp.DimMetadataLength()
    charge(n, f"the dimension metadata of '{label}'")
    levels = []
    for i in range(n):
        m = sp.DimMetadata(i)
        if m.Format() == DENSE:
            levels.append(Level(True, int(m.DenseSize())))
            continue
        segments = _index_vector(m.ArraySegmentsType(), m.ArraySegments(), charge, label, "array_segments")
        indices = _index_vector(m.ArrayIndicesType(), m.ArrayIndices(), charge, label, "array_indices")
        levels.append(Level(False, int(m.DenseSize()), segments, indices))
    return Sparsity(order, block_map, tuple(levels))


def _vector(as_numpy, length: int, charge, what: str) -> tuple[int, ...]:
    charge(length, what)
    return tuple(int(v) for v in as_numpy()) if length else ()


def _index_vector(kind: int, table, charge, label: str, what: str) -> tuple[int, ...]:
    cls = _INDEX_VECTORS.get(int(kind))
    if cls is None or table is None:
        raise KilnError(f"sparse tensor has a CSR level without {what}", node=label)
    vec = cls()
    vec.Init(table.Bytes, table.Pos)
    return _vector(vec.ValuesAsNumpy, vec.ValuesLength(), charge, f"the {what} of '{label}'")


def densify(s: Sparsity, values: np.ndarray, shape: tuple[int, ...], label: str) -> np.ndarray:
    """The dense tensor of `shape` whose stored (non-implicit) values are `values`."""
    n, order, block_map = len(shape), s.traversal_order, s.block_map
    depth = n + len(block_map)

    def bad(problem: str) -> KilnError:
        return KilnError(f"malformed sparse tensor: {problem}", node=label)

    if sorted(order) != list(range(depth)) or len(s.levels) != depth:
        raise bad(f"traversal order {list(order)} and {len(s.levels)} dimension levels do not describe "
                  f"{n} dimensions with {len(block_map)} blocks")
    if sorted(order[:n]) != list(range(n)) or any(not 0 <= d < n for d in block_map):
        raise bad(f"traversal order {list(order)} / block map {list(block_map)} do not fit rank {n}")
    block_size = {order[lv] - n: s.levels[lv].dense_size for lv in range(n, depth)}
    for lv, d in enumerate(order[:n]):
        blocks = [block_size[j] for j, b in enumerate(block_map) if b == d]
        want = shape[d] // blocks[0] if blocks else shape[d]
        if (blocks and (blocks[0] < 1 or shape[d] % blocks[0])) or s.levels[lv].dense_size != want:
            raise bad(f"level {lv} has size {s.levels[lv].dense_size}, dimension {d} of {list(shape)} needs {want}")
    out = np.zeros(shape, values.dtype)
    # Walk the levels breadth-first: each level maps (parent position, coordinates so far) to
    # its children, exactly as Populate recurses, but with numpy arrays per level.
    positions = np.zeros(1, np.int64)
    coords = np.zeros((1, 0), np.int64)
    for lv, level in enumerate(s.levels):
        if level.dense:
            k = np.arange(level.dense_size, dtype=np.int64)
            positions = (positions[:, None] * level.dense_size + k[None, :]).reshape(-1)
            coords = np.concatenate([np.repeat(coords, level.dense_size, axis=0),
                                     np.tile(k, len(coords))[:, None]], axis=1)
            continue
        seg = np.asarray(level.segments, np.int64)
        idx = np.asarray(level.indices, np.int64)
        if len(seg) < 1 or np.any(np.diff(seg) < 0) or seg[0] != 0 or seg[-1] != len(idx) \
                or np.any(positions >= len(seg) - 1):
            raise bad(f"level {lv}: array_segments do not index its {len(idx)} array_indices")
        if np.any(idx < 0) or np.any(idx >= level.dense_size):
            raise bad(f"level {lv}: an array index lies outside 0..{level.dense_size - 1}")
        counts = seg[positions + 1] - seg[positions]
        children = np.concatenate([np.arange(seg[p], seg[p + 1]) for p in positions]) if len(positions) \
            else np.zeros(0, np.int64)
        coords = np.concatenate([np.repeat(coords, counts, axis=0), idx[children][:, None]], axis=1)
        positions = children
    if len(coords) != values.size:
        raise bad(f"the sparsity parameters place {len(coords)} values, the buffer holds {values.size}")
    orig = np.zeros((len(coords), n), np.int64)
    for lv in range(n):
        orig[:, order[lv]] = coords[:, lv]
    for lv in range(n, depth):
        j = order[lv] - n
        d = block_map[j]
        orig[:, d] = orig[:, d] * block_size[j] + coords[:, lv]
    out[tuple(orig.T)] = values.reshape(-1)
    return out
