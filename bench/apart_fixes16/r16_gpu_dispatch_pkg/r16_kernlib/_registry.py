"""The dispatch table from (op, backend) to launcher."""
import enum
from typing import Callable


class Backend(enum.Enum):
  XLA = "xla"
  MOSAIC_GPU = "mosaic_gpu"


_LAUNCHERS: dict[tuple[str, Backend], Callable] = {}


def register(op: str, backend: Backend):
  def wrap(fn):
    _LAUNCHERS[(op, backend)] = fn
    return fn
  return wrap


def get_launcher(op: str, backend: Backend) -> Callable:
  return _LAUNCHERS[(op, backend)]
