"""Where Kiln's data lives: templates/, runtime_c/ and boards/ (with boards/targets).

An installed wheel carries them inside the package (codegen/templates, ...: setup.py maps the
repository's top-level folders there); a checkout, or an editable install of one, has them beside
the codegen package. Real folders either way: Jinja's loader and the C compiler read them by
path, and pip installs wheels unpacked.
"""

from __future__ import annotations

import sys
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

# Installed from a wheel (the data inside the package) rather than run from a checkout.
INSTALLED_WHEEL = (PACKAGE / "templates").is_dir()


def install_command(extra: str) -> str:
    """The command that adds Kiln's optional dependencies `extra` ("verify": the reference
    runtimes) to the Python running Kiln, the way this Kiln was installed."""
    pip = f"{sys.executable} -m pip install"
    return f"{pip} 'kiln-mcu[{extra}]'" if INSTALLED_WHEEL else f"{pip} -e '{PACKAGE.parent}[{extra}]'"
