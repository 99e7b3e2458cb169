"""Closing a module without saving makes its file what is on disk again: the open files that import
it are checked again, so a push client (Neovim, eglot) never keeps showing them clean while the
code on disk has a finding. The real server over stdio, real files."""

from __future__ import annotations

import textwrap

from conftest import jax_python
from lsp_wire import WireServer

ON_DISK = textwrap.dedent("""\
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu

    FLAGS = plgpu.SMEM((128,), jnp.float32)
    """)
UNSAVED = ON_DISK.replace("plgpu.SMEM((128,), jnp.float32)", "plgpu.SemaphoreType.REGULAR")
KERNEL = textwrap.dedent("""\
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu

    import kinds


    def body(o_ref):
        flags = pl.get_global(kinds.FLAGS)
        o_ref[...] = jnp.zeros_like(o_ref)


    def launch():
        return plgpu.kernel(body, out_shape=jax.ShapeDtypeStruct((128,), jnp.float32))()
    """)


def test_closing_an_unsaved_helper_checks_its_importers_again(tmp_path):
    (tmp_path / "kinds.py").write_text(ON_DISK)
    (tmp_path / "k.py").write_text(KERNEL)
    kinds, kernel = (tmp_path / "kinds.py").as_uri(), (tmp_path / "k.py").as_uri()
    server = WireServer(cwd=tmp_path)
    try:
        server.initialize(str(tmp_path), python=jax_python())
        server.open(kinds, UNSAVED)
        server.published(kinds)
        server.open(kernel, KERNEL)
        assert server.published(kernel) == []  # the unsaved helper's REGULAR semaphore: nothing to report
        server.send({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": kinds}}})
        again = server.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                                and m["params"]["uri"] == kernel and m["params"]["diagnostics"])
        assert again is not None, "the server exited"
        assert [d["code"] for d in again["params"]["diagnostics"]] == ["PAL001"]  # as the file on disk says
    finally:
        server.kill()


def test_an_importer_analysed_before_its_helper_changed_sees_the_change(tmp_path):
    """The importer's own text is the same; what it evaluated through the helper's old text is not."""
    from pallas_lsp.analysis import Project
    from pallas_lsp.engine import analyze_incremental

    (tmp_path / "kinds.py").write_text(ON_DISK)
    (tmp_path / "k.py").write_text(KERNEL)
    project = Project(root=str(tmp_path), python=jax_python())
    kernel, kinds = str(tmp_path / "k.py"), str(tmp_path / "kinds.py")
    codes = lambda: [f.code for f in analyze_incremental(project, kernel, KERNEL)]  # noqa: E731
    assert codes() == ["PAL001"]
    project.set_text(kinds, UNSAVED)
    assert codes() == []
    project.set_text(kinds, None)  # closed without saving
    assert codes() == ["PAL001"]
    (tmp_path / "kinds.py").write_text(UNSAVED)  # saved elsewhere: a file event
    project.file_changed(kinds)
    assert codes() == []
