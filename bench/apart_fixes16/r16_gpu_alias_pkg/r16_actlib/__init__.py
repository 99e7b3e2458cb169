"""Activation kernels, one module per op; import from the package."""
from .softcap import softcap
from .common import BLOCK_ROWS

__all__ = ["softcap", "BLOCK_ROWS"]
