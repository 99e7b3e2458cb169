"""The Mosaic GPU barriers (`plgpu.Barrier`, `plgpu.ClusterBarrier`) a kernel body holds, with their uses.

A barrier is no semaphore: `pl.semaphore_wait` / `pl.semaphore_signal` refuse it while tracing (jax 0.12:
"Must wait semaphores of the following types: {...}. Got barrier."). The kernel model keeps semaphores only
(`KernelModel.semaphores`); the rules about signal and wait ask here for the barriers of `scratch_types` and of
`pl.run_scoped` in this module.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .evaluate import as_memtype
from .kernels import pallas_calls, unwrap_function
from .result_uses import Use, parameter_uses
from .values import MemType

if TYPE_CHECKING:
    from .kernel_model import KernelModel
    from .model import ModuleModel

BARRIER_DTYPES = ("barrier", "cluster_barrier")


@dataclass(frozen=True)
class BarrierRef:
    """A barrier parameter of a kernel body (scratch) or of a `pl.run_scoped` body: `origin` says which."""

    model: "ModuleModel"
    node: ast.arg
    shape: tuple[int, ...]
    dtype: str
    origin: str
    uses: tuple[Use, ...]


def kernel_barriers(project, kernel: "KernelModel") -> list[BarrierRef]:
    """The barriers of the kernel's scratch (its body's parameters)."""
    from .kernel_args import kernel_parameters

    body = kernel.entry.body
    if body is None:
        return []
    return [BarrierRef(body.model, p.node, p.shape, p.dtype, p.origin, tuple(parameter_uses(project, body, p.node)))
            for p in kernel_parameters(project, kernel.entry) if p.dtype in BARRIER_DTYPES and p.shape is not None]


def run_scoped_barriers(project, model: "ModuleModel") -> list[BarrierRef]:
    """The barriers `pl.run_scoped(body, *types, **types)` calls of `model` give their bodies."""
    found = []
    for call in pallas_calls(project, model, "pl.run_scoped"):
        body = unwrap_function(project.evaluator.value(model, call.args[0])) if call.args else None
        if body is None or isinstance(body.node, ast.Lambda) or any(isinstance(a, ast.Starred) for a in call.args):
            continue
        spec = body.node.args
        pairs = list(zip([*spec.posonlyargs, *spec.args], call.args[1:]))
        named = {p.arg: p for p in [*spec.args, *spec.kwonlyargs]}
        pairs += [(named[k.arg], k.value) for k in call.keywords if k.arg in named]
        for param, type_node in pairs:
            memtype = as_memtype(project.evaluator.value(model, type_node))
            if isinstance(memtype, MemType) and memtype.dtype in BARRIER_DTYPES and memtype.shape is not None:
                found.append(BarrierRef(body.model, param, memtype.shape, memtype.dtype, "pl.run_scoped",
                                        tuple(parameter_uses(project, body, param))))
    return found
