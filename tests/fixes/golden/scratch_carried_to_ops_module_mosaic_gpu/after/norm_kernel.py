"""Mosaic GPU kernel module: a row-scaling body whose staging tile is shaped by the config it is given."""
import dataclasses


LANES = 128


@dataclasses.dataclass(frozen=True)
class TileConfig:
  rows: int
  scale: float = 2.0


def scale_body(x_gmem, o_gmem, staged, *, cfg: TileConfig):
  staged[...] = x_gmem[...] * cfg.scale
  o_gmem[...] = staged[...]
