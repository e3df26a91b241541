"""The generated C of small models equals the reviewed snapshots in tests/golden/<model>/.

After an intended change of the generated code: `python tests/golden/golden_snapshots.py`, review the diff.
"""

import pytest

from golden_snapshots import GOLDEN, MODELS, generate


@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.name)
def test_generated_files_match_snapshot(model):
    expected_dir = GOLDEN / model.stem
    got = generate(model)
    expected = {p.name: p.read_text() for p in expected_dir.iterdir()}
    assert sorted(got) == sorted(expected), "file list changed: run python tests/golden/golden_snapshots.py"
    for name in sorted(got):
        assert got[name] == expected[name], f"{name} changed: run python tests/golden/golden_snapshots.py and review the diff"
