"""Regenerate the golden snapshots: `python tests/golden/golden_snapshots.py` (from anywhere).

Each model in tests/golden/models/ is compiled for the host; the generated files are written
to tests/golden/<model stem>/. Review the diff before committing it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from codegen.compiler import compile_model
from codegen.options import CompileOptions
from codegen.targets import load_target

GOLDEN = Path(__file__).resolve().parent
MODELS = sorted((GOLDEN / "models").iterdir())


def generate(model: Path) -> dict[str, str]:
    return compile_model(model, CompileOptions(load_target("host"))).files


def main() -> None:
    for model in MODELS:
        out = GOLDEN / model.stem
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        for name, text in sorted(generate(model).items()):
            (out / name).write_text(text)
        print(f"wrote {out.relative_to(GOLDEN.parent.parent)}")


if __name__ == "__main__":
    main()
