"""Where Kiln's data lives: templates/, runtime_c/ and boards/ beside the codegen package."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "templates"
RUNTIME_C = ROOT / "runtime_c"
BOARDS = ROOT / "boards"
TARGETS = BOARDS / "targets"
