"""One module per rule. Each defines CODE, NAME, SEVERITY, SUMMARY and `check(ctx)`."""

from __future__ import annotations

from pathlib import Path

from .. import DOCS_WEB_URL
from ..checked_values import docs_url as docs_url_from_environment
from . import (
    pal000_syntax_error,
    pal001_get_global_not_semaphore,
    pal002_get_global_interpret,
    pal003_get_global_no_lowering,
    pal004_several_get_global_without_grid,
    pal005_semaphore_index,
    pal006_global_semaphore_as_barrier,
    pal007_run_scoped_global_semaphore,
    pal008_semaphore_kernel_boundary,
    pal009_non_decrementing_wait,
    pal010_dma_semaphore_not_ref,
    pal011_barrier_semaphore_id_collision,
    pal012_shared_memory_over_budget,
    pal013_signal_wait_semaphore_type,
    pal014_signal_wait_not_ref,
    pal015_dma_wait_semaphore_type,
    pal016_gpu_interpreter_semaphore,
    pal017_local_copy_src_sem,
    pal018_other_backend_memory_space,
    pal019_global_memory_scratch,
    pal020_launch_field_beside_grid_spec,
    pal023_barrier_semaphore_without_collective_id,
    pal024_smem_vector_access,
    pal025_hlo_interpreter_mosaic_gpu,
    pal026_tpu_interpreter_mosaic_gpu,
    pal027_scratch_shape_dtype_struct,
    pal028_alloc_semaphore_in_kernel,
    pal029_semaphore_list_scratch,
    pal100_jax_error,
)

RULES = (pal000_syntax_error, pal001_get_global_not_semaphore, pal002_get_global_interpret,
         pal003_get_global_no_lowering, pal004_several_get_global_without_grid, pal005_semaphore_index,
         pal006_global_semaphore_as_barrier, pal007_run_scoped_global_semaphore, pal008_semaphore_kernel_boundary,
         pal009_non_decrementing_wait, pal010_dma_semaphore_not_ref, pal011_barrier_semaphore_id_collision,
         pal012_shared_memory_over_budget, pal013_signal_wait_semaphore_type, pal014_signal_wait_not_ref,
         pal015_dma_wait_semaphore_type, pal016_gpu_interpreter_semaphore,
         pal017_local_copy_src_sem, pal018_other_backend_memory_space, pal019_global_memory_scratch,
         pal020_launch_field_beside_grid_spec, pal023_barrier_semaphore_without_collective_id, pal024_smem_vector_access,
         pal025_hlo_interpreter_mosaic_gpu, pal026_tpu_interpreter_mosaic_gpu,
         pal027_scratch_shape_dtype_struct, pal028_alloc_semaphore_in_kernel,
         pal029_semaphore_list_scratch, pal100_jax_error)
RULES_BY_CODE = {rule.CODE: rule for rule in RULES}

# An installed package carries the pages (setup.py copies docs/rules there); a checkout has docs/rules.
_PACKAGED_DOCS = Path(__file__).resolve().parents[1] / "rule_docs"
DOCS_DIR = _PACKAGED_DOCS if _PACKAGED_DOCS.is_dir() else Path(__file__).resolve().parents[3] / "docs" / "rules"


def doc_path(rule) -> Path:
    return DOCS_DIR / f"{rule.CODE}-{rule.NAME}.md"


def find_rule(name: str):
    """The rule a user names: its code (`PAL001`, `pal001`) or its name (`get-global-not-semaphore`)."""
    wanted = name.strip()
    return RULES_BY_CODE.get(wanted.upper()) or next((rule for rule in RULES if rule.NAME == wanted.lower()), None)


def rule_page(rule) -> str:
    """The rule's page, as `pallas-lsp rule` prints it (the page its diagnostics link to)."""
    text = doc_path(rule).read_text(encoding="utf-8")
    return text if text.endswith("\n") else text + "\n"


def doc_url(rule, base: str | None = None) -> str | None:
    """Link for the rule's page: `<base>/<page>` for a docs site (the `docsUrl` setting, else
    `$PALLAS_LSP_DOCS_URL`), else the page shipped with the package (or in this checkout)."""
    base = base or docs_url_from_environment()
    page = doc_path(rule)
    if base:
        return f"{base.rstrip('/')}/{page.name}"
    return page.as_uri() if page.exists() else None


def web_doc_url(rule) -> str:
    """Link for a page read away from this machine (SARIF in code scanning): `$PALLAS_LSP_DOCS_URL`,
    else the page in the repository on the web."""
    return doc_url(rule, docs_url_from_environment() or f"{DOCS_WEB_URL}/rules")
