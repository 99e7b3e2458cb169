"""The JAX baseline: how long real JAX takes to report one bad get_global (fresh process, `import jax` + lowering).

    .venvs/jax/bin/python bench/jax_discover_error.py

Imports only the standard library and jax. Cross-lowers a plgpu.kernel whose body calls
`pl.get_global(plgpu.SMEM(...))` for CUDA on the CPU (no GPU needed), expects JAX's
`get_global only supports semaphores` error, and prints one JSON line: the seconds spent in
`import jax` and in trace + lower, and the error JAX raised.
"""

import json
import time

started = time.perf_counter()
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental import pallas as pl  # noqa: E402
from jax.experimental.pallas import mosaic_gpu as plgpu  # noqa: E402

imported = time.perf_counter()
X = jax.ShapeDtypeStruct((128,), jnp.float32)


def body(x_ref, o_ref):
    scratch = pl.get_global(plgpu.SMEM((128,), jnp.float32))
    o_ref[...] = x_ref[...] + scratch[...]


error = None
try:
    jax.jit(plgpu.kernel(body, out_type=X)).trace(X).lower(lowering_platforms=("cuda",))
except Exception as exc:  # the error is the point: JAX found the bug
    error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
lowered = time.perf_counter()
print(json.dumps({"import_s": imported - started, "lower_s": lowered - imported, "total_s": lowered - started,
                  "error": error, "found": bool(error and "get_global only supports semaphores" in error)}))
