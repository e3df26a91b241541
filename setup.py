"""Packaging: the codegen package plus the folders it reads at run time.

templates/, runtime_c/ and boards/ stay at the top of the repository (where the C sources,
kernels and board files are edited) and are installed inside the package as codegen/templates,
codegen/runtime_c and codegen/boards, where codegen/resources.py finds them. Every folder is
listed as a package with all its files as package data, so that the wheel carries everything
Kiln reads at run time and nothing from the source tree is needed. The rest is in pyproject.toml.
"""

from pathlib import Path

from setuptools import find_namespace_packages, setup

DATA_FOLDERS = ("templates", "runtime_c", "boards")


def folder_packages(top: str) -> list[str]:
    """`top` and every folder under it, as package names inside codegen."""
    folders = [Path(top), *sorted(p for p in Path(top).rglob("*") if p.is_dir() and p.name != "__pycache__")]
    return [".".join(("codegen", *folder.parts)) for folder in folders]


data_packages = [package for top in DATA_FOLDERS for package in folder_packages(top)]
code_packages = find_namespace_packages(include=["codegen", "codegen.*"], exclude=["*.__pycache__"])
setup(packages=code_packages + data_packages,
      package_dir={f"codegen.{top}": top for top in DATA_FOLDERS},
      package_data={**{package: ["*"] for package in data_packages},
                    "codegen.fusion": ["kernel_costs.toml"],  # the fusion planner's cost tables
                    "codegen.verify.plugin": ["insn_count.c"]})  # built by `kiln profile`
