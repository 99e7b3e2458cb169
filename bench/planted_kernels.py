"""The plants of bench/fix_rate_planted.py: a bug written into a real kernel of a pinned package, and a driver.

Each plant: `package` (a folder of bench/real_code.py's cache, or "jax" for jax's own ops in the analysed
environment, whose file is copied alone to the top of the path and imported by its file name), `file` (inside
the package), `platform` ("cuda": Mosaic GPU lowered for CUDA; "tpu": Mosaic TPU lowered for TPU under an
abstract TPU v5 lite), `replace` (text replacements that plant the bug, each of a text found once) and `driver`
(Python that sets `fn` and `args`: the kernel's own entry point and abstract arguments); `abstract_gpu`: traced
under an abstract H100 (a kernel that sizes its grid by the abstract mesh's core count); `beside`: libraries of
the runtime (bench/real_library_types.py's) copied beside the package, analysed with it (maxtext launches its kernels
through qwix's `pallas_call`); `auto_axes`: the abstract TPU mesh's axis is Auto, not Explicit (with an Explicit axis
JAX 0.12 gives a reshaped HBM ref a sharding of the wrong rank).
"""

from __future__ import annotations

# A CPU has no core_count: the kernels size their grid by the GPU's, so the driver gives them an H100's.
_FAKE_DEVICE = ("import types\n"
                "DEVICE = types.SimpleNamespace(get_default_device=lambda: types.SimpleNamespace(core_count=132))\n")
_SDS = "import functools, jax, jax.numpy as jnp\nS = jax.ShapeDtypeStruct\n"

_PROJ_AND_SAVE_STATE = _SDS + """
from tokamax._src.ops.proj_and_save_state import pallas_mosaic_tpu_kernel as m
fn = functools.partial(m.proj_and_save_state, compress_ratio=4)
args = (S((16, 512), jnp.bfloat16), S((512, 1024), jnp.bfloat16), S((4, 512), jnp.float32), S((16,), jnp.int32),
        S((16,), jnp.int32), S((8, 16, 4, 128), jnp.uint8))
"""

