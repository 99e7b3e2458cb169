"""More plants for bench/fix_rate_planted.py (the layout of bench/planted_kernels.py): bugs kernel authors make,
written into kernels of tpu-inference, jax's own ops, tokamax, jax-linear-attention and ejkernel not planted there.
"""

from __future__ import annotations

_SDS = "import functools, jax, jax.numpy as jnp\nS = jax.ShapeDtypeStruct\n"

# tpu-inference's __init__ reads the host's TPU info (it imports requests) and its logger is vllm's (neither is
# installed here): its kernels are imported with the package registered by its path alone, logging to Python's.
# It asks jax.devices() for the TPU's generation: the driver says v5 (what the abstract TPU is).
_TPU_INFERENCE = _SDS + """
import sys, types
sys.modules["tpu_inference"] = types.ModuleType("tpu_inference")
sys.modules["tpu_inference"].__path__ = ["tpu_inference"]
import logging
sys.modules["tpu_inference.logger"] = types.ModuleType("tpu_inference.logger")
sys.modules["tpu_inference.logger"].init_logger = logging.getLogger
"""
_RPA_V3 = _TPU_INFERENCE + """
from tpu_inference.kernels.ragged_paged_attention.v3 import kernel as m
m.get_tpu_version = lambda: 5
fn = functools.partial(m.ragged_paged_attention, d_block_sizes=(8, 32, 8, 32), p_block_sizes=(8, 32, 8, 32),
                       m_block_sizes=(8, 32, 8, 32), vmem_limit_bytes=64 * 1024 * 1024)
args = (S((64, 8, 128), jnp.bfloat16), S((64, 2, 128), jnp.bfloat16), S((64, 2, 128), jnp.bfloat16),
        S(m.get_kv_cache_shape(64, 16, 2, 128, jnp.bfloat16), jnp.bfloat16), S((4,), jnp.int32),
        S((4 * 16,), jnp.int32), S((5,), jnp.int32), S((3,), jnp.int32))
"""
_RPA_V3_FILE = "tpu_inference/kernels/ragged_paged_attention/v3/kernel.py"

_QMM = _TPU_INFERENCE + """
from tpu_inference.kernels.quantized_matmul import kernel as m, tuned_block_sizes as t
t.get_tpu_version = lambda: 6  # the generation its VMEM table knows
fn = functools.partial(m.quantized_matmul_kernel,
                       tuned_value=t.TunedValue(batch_block_size=128, out_block_size=256, in_block_size=256))
args = (S((256, 512), jnp.bfloat16), S((512, 512), jnp.int8), S((512,), jnp.float32))
"""

_CAUSAL_CONV1D = _TPU_INFERENCE + """
from tpu_inference.kernels.causal_conv1d import causal_conv1d as m
fn = functools.partial(m.ragged_causal_conv1d, kernel_size=4)
args = (S((128, 256), jnp.bfloat16), S((5, 3, 256), jnp.bfloat16), S((256, 1, 4), jnp.bfloat16),
        S((256,), jnp.bfloat16),
        S((5,), jnp.int32), S((4,), jnp.int32), S((3,), jnp.int32), S((4,), jnp.bool_))
"""
_CAUSAL_CONV1D_FILE = "tpu_inference/kernels/causal_conv1d/causal_conv1d.py"

_FLASH_TPU = _SDS + """
import flash_attention as m
fn = functools.partial(m.flash_attention, causal=True, block_sizes=m.BlockSizes(
    block_q=128, block_k_major=128, block_k=128, block_b=1, block_q_major_dkv=128, block_k_major_dkv=128,
    block_k_dkv=128, block_q_dkv=128, block_k_major_dq=128, block_k_dq=128, block_q_dq=128))
args = (S((1, 2, 256, 128), jnp.float32), S((1, 2, 256, 128), jnp.float32), S((1, 2, 256, 128), jnp.float32))
"""

_RAGGED_DOT_MGPU = _SDS + """
import ragged_dot_mgpu as m
fn = lambda lhs, rhs, group_sizes: m.ragged_dot(lhs, rhs, group_sizes=group_sizes, block_m=64, block_n=128,
                                                block_k=64, max_concurrent_steps=2, grid_block_n=1)
args = (S((512, 256), jnp.bfloat16), S((4, 256, 256), jnp.bfloat16), S((4,), jnp.int32))
"""

