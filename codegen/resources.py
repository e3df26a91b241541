"""Where Kiln's data lives: templates/, runtime_c/ and boards/ (with boards/targets).

An installed wheel carries them inside the package (codegen/templates, ...: setup.py maps the
repository's top-level folders there); a checkout, or an editable install of one, has them beside
the codegen package. Real folders either way: Jinja's loader and the C compiler read them by
path, and pip installs wheels unpacked.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

PACKAGE = Path(str(files("codegen")))


def _data_folder(name: str) -> Path:
    installed = PACKAGE / name
    return installed if installed.is_dir() else PACKAGE.parent / name


TEMPLATES = _data_folder("templates")
RUNTIME_C = _data_folder("runtime_c")
BOARDS = _data_folder("boards")
TARGETS = BOARDS / "targets"