GPU_PLANTS = [
    {"name": "tokamax gated_linear_unit sm80: epilogue SMEM tile from get_global", "kind": "scratch",
     "package": "tokamax-0.0.17", "file": "tokamax/_src/ops/gated_linear_unit/pallas_mosaic_gpu_kernel_sm80.py",
     "platform": "cuda",
     "replace": [("      scratch_types=(mgpu_lib.tiled_swizzled_smem((tile_m, tile_n), dtype),),\n", ""),
                 ("  def kernel(x_gmem, weights_gmem, out_gmem, out_smem):\n",
                  "  def kernel(x_gmem, weights_gmem, out_gmem):\n"
                  "    out_smem = pl.get_global(mgpu_lib.tiled_swizzled_smem((tile_m, tile_n), dtype))\n")],
     "driver": _FAKE_DEVICE + _SDS + """
import tokamax._src.ops.gated_linear_unit.pallas_mosaic_gpu_kernel_sm80 as m
from tokamax._src.ops.gated_linear_unit import pallas_mosaic_gpu_common as common
m.backend = DEVICE
fn = functools.partial(m.gated_linear_unit, activation=jax.nn.silu,
                       config=common.Config(tile_m=64, tile_n=64, tile_k=64, num_stages=2))
args = (S((128, 128), jnp.float16), S((128, 2, 128), jnp.float16))
"""},
    {"name": "tokamax ragged_dot sm80: output SMEM tile from get_global", "kind": "scratch",
     "package": "tokamax-0.0.17", "file": "tokamax/_src/ops/ragged_dot/pallas_mosaic_gpu_kernel_sm80.py",
     "platform": "cuda",
     "replace": [("      scratch_types=[\n          plgpu.SMEM((block_m, block_n), out_dtype),\n      ],\n", ""),
                 ("      out_gmem,\n      out_smem,\n  ):\n",
                  "      out_gmem,\n  ):\n    out_smem = pl.get_global(plgpu.SMEM((block_m, block_n), out_dtype))\n")],
     "driver": _SDS + """
import tokamax._src.ops.ragged_dot.pallas_mosaic_gpu_kernel_sm80 as m
from tokamax._src.ops.ragged_dot import pallas_mosaic_gpu_common as common
fn = functools.partial(m.ragged_dot_kernel, out_dtype=jnp.float16,
                       config=common.Config(block_m=64, block_n=128, block_k=64, num_stages=2, split_k=1))
args = (S((256, 128), jnp.float16), S((4, 128, 128), jnp.float16), S((4,), jnp.int32))
"""},
    {"name": "jax-linear-attention ragged_dot: store tile of a helper from get_global, not run_scoped",
     "kind": "run_scoped", "package": "jax-linear-attention-0.1.0", "file": "jla/ops/mosaic_gpu/ragged_dot.py",
     "platform": "cuda",
     "replace": [("    @functools.partial(pl.run_scoped, o_smem=plgpu.SMEM(acc.shape, dtype=o_gmem.dtype))\n"
                  "    def _store(o_smem):\n",
                  "    o_smem = pl.get_global(plgpu.SMEM(acc.shape, dtype=o_gmem.dtype))\n\n"
                  "    def _store():\n"),
                 ("        plgpu.wait_smem_to_gmem(0, wait_read_only=True)\n\n\ndef _ragged_dot_kernel(",
                  "        plgpu.wait_smem_to_gmem(0, wait_read_only=True)\n\n    _store()\n\n\n"
                  "def _ragged_dot_kernel(")],
     "driver": _SDS + """
from jla.ops.mosaic_gpu import ragged_dot as m
fn = functools.partial(m._ragged_dot_kernel, transpose_rhs=False, cfg=m.BLOCK_ALIGNED)
args = (S((512, 256), jnp.bfloat16), S((4, 256, 256), jnp.bfloat16), S((4,), jnp.int32))
"""},
    {"name": "jax-linear-attention vector_gate cumsum: copy's barrier from get_global, not scratch_types",
     "kind": "barrier_scratch", "package": "jax-linear-attention-0.1.0", "file": "jla/ops/mosaic_gpu/vector_gate.py",
     "platform": "cuda",
     "replace": [("    scratch = (plgpu.SMEM((CHUNK, SCAN_WIDTH), _F32), plgpu.SMEM((_MARKS, SCAN_WIDTH), _F32),\n"
                  "               plgpu.Barrier(num_arrivals=1))\n",
                  "    scratch = (plgpu.SMEM((CHUNK, SCAN_WIDTH), _F32), plgpu.SMEM((_MARKS, SCAN_WIDTH), _F32))\n"),
                 ("        outs, (x_smem, marks_smem, bar) = refs[: len(out)], refs[len(out):]\n",
                  "        outs, (x_smem, marks_smem) = refs[: len(out)], refs[len(out):]\n"
                  "        bar = pl.get_global(plgpu.Barrier(num_arrivals=1))\n")],
     "driver": _SDS + """
from jla.ops.mosaic_gpu import vector_gate as m
cfg = m.Config(batch=1, seq_len=128, heads=1, key_dim=128, value_dim=128, scale=1.0, channel_gates=False)
fn = functools.partial(m.chunk_cumsum, cfg)
args = (S((1, 128, 1, 128), jnp.float32),)
"""},
    {"name": "jax hopper_matmul_mgpu: C tile's barrier from get_global, not run_scoped", "kind": "barrier_scratch",
     "package": "jax", "file": "jax/experimental/pallas/ops/gpu/hopper_matmul_mgpu.py", "platform": "cuda",
     "abstract_gpu": True,
     "replace": [("      c_barrier=None if c_gmem is None else plgpu.Barrier(num_barriers=2 * num_out_slots),\n", ""),
                 ("  def _pipeline_scope(pipeline_allocs, out_smem, c_barrier):\n",
                  "  def _pipeline_scope(pipeline_allocs, out_smem):\n"
                  "    c_barrier = pl.get_global(plgpu.Barrier(num_barriers=2 * num_out_slots))\n")],
     "driver": _SDS + """
import hopper_matmul_mgpu as m
config = m.TuningConfig(tile_m=128, tile_n=128, tile_k=64, max_concurrent_steps=2)
fn = functools.partial(m.matmul, config=config)
args = (S((256, 256), jnp.float16), S((256, 256), jnp.float16), S((256, 256), jnp.float16))
"""},
]

