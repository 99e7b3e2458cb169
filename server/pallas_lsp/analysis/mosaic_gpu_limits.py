"""Mosaic GPU's resource limits and allocation units, read from the analysed jax's own source files.

jax is never imported: the numbers are the module-level constants (and the one `getattr` default)
of the files that use them, parsed with `ast`, so an upgrade of jax that moves a limit moves ours.
Where a file or a constant is missing, the figure is None and nothing is checked against it.
"""

from __future__ import annotations

import ast
import operator
import os
from dataclasses import dataclass
from functools import lru_cache

from .jax_version import jax_package_folder

# (relative file, what to read): a module-level NAME, or the default of `getattr(device, ATTR, default)`.
_LIMIT_FILE = "experimental/mosaic/gpu/core.py"  # `_launch`: `max_smem_bytes = getattr(device, ..., 227 * 1024)`
_DEVICE_ATTRIBUTE = "shared_memory_per_block_optin"
_PALLAS_CORE = "_src/pallas/mosaic_gpu/core.py"  # SMEM_ALIGNMENT; CompilerParams.reduction_scratch_bytes
_UTILS = "experimental/mosaic/gpu/utils.py"  # MBARRIER_BYTES
_TCGEN05 = "experimental/mosaic/gpu/tcgen05.py"  # TMEM_MAX_COLS

_ARITHMETIC = {ast.Mult: operator.mul, ast.Add: operator.add, ast.Sub: operator.sub, ast.FloorDiv: operator.floordiv,
               ast.Pow: operator.pow}


@dataclass(frozen=True)
class MosaicGpuLimits:
    """What JAX's estimator and `_launch` use: `max_smem_bytes` is the bound without a device to ask
    (a Hopper or Blackwell GPU reports the same 227 KiB as `shared_memory_per_block_optin`)."""

    max_smem_bytes: int | None
    limit_source: str  # where it was read, for messages: "jax/experimental/mosaic/gpu/core.py:803"
    smem_alignment: int | None
    mbarrier_bytes: int | None
    tmem_max_cols: int | None
    reduction_scratch_bytes: int | None


def mosaic_gpu_limits(project) -> MosaicGpuLimits | None:
    """The analysed environment's limits, or None without a jax whose source can be read."""
    folder = jax_package_folder(project)
    if folder is None:
        return None
    return _read_limits(folder, *(_stamp(os.path.join(folder, f)) for f in (_LIMIT_FILE, _PALLAS_CORE, _UTILS, _TCGEN05)))


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


@lru_cache(maxsize=8)
def _read_limits(folder: str, *stamps) -> MosaicGpuLimits:
    del stamps  # part of the cache key only: a changed file is read again
    limit, line = _getattr_default(os.path.join(folder, _LIMIT_FILE), _DEVICE_ATTRIBUTE)
    core = _module_constants(os.path.join(folder, _PALLAS_CORE))
    return MosaicGpuLimits(
        max_smem_bytes=limit,
        limit_source=f"jax/{_LIMIT_FILE}:{line}" if line else f"jax/{_LIMIT_FILE}",
        smem_alignment=core.get("SMEM_ALIGNMENT"),
        mbarrier_bytes=_module_constants(os.path.join(folder, _UTILS)).get("MBARRIER_BYTES"),
        tmem_max_cols=_module_constants(os.path.join(folder, _TCGEN05)).get("TMEM_MAX_COLS"),
        reduction_scratch_bytes=core.get("reduction_scratch_bytes"),
    )


def _parse(path: str) -> ast.Module | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return ast.parse(handle.read(), path)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return None


def _number(node: ast.AST) -> int | None:
    """An integer constant expression (`227 * 1024`), or None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _number(node.left), _number(node.right)
        if left is not None and right is not None:
            return _ARITHMETIC[type(node.op)](left, right)
    return None


def _module_constants(path: str) -> dict[str, int]:
    """Integer constants assigned at module level, and the integer field defaults of its classes
    (`reduction_scratch_bytes: int = 128 * 4 * 4` in `CompilerParams`)."""
    tree = _parse(path)
    found: dict[str, int] = {}
    if tree is None:
        return found
    statements = list(tree.body)
    statements += [s for c in tree.body if isinstance(c, ast.ClassDef) for s in c.body]
    for stmt in statements:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name, value = stmt.targets[0].id, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            name, value = stmt.target.id, stmt.value
        else:
            continue
        number = _number(value)
        if number is not None:
            found.setdefault(name, number)
    return found


def _getattr_default(path: str, attribute: str) -> tuple[int | None, int | None]:
    """The default of `getattr(x, attribute, default)` in the file, and its line."""
    tree = _parse(path)
    if tree is None:
        return None, None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                and len(node.args) == 3 and isinstance(node.args[1], ast.Constant) and node.args[1].value == attribute:
            return _number(node.args[2]), node.lineno
    return None, None
