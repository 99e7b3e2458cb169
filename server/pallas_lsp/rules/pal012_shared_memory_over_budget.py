"""PAL012 shared-memory-over-budget: a Mosaic GPU kernel whose scratch does not fit in shared memory (or TMEM).

JAX finds out only when the kernel is lowered (on a CPU too, for cuda), often after a long trace:
`ValueError: Mosaic GPU kernel exceeds available shared memory: smem_bytes=262176 > max_smem_bytes=232448`
(jax/experimental/mosaic/gpu/core.py `_launch`), or for TMEM `ValueError: After rounding up, got 1024
columns, exceeding the limit of 512`. The figures are the kernel model's estimate
(`analysis/shared_memory.py`, JAX's resource estimator mirrored); the limit is read from the analysed jax.
Reported on each launch of the kernel in the module (on the kernel itself where it is launched elsewhere),
only where even the part known statically is over: a kernel that fits is never reported.
"""

from __future__ import annotations

import sys

from ..analysis.values import int_text

CODE = "PAL012"
NAME = "shared-memory-over-budget"
SEVERITY = "error"
SUMMARY = "A Mosaic GPU kernel's scratch exceeds the shared memory (or TMEM columns) JAX allows: it fails at lowering."

QUOTE = "Mosaic GPU kernel exceeds available shared memory"
TMEM_QUOTE = "exceeding the limit of"


def may_apply(text: str) -> bool:
    """Only Mosaic GPU scratch (`scratch_types`, `run_scoped` in a module naming Mosaic GPU) takes shared
    memory worth checking: the cheap test before building the kernel model (what the rule costs)."""
    return ("scratch_types" in text or "run_scoped" in text) and ("mosaic_gpu" in text or "plgpu" in text)


def check(ctx):
    rule = sys.modules[__name__]
    if not may_apply(ctx.model.text):
        return
    from ..analysis.kernel_model import budget_sites

    over = lambda kernel: kernel.shared_memory.exceeds or kernel.shared_memory.tmem_exceeds  # noqa: E731
    for site, kernel in budget_sites(ctx.project, ctx.model, over):
        with ctx.isolated(rule, site):
            budget = kernel.shared_memory
            message = smem_message(budget) if budget.exceeds else tmem_message(budget)
            related = () if site is kernel.entry.node else (ctx.entry_related(kernel),)
            yield ctx.finding(rule, site, message, related,
                              facts={"kernel": kernel, "entry": kernel.entry, "shared_memory": budget})


def smem_message(budget) -> str:
    over = budget.smem_bytes - budget.max_smem_bytes
    if budget.complete:
        quoted = f"{QUOTE}: smem_bytes={int_text(budget.smem_bytes)} > max_smem_bytes={budget.max_smem_bytes}"
        head = f'JAX: "{quoted}"; use {int_text(over, grouped=True)} B less.'
    else:
        quoted = f"{QUOTE}: smem_bytes=... > max_smem_bytes={budget.max_smem_bytes}"
        head = f'JAX: "{quoted}"; use {int_text(over, grouped=True)}+ B less.'
    parts = f"{budget.barriers} barrier{'s' if budget.barriers != 1 else ''}" if budget.barriers else "no barriers"
    rest = (f" The kernel's scratch needs {'at least ' if not budget.complete else ''}{int_text(budget.smem_bytes, grouped=True)} bytes of "
            f"shared memory (each buffer rounded up to a multiple of {budget.alignment:,} bytes, {parts} included), and "
            f"Hopper and Blackwell GPUs give a block {budget.max_smem_bytes:,} (`max_smem_bytes` in "
            f"{budget.limit_source}). Use fewer pipeline stages (max_concurrent_steps), smaller blocks, "
            "or reuse one buffer through pl.run_scoped in sequence (sibling run_scoped share the space).")
    if not budget.complete:
        rest += " Not known statically: " + "; ".join(budget.unknown) + "."
    return head + rest


def tmem_message(budget) -> str:
    quoted = f"After rounding up, got {int_text(budget.tmem_cols)} columns, {TMEM_QUOTE} {budget.tmem_max_cols}"
    return (f'JAX: "{quoted}"; allocate fewer TMEM columns. The kernel\'s TMEM scratch asks for '
            f"{'at least ' if not budget.complete else ''}{int_text(budget.tmem_requested_cols)} columns, which JAX rounds "
            f"up to a power of two ({int_text(budget.tmem_cols)}); a block has {budget.tmem_max_cols}.")