TPU_PLANTS = [
    {"name": "jax megablox gmm: accumulator VMEM from get_global, not the grid spec's scratch_shapes",
     "kind": "scratch_grid_spec", "package": "jax", "file": "jax/experimental/pallas/ops/tpu/megablox/gmm.py",
     "platform": "tpu",
     "replace": [("          scratch_shapes=[pltpu.VMEM((tm, tn), jnp.float32)],\n", ""),
                 ("      out,\n      acc_scratch,\n  ):\n    group_offsets, group_ids, m_tile_ids = group_metadata\n",
                  "      out,\n  ):\n    acc_scratch = pl.get_global(pltpu.VMEM((tm, tn), jnp.float32))\n"
                  "    group_offsets, group_ids, m_tile_ids = group_metadata\n")],
     "driver": _SDS + """
import gmm as m
fn = functools.partial(m.gmm, tiling=(128, 128, 128))
args = (S((512, 256), jnp.bfloat16), S((4, 256, 256), jnp.bfloat16), S((4,), jnp.int32))
"""},
    {"name": "jax paged_attention: shaped DMA semaphore passed whole to the copies (no .at[i])", "kind": "index",
     "package": "jax", "file": "jax/experimental/pallas/ops/tpu/paged_attention/paged_attention_kernel.py",
     "platform": "tpu",
     "replace": [("        k_sems.at[buffer_index],\n", "        k_sems,\n")],
     "driver": _SDS + """
import paged_attention_kernel as m
fn = functools.partial(m.paged_attention, pages_per_compute_block=4, inline_seq_dim=False)
args = (S((2, 8, 128), jnp.float32), S((2, 64, 16, 128), jnp.float32), S((2, 64, 16, 128), jnp.float32),
        S((2,), jnp.int32), S((2, 16), jnp.int32))
"""},
    {"name": "jax paged_attention: REGULAR semaphores for the K copies", "kind": "regular_semaphore",
     "package": "jax", "file": "jax/experimental/pallas/ops/tpu/paged_attention/paged_attention_kernel.py",
     "platform": "tpu",
     "replace": [("        None,\n        pltpu.SemaphoreType.DMA((2,)),\n",
                  "        None,\n        pltpu.SemaphoreType.REGULAR((2,)),\n")],
     "driver": _SDS + """
import paged_attention_kernel as m
fn = functools.partial(m.paged_attention, pages_per_compute_block=4, inline_seq_dim=False)
args = (S((2, 8, 128), jnp.float32), S((2, 64, 16, 128), jnp.float32), S((2, 64, 16, 128), jnp.float32),
        S((2,), jnp.int32), S((2, 16), jnp.int32))
"""},
    {"name": "jax ragged_paged_attention: double-buffer DMA semaphores from get_global, not the grid spec",
     "kind": "scratch_grid_spec", "package": "jax",
     "file": "jax/experimental/pallas/ops/tpu/ragged_paged_attention/kernel.py", "platform": "tpu",
     "replace": [("      pltpu.SemaphoreType.DMA((2,)),  # Semaphores for double buffers.\n", ""),
                 ("    kv_bufs,  # [2, num_kv_pages_per_blk, page_size, num_combined_kv_heads_per_blk, head_dim]\n"
                  "    sems,  # [2, 2]\n",
                  "    kv_bufs,  # [2, num_kv_pages_per_blk, page_size, num_combined_kv_heads_per_blk, head_dim]\n"),
                 ("  if mask_value is None:\n    mask_value = DEFAULT_MASK_VALUE\n  num_q_per_blk, num_q_heads_per_blk,",
                  "  if mask_value is None:\n    mask_value = DEFAULT_MASK_VALUE\n"
                  "  sems = pl.get_global(pltpu.SemaphoreType.DMA((2,)))\n  num_q_per_blk, num_q_heads_per_blk,")],
     "driver": _SDS + """
import kernel as m
fn = functools.partial(m.ragged_paged_attention, num_kv_pages_per_block=4, num_queries_per_block=16)
args = (S((64, 8, 128), jnp.bfloat16), S((128, 16, 4, 128), jnp.bfloat16), S((4,), jnp.int32),
        S((4, 16), jnp.int32), S((5,), jnp.int32), S((1,), jnp.int32))
"""},
    {"name": "jax ragged_paged_attention: shaped DMA semaphore passed whole to a descriptor (no .at[i])",
     "kind": "index", "package": "jax", "file": "jax/experimental/pallas/ops/tpu/ragged_paged_attention/kernel.py",
     "platform": "tpu",
     "replace": [("        kv_bufs.at[buf_idx],\n        sems.at[buf_idx],\n", "        kv_bufs.at[buf_idx],\n        sems,\n")],
     "driver": _SDS + """
import kernel as m
fn = functools.partial(m.ragged_paged_attention, num_kv_pages_per_block=4, num_queries_per_block=16)
args = (S((64, 8, 128), jnp.bfloat16), S((128, 16, 4, 128), jnp.bfloat16), S((4,), jnp.int32),
        S((4, 16), jnp.int32), S((5,), jnp.int32), S((1,), jnp.int32))
"""},
    {"name": "maxtext megablox gmm (qwix pallas_call): accumulator VMEM from get_global, not scratch_shapes",
     "kind": "scratch_grid_spec", "package": "maxtext-0.2.5", "file": "maxtext/kernels/megablox/backend.py",
     "platform": "tpu", "beside": ["qwix"],
     "replace": [("          scratch_shapes=[pltpu.VMEM((tm, tn), jnp.float32)],\n", ""),
                 ("      out,\n      acc_scratch,\n  ):\n    group_offsets, group_ids, m_tile_ids = group_metadata\n",
                  "      out,\n  ):\n    acc_scratch = pl.get_global(pltpu.VMEM((tm, tn), jnp.float32))\n"
                  "    group_offsets, group_ids, m_tile_ids = group_metadata\n")],
     "driver": _SDS + """
import importlib.util  # the module alone: the package's __init__ imports aqt, which is not installed here
spec = importlib.util.spec_from_file_location("megablox_backend", "maxtext/kernels/megablox/backend.py")
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
fn = functools.partial(m.gmm, tiling=(128, 128, 128))
args = (S((512, 256), jnp.bfloat16), S((4, 256, 256), jnp.bfloat16), S((4,), jnp.int32))
"""},
    {"name": "jax tpu matmul: accumulator VMEM from get_global with the output tile's shape, not scratch_shapes",
     "kind": "scratch_grid_spec", "package": "jax", "file": "jax/experimental/pallas/ops/tpu/matmul.py",
     "platform": "tpu",
     "replace": [("          scratch_shapes=[pltpu.VMEM((l, r), acc_dtype)],\n", ""),
                 ("def matmul_kernel(x_tile_ref, y_tile_ref, o_tile_ref, acc_ref):\n",
                  "def matmul_kernel(x_tile_ref, y_tile_ref, o_tile_ref):\n"
                  "  acc_ref = pl.get_global(pltpu.VMEM(o_tile_ref.shape, jnp.float32))\n\n")],
     "driver": _SDS + """
import matmul as m
fn = functools.partial(m.matmul, block_shape=(128, 128), block_k=128)
args = (S((256, 256), jnp.float32), S((256, 256), jnp.float32))
"""},
    {"name": "tokamax proj_and_save_state: write-count SMEM from get_global, not the grid spec's scratch_shapes",
     "kind": "scratch_grid_spec", "package": "tokamax-0.0.17",
     "file": "tokamax/_src/ops/proj_and_save_state/pallas_mosaic_tpu_kernel.py", "platform": "tpu",
     "replace": [("      pltpu.SMEM((2,), jnp.int32),\n  ]\n", "  ]\n"),
                 ("    sem_ref,\n    write_counts_ref,  # [2]\n", "    sem_ref,\n"),
                 ("  cache = csa_cache_layout.as_u8_slabs(cache)\n",
                  "  cache = csa_cache_layout.as_u8_slabs(cache)\n"
                  "  write_counts_ref = pl.get_global(pltpu.SMEM((2,), jnp.int32))\n")],
     "driver": _PROJ_AND_SAVE_STATE},
    {"name": "tokamax proj_and_save_state: shaped semaphore passed whole to the write-back copy (no .at[i])",
     "kind": "index", "package": "tokamax-0.0.17",
     "file": "tokamax/_src/ops/proj_and_save_state/pallas_mosaic_tpu_kernel.py", "platform": "tpu",
     "replace": [("      pltpu.make_async_copy(src, dest, sem_ref.at[buf_idx_val]).start()\n",
                  "      pltpu.make_async_copy(src, dest, sem_ref).start()\n")],
     "driver": _PROJ_AND_SAVE_STATE},
]

from planted_kernels_more import MORE_PLANTS  # noqa: E402

PLANTS = GPU_PLANTS + TPU_PLANTS + MORE_PLANTS
