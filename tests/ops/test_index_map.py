"""The shared index-map planner: trailing whole axes become one chunk, size-1 axes fold into
the base offset, and more than six moving axes merge; plans reproduce numpy indexing."""

import numpy as np

from codegen.ops.index_map import MAX_DIMS, index_map_plan


def apply(plan, x: np.ndarray) -> np.ndarray:
    dims, tables, chunk = plan
    raw = x.tobytes()
    offsets = tables[0]
    for t in tables[1:]:
        offsets = (offsets[:, None] + t[None, :]).reshape(-1)
    return np.frombuffer(b"".join(raw[o:o + chunk] for o in offsets.tolist()), x.dtype)


def test_trailing_whole_axes_are_one_chunk():
    dims, tables, chunk = index_map_plan((4, 5, 6), 4, [np.array([1, 3]), np.arange(5), np.arange(6)])
    assert dims == [2] and chunk == 5 * 6 * 4
    assert tables[0].tolist() == [120, 360]


def test_size_one_axes_fold_into_the_base():
    dims, tables, chunk = index_map_plan((4, 5), 1, [np.array([2]), np.array([4, 0])])
    assert dims == [2] and tables[0].tolist() == [14, 10] and chunk == 1


def test_many_axes_merge_and_match_numpy():
    shape = (2, 3, 2, 3, 2, 3, 2, 3)
    x = np.arange(np.prod(shape), dtype=np.int16).reshape(shape)
    picks = [np.array([1, 0])[: d] if d == 2 else np.array([2, 0, 1]) for d in shape]
    plan = index_map_plan(shape, 2, picks)
    assert len(plan[0]) <= MAX_DIMS
    np.testing.assert_array_equal(apply(plan, x), x[np.ix_(*picks)].reshape(-1))