_FLASH_TPU_GRAD = _FLASH_TPU + """
attention = fn
fn = jax.grad(lambda q, k, v: attention(q, k, v).sum(), argnums=(0, 1, 2))
"""

_TOKAMAX_GLU_SM90 = _SDS + """
import types
import tokamax._src.ops.gated_linear_unit.pallas_mosaic_gpu_kernel_sm90 as m
from tokamax._src.ops.gated_linear_unit import pallas_mosaic_gpu_common as common
m.backend = types.SimpleNamespace(get_default_device=lambda: types.SimpleNamespace(core_count=132))  # a CPU has none
fn = functools.partial(m.gated_linear_unit, activation=jax.nn.silu,
                       config=common.Config(tile_m=128, tile_n=128, tile_k=64, num_stages=2))
args = (S((256, 256), jnp.bfloat16), S((256, 2, 256), jnp.bfloat16))
"""

_TOKAMAX_RAGGED_DOT_SM90 = _SDS + """
import tokamax._src.ops.ragged_dot.pallas_mosaic_gpu_kernel_sm90 as m
from tokamax._src.ops.ragged_dot import pallas_mosaic_gpu_common as common
fn = functools.partial(m.ragged_dot_kernel, out_dtype=jnp.dtype(jnp.bfloat16), config=common.Config(
    block_m=64, block_n=128, block_k=64, num_stages=2, split_k=1, persistent=False))
args = (S((512, 256), jnp.bfloat16), S((4, 256, 256), jnp.bfloat16), S((4,), jnp.int32))
"""

_TOKAMAX_ATTENTION_SM90 = _SDS + """
import tokamax._src.ops.attention.pallas_mosaic_gpu_kernel_sm90 as m
fn = lambda q, k, v: m.flash_attention_kernel(
    q, k, v, None, None, None, None, is_causal=False, logits_soft_cap=None, logits_scale=1.0,
    out_dtype=jnp.dtype(jnp.bfloat16), normalize_output=True, return_residuals=False, use_stable_softmax=True,
    rescale_threshold=8.0, config=m.Config(block_q=64, block_kv=64, num_stages=2))
args = (S((256, 2, 128), jnp.bfloat16), S((256, 2, 128), jnp.bfloat16), S((256, 2, 128), jnp.bfloat16))
"""

# ejkernel's package __init__s import every kernel family and their dependencies (beartype, triton, ...): the
# packages on the way to the kernel are registered by their paths alone.
_EJKERNEL_CE = _SDS + """
import importlib, sys, types
for name in ("ejkernel", "ejkernel.kernels", "ejkernel.kernels._xla", "ejkernel.kernels._xla.fused_cross_entropy",
             "ejkernel.kernels._pallas", "ejkernel.kernels._pallas.tpu",
             "ejkernel.kernels._pallas.tpu.fused_cross_entropy"):
    sys.modules[name] = types.ModuleType(name)
    sys.modules[name].__path__ = [name.replace(".", "/")]
m = importlib.import_module("ejkernel.kernels._pallas.tpu.fused_cross_entropy._pallas_impl_fwd")
fn = functools.partial(m._ce_fwd_pallas, ignore_index=-100, label_smoothing=0.1, z_loss=0.0, block_v=512, block_m=128)
args = (S((256, 2048), jnp.float32), S((256,), jnp.int32), S((256,), jnp.float32))
"""
_EJKERNEL_CE_FILE = "ejkernel/kernels/_pallas/tpu/fused_cross_entropy/_pallas_impl_fwd.py"
# The forward kernel's semaphore (the vocab-parallel stats kernel has the same scratch, and four outputs).
_EJKERNEL_CE_SEM = ("                pltpu.SemaphoreType.{}((1,)),\n            ],\n"
                    "            grid=(n_rows_pad // int(block_m),),\n        ),\n"
                    "        compiler_params=pltpu.CompilerParams(dimension_semantics=(\"parallel\",)),\n"
                    "        out_shape=[\n            jax.ShapeDtypeStruct((n_rows_pad,), jnp.float32),\n"
                    "            jax.ShapeDtypeStruct((n_rows_pad,), jnp.float32),\n        ],\n")

