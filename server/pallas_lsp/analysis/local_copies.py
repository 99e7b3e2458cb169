"""A local TPU copy's send semaphore where Mosaic TPU lowers it for the TensorCore (PAL017, and the advice of the
rules that report that semaphore first).

A copy on one device (`pltpu.make_async_copy` / `pltpu.async_copy`: no device_id) has no source semaphore on
the TensorCore: jax 0.12 refuses `src_sem=` as it lowers the copy (jax 0.11 has no `src_sem`).
"""

from __future__ import annotations

import ast

from .jax_version import jax_version
from .kernel_model import TPU_TC
from .values import Const

LOCAL_COPIES = ("pltpu.make_async_copy", "pltpu.async_copy")


def local_src_sem(project, copy) -> ast.expr | None:
    """The `src_sem=` argument of a local copy, None where there is none (or it is None)."""
    callee = project.evaluator.value(copy.model, copy.call.func)
    if getattr(callee, "name", None) not in LOCAL_COPIES:
        return None
    node = next((k.value for k in copy.call.keywords if k.arg == "src_sem"), None)
    if node is None:
        return None
    value = project.evaluator.value(copy.model, node)
    return None if isinstance(value, Const) and value.value is None else node


def refuses_local_src_sem(project, kernel) -> bool:
    """Whether the kernel's local copies may not take `src_sem=`: Mosaic TPU lowers it for the TensorCore, with a
    jax that has the check (0.12; an unknown version is taken as the newest)."""
    version = jax_version(project)
    return kernel.backend == TPU_TC and (version is None or version >= (0, 12))
