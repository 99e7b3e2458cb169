"""PAL005 semaphore-index: a shaped global semaphore signalled or waited on without a full index.

`pl.get_global(plgpu.SemaphoreType.REGULAR((n,)))` returns an array of semaphores; `pl.semaphore_signal`
and `pl.semaphore_wait` take one, `sem.at[i]` (one index per dimension). JAX checks this while tracing:
`ValueError: Cannot signal on a non-()-shaped semaphore: (2,)`, and for too many indices
``ValueError: `indices` must not be longer than `shape` ``.
"""

from __future__ import annotations

import sys

CODE = "PAL005"
NAME = "semaphore-index"
SEVERITY = "error"
SUMMARY = "signal/wait on a shaped global semaphore needs one .at[] index per dimension."


def problem(shape: tuple[int, ...], kind: str, indices: int) -> str | None:
    if indices < len(shape):
        rest = shape[indices:]
        quoted = f"ValueError: Cannot {kind} on a non-()-shaped semaphore: {rest!r}"
        index = ", ".join("ijklmn"[n % 6] for n in range(len(rest)))
        return (f'JAX: "{quoted}"; index it down to one semaphore: .at[{index}]. The semaphore has shape '
                f"{shape!r} and {indices} of its {len(shape)} dimension{'s' if len(shape) > 1 else ''} "
                f"{'are' if indices != 1 else 'is'} indexed; signal and wait act on a single semaphore.")
    if indices > len(shape):
        quoted = f"ValueError: `indices` must not be longer than `shape`: ..., shape={shape!r}"
        return (f'JAX: "{quoted}"; use {len(shape)} index{"es" if len(shape) != 1 else ""}. '
                f"The semaphore has shape {shape!r} but {indices} indices are applied.")
    return None


def check(ctx):
    rule = sys.modules[__name__]
    reported: set[int] = set()
    for kernel, site in ctx.kernels_reaching():
        memtype = site.memtype
        if memtype is None or memtype.shape is None or memtype.dtype != "semaphore":
            continue
        for use in site.uses:
            if use.kind not in ("signal", "wait") or use.indices is None or use.model is not ctx.model:
                continue
            if id(use.node) in reported:
                continue
            message = problem(memtype.shape, use.kind, use.indices)
            if message:
                reported.add(id(use.node))
                related = (ctx.related(site.model, site.call, f"the semaphore, shape {memtype.shape!r}, comes from here"),)
                yield ctx.finding(rule, use.node, message, related,
                                  facts={"kernel": kernel, "get_global": site.call, "model": site.model,
                                         "use": use, "shape": memtype.shape, "entry": kernel.entry})
