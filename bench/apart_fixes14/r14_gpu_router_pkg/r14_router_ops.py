"""Router scoring op: launch over a `plgpu.Mesh`, config per model, reference check in `__main__`."""
# fix-rate: kind=run_scoped meaning=preserving

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

from r14_router_kernel import TOKEN_AXIS, router_scores_body
from r14_router_ref import router_scores_reference


@dataclasses.dataclass(frozen=True)
class RouterConfig:
  num_experts: int = 64
  tokens: int = 16
  block: int = 256
  temperature: float = 1.0

  @property
  def flat(self) -> int:
    return self.num_experts * self.tokens


MODEL_ROUTERS = {
    "dsv3-lite": RouterConfig(),
    "moe-256e": RouterConfig(num_experts=256, tokens=4, block=512, temperature=0.7),
}


@functools.partial(jax.jit, static_argnames=("model",))
def router_scores(logits: jax.Array, bias: jax.Array, *, model: str = "dsv3-lite"):
  cfg = MODEL_ROUTERS[model]
  out = jax.ShapeDtypeStruct(logits.shape, logits.dtype)
  return pl.kernel(
      functools.partial(router_scores_body, block=cfg.block, inv_temp=1.0 / cfg.temperature),
      out_type=(out, out),
      mesh=plgpu.Mesh(grid=(cfg.flat // cfg.block,), grid_names=(TOKEN_AXIS,)),
  )(logits, bias)


def target():
  cfg = MODEL_ROUTERS["dsv3-lite"]
  arg = jax.ShapeDtypeStruct((cfg.flat,), jnp.bfloat16)
  return router_scores, (arg, arg), "cuda"


if __name__ == "__main__":
  cfg = MODEL_ROUTERS["dsv3-lite"]
  logits = jax.random.normal(jax.random.key(1), (cfg.flat,), jnp.bfloat16)
  bias = jnp.zeros_like(logits)
  got = router_scores(logits, bias)
  want = router_scores_reference(logits, bias)
  for g, w in zip(got, want):
    np.testing.assert_allclose(np.asarray(g, np.float32), np.asarray(w, np.float32), atol=1e-2)
  print("router ok")
