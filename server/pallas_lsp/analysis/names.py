"""Canonical names for the JAX objects the rules care about.

Jedi reports public modules by their public path (`jax.experimental.pallas.mosaic_gpu`) but
functions and classes by where they are defined (`jax._src.pallas.mosaic_gpu.core.kernel`), and the
import fallback sees whatever path the user wrote. Everything is mapped to one short spelling
(`plgpu.kernel`, `pl.get_global`) so rules compare strings, never guess from bare names.
"""

from __future__ import annotations

# Longest prefix first. Private jax modules map by family: everything the Pallas Mosaic GPU backend
# defines is `plgpu.*`, the TPU backend `pltpu.*`, the rest of Pallas `pl.*`.
_PREFIXES: tuple[tuple[str, str], ...] = (
    # Submodules reached as attributes of an already shortened `pl` (`jax.experimental.pallas.mosaic_gpu.kernel`
    # is evaluated one attribute at a time: `jax.experimental.pallas` becomes `pl` before `.mosaic_gpu`).
    ("pl.mosaic_gpu", "plgpu"),
    ("pl.tpu", "pltpu"),
    ("pl.triton", "pltriton"),
    ("jax.experimental.pallas.mosaic_gpu", "plgpu"),
    ("jax.experimental.pallas.tpu", "pltpu"),
    ("jax.experimental.pallas.triton", "pltriton"),
    ("jax.experimental.pallas", "pl"),
    ("jax._src.pallas.mosaic_gpu", "plgpu"),
    ("jax._src.pallas.mosaic", "pltpu"),
    ("jax._src.pallas.triton", "pltriton"),
    ("jax._src.pallas", "pl"),
    ("jax.numpy", "jnp"),
    ("jax._src.numpy", "jnp"),
    ("jax.lax", "lax"),
    ("jax._src.lax", "lax"),
    ("jax._src", "jax"),
    ("jax", "jax"),
    ("numpy", "np"),
    ("functools", "functools"),
)

# Objects reachable under two spellings.
_ALIASES = {
    "pl.MemorySpace.ANY": "pl.ANY",
    "pltpu.MemorySpace.ANY": "pl.ANY",
    "pltpu.ANY": "pl.ANY",
    "pltpu.MemorySpace.VMEM": "pltpu.VMEM",
    "pltpu.MemorySpace.SMEM": "pltpu.SMEM",
    "pltpu.MemorySpace.HBM": "pltpu.HBM",
    "pltpu.MemorySpace.VMEM_SHARED": "pltpu.VMEM_SHARED",
    "plgpu.MemorySpace.GMEM": "plgpu.GMEM",
    "plgpu.MemorySpace.SMEM": "plgpu.SMEM",
    "plgpu.MemorySpace.TMEM": "plgpu.TMEM",
    "plgpu.pallas_call": "pl.pallas_call",
    "pl.pallas_call.pallas_call": "pl.pallas_call",
    "pl.primitives.get_global": "pl.get_global",
    "pl.primitives.run_scoped": "pl.run_scoped",
    "pl.helpers.when": "pl.when",
    "pl.helpers.loop": "pl.loop",
    "pl.core.core_map": "pl.core_map",
    "pl.core.kernel": "pl.kernel",
    "plgpu.core.kernel": "plgpu.kernel",
    "plgpu.ACC": "plgpu.WGMMAAccumulatorRef",  # `from ...core import WGMMAAccumulatorRef as ACC`
    "jax.numpy": "jnp",
    "jax.lax": "lax",
    "jax.experimental.pallas": "pl",
    "jax.api.ShapeDtypeStruct": "jax.ShapeDtypeStruct",
    "jax.core.ShapeDtypeStruct": "jax.ShapeDtypeStruct",
    "lax.control_flow.loops.fori_loop": "lax.fori_loop",
    "lax.control_flow.loops.while_loop": "lax.while_loop",
    "lax.control_flow.loops.scan": "lax.scan",
}

def canonical(dotted: str, private_module: str | None = None) -> str:
    """Shorten a fully qualified name to the project's canonical spelling.

    `private_module` is the defining module when jedi resolved into `jax._src`; it is dropped so
    that `jax._src.pallas.primitives.get_global` becomes `pl.get_global`.
    """
    if private_module and dotted.startswith(private_module + ".") and private_module.startswith("jax._src"):
        family = next(short for prefix, short in _PREFIXES if private_module == prefix or private_module.startswith(prefix + "."))
        dotted = family + dotted[len(private_module):]
        return _ALIASES.get(dotted, dotted)
    for prefix, short in _PREFIXES:
        if dotted == prefix or dotted.startswith(prefix + "."):
            dotted = short + dotted[len(prefix):]
            break
    return _ALIASES.get(dotted, dotted)


def is_jax_module(module: str) -> bool:
    return module == "jax" or module.startswith("jax.")
