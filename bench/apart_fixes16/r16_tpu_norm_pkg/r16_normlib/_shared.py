"""Config and math shared by the TPU and Mosaic GPU RMS norm kernels."""
import dataclasses
import enum

import jax.numpy as jnp


class Backend(enum.Enum):
  TPU = "tpu"
  MOSAIC_GPU = "mosaic_gpu"


@dataclasses.dataclass(frozen=True)
class NormConfig:
  eps: float = 1e-6
  block_rows: int = 8
  dtype: str = "bfloat16"


def normalize(x32, sq_mean, w, eps):
  return x32 * jnp.reciprocal(jnp.sqrt(sq_mean + eps)) * w.astype(jnp.float32)