MORE_PLANTS = [
    {"name": "ejkernel fused_cross_entropy: the copy helper passes the semaphore array whole (no .at[0])",
     "kind": "index", "package": "ejkernel-0.0.80.3", "file": _EJKERNEL_CE_FILE, "platform": "tpu",
     "replace": [("        dst_ref=dst_ref.at[pl.ds(0, block_m), pl.ds(0, size)],\n        sem=sem_ref.at[0],\n",
                  "        dst_ref=dst_ref.at[pl.ds(0, block_m), pl.ds(0, size)],\n        sem=sem_ref,\n")],
     "driver": _EJKERNEL_CE},
    {"name": "ejkernel fused_cross_entropy: REGULAR semaphores for the HBM-to-VMEM copies",
     "kind": "regular_semaphore", "package": "ejkernel-0.0.80.3", "file": _EJKERNEL_CE_FILE, "platform": "tpu",
     "replace": [(_EJKERNEL_CE_SEM.format("DMA"), _EJKERNEL_CE_SEM.format("REGULAR"))],
     "driver": _EJKERNEL_CE},
    {"name": "ejkernel fused_cross_entropy: DMA semaphore from get_global, not the grid spec's scratch",
     "kind": "scratch_grid_spec", "package": "ejkernel-0.0.80.3", "file": _EJKERNEL_CE_FILE, "platform": "tpu",
     "replace": [(_EJKERNEL_CE_SEM.format("DMA"), _EJKERNEL_CE_SEM.format("DMA").split("\n", 1)[1]),
                 ("    weight_ref,\n    dma_sem_ref,\n    *,\n    ignore_index: int,\n    label_smoothing",
                  "    weight_ref,\n    *,\n    ignore_index: int,\n    label_smoothing"),
                 ("    row_start = pl.program_id(0) * block_m\n    _, vocab_size = logits_ref.shape\n"
                  "    offsets = jnp.arange(block_v)\n",
                  "    dma_sem_ref = pl.get_global(pltpu.SemaphoreType.DMA((1,)))\n"
                  "    row_start = pl.program_id(0) * block_m\n    _, vocab_size = logits_ref.shape\n"
                  "    offsets = jnp.arange(block_v)\n")],
     "driver": _EJKERNEL_CE},
    {"name": "tpu-inference rpa v3: REGULAR semaphores for the double-buffer DMAs", "kind": "regular_semaphore",
     "package": "tpu-inference-0.32.0", "file": _RPA_V3_FILE, "platform": "tpu", "auto_axes": True,
     "replace": [("            pltpu.SemaphoreType.DMA((4, 2)),\n",
                  "            pltpu.SemaphoreType.REGULAR((4, 2)),\n")],
     "driver": _RPA_V3},
    {"name": "tpu-inference rpa v3: the KV fetch's semaphore array passed whole (no .at[i, j])", "kind": "index",
     "package": "tpu-inference-0.32.0", "file": _RPA_V3_FILE, "platform": "tpu", "auto_axes": True,
     "replace": [("        sem = sems.at[0, bkv_sem_idx]\n", "        sem = sems\n")],
     "driver": _RPA_V3},
    {"name": "tpu-inference rpa v3: DMA semaphores from get_global in the per-sequence helper, not the grid spec",
     "kind": "scratch_grid_spec", "package": "tpu-inference-0.32.0", "file": _RPA_V3_FILE, "platform": "tpu",
     "auto_axes": True,
     "replace": [("            # Semaphores for double buffering of bkv, bq, bo and bkv_update.\n"
                  "            pltpu.SemaphoreType.DMA((4, 2)),\n", ""),
                 ("    sems,  # [4, 2]\n    l_ref,", "    l_ref,"),
                 ("    assert q_hbm_ref.shape == o_hbm_ref.shape\n",
                  "    assert q_hbm_ref.shape == o_hbm_ref.shape\n"
                  "    sems = pl.get_global(pltpu.SemaphoreType.DMA((4, 2)))\n")],
     "driver": _RPA_V3},
    {"name": "tpu-inference quantized_matmul: accumulator VMEM from get_global, not the grid spec's scratch",
     "kind": "scratch_grid_spec", "package": "tpu-inference-0.32.0",
     "file": "tpu_inference/kernels/quantized_matmul/kernel.py", "platform": "tpu",
     "replace": [("                (pltpu.VMEM((batch_block_size, out_block_size), acc_dtype)\n"
                  "                 if save_acc else None),  # acc_scratch\n", ""),
                 ("    out_ref: jax.Array,  # (batch_block_size, out_block_size)\n"
                  "    acc_scratch: jax.Array,  # (batch_block_size, out_block_size)\n",
                  "    out_ref: jax.Array,  # (batch_block_size, out_block_size)\n"),
                 ("    if save_acc:\n        assert acc_scratch is not None\n",
                  "    if save_acc:\n        acc_scratch = pl.get_global(pltpu.VMEM(out_ref.shape, jnp.float32))\n"),
                 ("    else:\n        assert acc_scratch is None\n", "    else:\n        acc_scratch = None\n")],
     "driver": _QMM},
    {"name": "tpu-inference causal_conv1d: the tile loop's receive semaphore is the whole array (no .at[0])",
     "kind": "index", "package": "tpu-inference-0.32.0", "file": _CAUSAL_CONV1D_FILE, "platform": "tpu",
     "replace": [("    next_b_start = b_start + cfgs.tile_size\n\n    recv_sem = sem_ref.at[0]\n",
                  "    next_b_start = b_start + cfgs.tile_size\n\n    recv_sem = sem_ref\n")],
     "driver": _CAUSAL_CONV1D},
    {"name": "tpu-inference causal_conv1d: DMA semaphores from get_global in the kernel, not scratch_shapes",
     "kind": "scratch", "package": "tpu-inference-0.32.0", "file": _CAUSAL_CONV1D_FILE, "platform": "tpu",
     "replace": [("            pltpu.SemaphoreType.DMA((2, )),\n        ),\n", "        ),\n"),
                 ("    prev_x_scratch_ref: jax.Array,\n    sem_ref: jax.Array,\n    *,\n",
                  "    prev_x_scratch_ref: jax.Array,\n    *,\n"),
                 ("    del x_out_ref, conv_state_out_ref\n",
                  "    del x_out_ref, conv_state_out_ref\n"
                  "    sem_ref = pl.get_global(pltpu.SemaphoreType.DMA((2, )))\n")],
     "driver": _CAUSAL_CONV1D},
    {"name": "jax tpu flash_attention: the accumulator VMEM from get_global, not the grid spec's scratch",
     "kind": "scratch_grid_spec", "package": "jax", "file": "jax/experimental/pallas/ops/tpu/flash_attention.py",
     "platform": "tpu",
     "replace": [("    scratch_shapes = [m_scratch, l_scratch, acc_scratch]\n",
                  "    scratch_shapes = [m_scratch, l_scratch]\n"),
                 ("    l_scratch_ref,\n    acc_scratch_ref,\n    *,\n    causal,\n    sm_scale,\n    block_k,\n"
                  "    kv_seq_len,\n    mask_value,\n):\n",
                  "    l_scratch_ref,\n    *,\n    causal,\n    sm_scale,\n    block_k,\n    kv_seq_len,\n"
                  "    mask_value,\n):\n"
                  "  acc_scratch_ref = pl.get_global(pltpu.VMEM(o_tile_ref.shape, jnp.float32))\n")],
     "driver": _FLASH_TPU},
    {"name": "jax tpu flash_attention backward: dK/dV accumulators from get_global, not scratch_shapes",
     "kind": "scratch_grid_spec", "package": "jax", "file": "jax/experimental/pallas/ops/tpu/flash_attention.py",
     "platform": "tpu",
     "replace": [("  scratch_shapes = [\n      pltpu.VMEM((block_k_major, head_dim), jnp.float32),\n"
                  "      pltpu.VMEM((block_k_major, head_dim), jnp.float32),\n  ]\n", "  scratch_shapes = []\n"),
                 ("    dv_tile_ref,\n    dk_scratch_ref,\n    dv_scratch_ref,\n    *,\n",
                  "    dv_tile_ref,\n    *,\n"),
                 ("  _, _, block_k_major, _ = k_tile_ref.shape\n\n  q_seq_index = pl.program_id(axis=3)\n",
                  "  _, _, block_k_major, _ = k_tile_ref.shape\n"
                  "  dk_scratch_ref = pl.get_global(pltpu.VMEM(k_tile_ref.shape[2:], jnp.float32))\n"
                  "  dv_scratch_ref = pl.get_global(pltpu.VMEM(v_tile_ref.shape[2:], jnp.float32))\n\n"
                  "  q_seq_index = pl.program_id(axis=3)\n")],
     "driver": _FLASH_TPU_GRAD},
    {"name": "tokamax gated_linear_unit sm90: the epilogue's SMEM slots from get_global, not scratch_types",
     "kind": "scratch", "package": "tokamax-0.0.17",
     "file": "tokamax/_src/ops/gated_linear_unit/pallas_mosaic_gpu_kernel_sm90.py", "platform": "cuda",
     "replace": [("  def kernel(a_gmem, b_gmem, out_gmem, out_smem):\n",
                  "  def kernel(a_gmem, b_gmem, out_gmem):\n"
                  "    out_smem = pl.get_global(plgpu.SMEM((2, num_out_slots, epi_tile_m, epi_tile_n), dtype,\n"
                  "                                        transforms=out_transforms))\n"),
                 ("  scratch_shapes = [\n      plgpu.SMEM(\n          (2, num_out_slots, epi_tile_m, epi_tile_n),\n"
                  "          dtype,\n          transforms=out_transforms,\n      ),\n  ]\n", ""),
                 ("      thread_name=\"wg\",\n      scratch_types=scratch_shapes,\n  )\n",
                  "      thread_name=\"wg\",\n  )\n")],
     "driver": _TOKAMAX_GLU_SM90},
    {"name": "tokamax ragged_dot sm90: the epilogue's SMEM tile from get_global, not run_scoped",
     "kind": "run_scoped", "package": "tokamax-0.0.17",
     "file": "tokamax/_src/ops/ragged_dot/pallas_mosaic_gpu_kernel_sm90.py", "platform": "cuda",
     "replace": [("        @functools.partial(pl.run_scoped, o_smem=o_smem_type)\n        def epilogue(o_smem):\n",
                  "        o_smem = pl.get_global(o_smem_type)\n\n        def epilogue():\n"),
                 ("              max_rows=min(block_m, m),\n          )\n\n    if config.persistent:\n",
                  "              max_rows=min(block_m, m),\n          )\n\n        epilogue()\n\n"
                  "    if config.persistent:\n")],
     "driver": _TOKAMAX_RAGGED_DOT_SM90},
    {"name": "tokamax attention sm90: the Q copy's barrier from get_global, not the scratch dict",
     "kind": "barrier_scratch", "package": "tokamax-0.0.17",
     "file": "tokamax/_src/ops/attention/pallas_mosaic_gpu_kernel_sm90.py", "platform": "cuda",
     "replace": [("      q_produced=plgpu.Barrier(),\n", ""),
                 ("      mask_smem=None,\n      q_produced,\n      k_bias_produced,\n",
                  "      mask_smem=None,\n      k_bias_produced,\n"),
                 ("    wg = lax.axis_index(\"wg\")\n\n    if config.persistent:\n",
                  "    wg = lax.axis_index(\"wg\")\n    q_produced = pl.get_global(plgpu.Barrier())\n\n"
                  "    if config.persistent:\n")],
     "driver": _TOKAMAX_ATTENTION_SM90},
    {"name": "jax ragged_dot_mgpu: the store tile from get_global in the loop body, not run_scoped",
     "kind": "run_scoped", "package": "jax", "file": "jax/experimental/pallas/ops/gpu/ragged_dot_mgpu.py",
     "platform": "cuda",
     "replace": [("      @functools.partial(\n          pl.run_scoped,\n"
                  "          o_smem=plgpu.SMEM((block_m, block_n), dtype=o_gmem.dtype)\n      )\n"
                  "      def store_scope(o_smem):\n",
                  "      o_smem = pl.get_global(plgpu.SMEM((block_m, block_n), dtype=o_gmem.dtype))\n\n"
                  "      def store_scope():\n"),
                 ("        plgpu.wait_smem_to_gmem(0, wait_read_only=True)\n\n  # There are 132 SMs",
                  "        plgpu.wait_smem_to_gmem(0, wait_read_only=True)\n\n      store_scope()\n\n"
                  "  # There are 132 SMs")],
     "driver": _RAGGED_DOT_MGPU},
    {"name": "jax ragged_dot_mgpu: the wgmma accumulator from get_global, not run_scoped", "kind": "run_scoped",
     "package": "jax", "file": "jax/experimental/pallas/ops/gpu/ragged_dot_mgpu.py", "platform": "cuda",
     "replace": [("      acc = pl.run_scoped(acc_scope, plgpu.ACC((block_m, block_n)))\n",
                  "      acc = acc_scope(pl.get_global(plgpu.ACC((block_m, block_n))))\n")],
     "driver": _RAGGED_DOT_MGPU},
]
