"""Pooling kernels (TPU Pallas)."""
from ._pool import mean_pool_rows, POOL

__all__ = ["mean_pool_rows", "POOL"]
