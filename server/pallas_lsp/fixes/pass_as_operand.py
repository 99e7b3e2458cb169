"""Fix: pass a global array to a `plgpu.kernel` / `pl.kernel` kernel as an operand.

These kernels have no `in_specs`: operands arrive as GMEM refs, inputs first in the body's
parameters. Same rewrite as `pass_as_input` otherwise (the new operand is `jnp.zeros(...)`).
"""

from __future__ import annotations

from .pass_as_input import KERNELS, move_to_launch


def fix(project, model, call, value, code: str):
    return move_to_launch(project, model, call, value, KERNELS,
                          f"pallas-lsp ({code}): Pass {{name}} as a kernel operand")
