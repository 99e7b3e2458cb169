"""pytest module for the RMSNorm statistics kernel; runs it interpreted on the CPU."""
# fix-rate: kind=scratch meaning=preserving

import functools

import jax
import jax.numpy as jnp
import numpy as np

import r12_rms_ops
import r12_rms_ref


def _rows(rows=16, hidden=256):
  return (jnp.arange(rows * hidden, dtype=jnp.float32).reshape(rows, hidden) % 9) - 4


def test_mean_square_matches_reference():
  x = _rows()
  got = r12_rms_ops.mean_square(x, interpret=True)
  np.testing.assert_array_equal(np.asarray(got), np.asarray(r12_rms_ref.mean_square_ref(x)))


def test_rms_norm_close():
  x = _rows()
  w = jnp.ones((x.shape[1],), jnp.float32)
  got = r12_rms_ops.rms_norm(x, w, interpret=True)
  np.testing.assert_allclose(np.asarray(got), np.asarray(r12_rms_ref.rms_norm_ref(x, w)), rtol=1e-6)


def expected():
  return np.asarray(r12_rms_ref.mean_square_ref(_rows()))


def target():
  return functools.partial(r12_rms_ops.mean_square, interpret=True), (_rows(),), "interpret"
