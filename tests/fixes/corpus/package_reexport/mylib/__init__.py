"""The kernel library re-exports its types."""
from .types import STAGING

__all__ = ["STAGING"]
