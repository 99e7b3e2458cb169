"""PAL100 jax-error: JAX itself rejected a launch that one of the project's entry points reached.

Nothing here reads the source: the findings come from running the entry points (tests, `__main__`
blocks, annotated functions) with every launch traced and lowered by real JAX instead of run
(`pallas-lsp check --trace`, trace/entry_points.py). The rule exists so that the code can be
selected, ignored, silenced with `# noqa: PAL100` and documented like any other.
"""

from __future__ import annotations

CODE = "PAL100"
NAME = "jax-error"
SEVERITY = "error"
SUMMARY = "JAX rejected a kernel launch that an entry point of the project reached (check --trace)."
STATIC = False  # reported by JAX on a run, never by reading the source


def check(ctx):
    return ()
