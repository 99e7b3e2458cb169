"""Fused scaled residual add for Mosaic GPU (Hopper)."""

from ._config import ResidualConfig
from ._kernel import scaled_residual_add

__all__ = ["ResidualConfig", "scaled_residual_add"]
