"""`kiln profile --variant ... --write-manifest DIR` (or `--max-shape ...`): the instructions
counted in QEMU written into the manifest of the library `kiln build` wrote to DIR, beside the
arena and weights of each variant (or each extent of a bounded dimension), so that one file holds
every figure a firmware engineer budgets with. The build itself stays free of emulation and
deterministic: counts come only from an explicit profile run of the same model, target and
variants, which is checked before anything is written.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from codegen.errors import KilnError


def library_manifest(folder: Path, name: str, model: Path, target: str,
                     shared_kernels: bool | None = None) -> tuple[Path, dict]:
    """The manifest to update, checked to come from the same model and target and, for shape
    variants, the same kernel code (`shared_kernels`; None: a bounded dimension), before measuring."""
    path = folder / f"{name}.manifest.json"
    try:
        manifest = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise KilnError(f"--write-manifest: no manifest of '{name}' to update ({err})", where=str(path)) from None
    sha = hashlib.sha256(model.read_bytes()).hexdigest()
    if manifest.get("model_sha256") != sha or manifest.get("target") != target:
        raise KilnError(f"--write-manifest: {path.name} was built from another model or for another target "
                        f"than {model.name} on {target}; build it again with the same options", where=str(path))
    built = manifest.get("variant_kernels", {}).get("shared")
    if shared_kernels is not None and built is not shared_kernels:
        raise KilnError(f"--write-manifest: {path.name} was built with {'shared' if built else 'own'} kernel code, "
                        "and would be measured with the other; give the same --variant-kernels", where=str(path))
    return path, manifest


def _write(path: Path, manifest: dict) -> None:
    """Replace the manifest in one step: a reader never sees half of it."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def write_instructions(folder: Path, name: str, model: Path, target: str, board: str,
                       counts: list[tuple[str, str, int]], *, bounded: bool, shared_kernels: bool) -> Path:
    """`counts`: (variant name or "extent N", description, instructions per inference). Each
    variant of the manifest gets its `instructions`; a bounded dimension gets `instructions_by_extent`.
    `shared_kernels`: the kernel code measured (codegen/variants/kernels.py), the build's own."""
    path, manifest = library_manifest(folder, name, model, target, None if bounded else shared_kernels)
    measured = {"by": "kiln profile", "board": board, "what": "instructions from the call into the model to "
                "its return, QEMU counting plugin, fewest over the samples"}
    if bounded:
        if "bounded_dimension" not in manifest:
            raise KilnError(f"--write-manifest: {path.name} has no bounded dimension (built without --max-shape)",
                            where=str(path))
        manifest["bounded_dimension"]["instructions_by_extent"] = {
            label.split()[1]: count for label, _, count in counts}
    else:
        variants = {v["name"]: v for v in manifest.get("variants", [])}
        for variant, description, count in counts:
            entry = variants.get(variant)
            if entry is None or entry["shapes"] != description:
                raise KilnError(f"--write-manifest: {path.name} has no variant {variant} ({description}); build it "
                                "with the same --variant options", where=str(path))
            entry["instructions"] = count
    manifest["instructions_measured"] = measured
    _write(path, manifest)
    return path
