"""A small kernel registry: (name, platform, backend) -> implementation."""

from __future__ import annotations

import enum
from typing import Callable


class Platform(enum.Enum):
  PALLAS = "pallas"
  XLA = "xla"


class Backend(enum.Enum):
  GPU = "gpu"
  TPU = "tpu"
  ANY = "any"


class KernelRegistry:
  def __init__(self):
    self._impls: dict[tuple[str, Platform, Backend], Callable] = {}

  def register(self, name: str, platform: Platform, backend: Backend):
    def decorate(fn: Callable) -> Callable:
      self._impls[(name, platform, backend)] = fn
      return fn

    return decorate

  def get(self, name: str, platform: Platform, backend: Backend) -> Callable:
    try:
      return self._impls[(name, platform, backend)]
    except KeyError:
      return self._impls[(name, Platform.XLA, Backend.ANY)]


kernel_registry = KernelRegistry()
