"""Kernel library: one launcher per (op, backend), looked up by `get_launcher`."""
from ._registry import Backend, get_launcher
from . import _mgpu  # noqa: F401  (registers the Mosaic GPU launchers)
from . import _xla  # noqa: F401  (registers the reference launchers)

__all__ = ["Backend", "get_launcher"]
