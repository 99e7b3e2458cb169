"""RMS normalisation kernels for every backend the library supports."""
from ._shared import Backend, NormConfig
from ._gpu import rms_norm as rms_norm_mosaic_gpu
from ._tpu import rms_norm as rms_norm_tpu

LAUNCHERS = {
    Backend.TPU: rms_norm_tpu,
    Backend.MOSAIC_GPU: rms_norm_mosaic_gpu,
}

__all__ = ["Backend", "NormConfig", "LAUNCHERS"]
