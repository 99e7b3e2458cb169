"""Mosaic GPU's resource limits and allocation units, read from the analysed jax's own source files.

jax is never imported: the numbers are the module-level constants (and the one `getattr` default)
of the files that use them, each assignment's expression parsed with `ast`, so an upgrade of jax
that moves a limit moves ours.
Where a file or a constant is missing, the figure is None and nothing is checked against it.
"""

from __future__ import annotations

import ast
import operator
import os
import re
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
    core = _read(os.path.join(folder, _PALLAS_CORE))
    return MosaicGpuLimits(
        max_smem_bytes=limit,
        limit_source=f"jax/{_LIMIT_FILE}:{line}" if line else f"jax/{_LIMIT_FILE}",
        smem_alignment=_constant(core, "SMEM_ALIGNMENT"),
        mbarrier_bytes=_constant(_read(os.path.join(folder, _UTILS)), "MBARRIER_BYTES"),
        tmem_max_cols=_constant(_read(os.path.join(folder, _TCGEN05)), "TMEM_MAX_COLS"),
        reduction_scratch_bytes=_constant(core, "reduction_scratch_bytes", field=True),
    )


def _read(path: str) -> str:
    """The file's text ("" if unreadable). The files are large (parsing all four costs ~150 ms a run):
    only the lines that assign what is wanted are parsed."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return ""


def _number(node: ast.AST) -> int | None:
    """An integer constant expression (`227 * 1024`), or None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _number(node.left), _number(node.right)
        if left is not None and right is not None:
            return _ARITHMETIC[type(node.op)](left, right)
    return None


def _expression(text: str) -> int | None:
    try:
        return _number(ast.parse(text.strip(), mode="eval").body)
    except (SyntaxError, ValueError):
        return None


def _constant(text: str, name: str, field: bool = False) -> int | None:
    """`NAME = <integer expression>` at module level, or (`field`) a class's `name: int = <expression>`."""
    pattern = (rf"^[ \t]+{name}[ \t]*:[ \t]*int[ \t]*=(.+)$" if field else rf"^{name}[ \t]*=(.+)$")
    match = re.search(pattern, text, re.M)
    return _expression(match.group(1).split("#")[0]) if match else None


def _getattr_default(path: str, attribute: str) -> tuple[int | None, int | None]:
    """The default of `getattr(x, "attribute", default)` in the file, and its line."""
    text = _read(path)
    match = re.search(rf"getattr\(\s*\w+\s*,\s*[\"']{attribute}[\"']\s*,([^)]+)\)", text)
    if match is None:
        return None, None
    return _expression(match.group(1)), text.count("\n", 0, match.start()) + 1
