"""JAX in the loop in the editor (`traceEntryPoints: "onSave"`): after a save, the project's own
`__main__` block runs in the contained trace process, JAX lowers each kernel it launches, and the
diagnostics show what JAX said. The real server over stdio, real JAX (`.venvs/jax`)."""

from __future__ import annotations

import textwrap

import pytest

from conftest import jax_python
from jax_loop_kernels import CONTRADICTED
from lsp_wire import WireServer

pytestmark = pytest.mark.jax

# A kernel JAX rejects where no rule looks: the body adds arrays of shapes that do not broadcast.
MISMATCH = textwrap.dedent("""\
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu


    def body(x_ref, o_ref):
        o_ref[...] = x_ref[...] + jnp.ones((3,), jnp.float32)


    def add(x):
        return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128,), jnp.float32))(x)


    if __name__ == "__main__":
        add(jnp.ones((128,), jnp.float32))
    """)
# A kernel a rule reports and JAX rejects too: one finding, confirmed.
GLOBAL_BUFFER = MISMATCH.replace("o_ref[...] = x_ref[...] + jnp.ones((3,), jnp.float32)",
                                 "buf = pl.get_global(plgpu.SMEM((128,), jnp.float32))\n    o_ref[...] = x_ref[...] + buf[...]")


def _server(tmp_path, text: str, capabilities: dict | None = None, **options) -> tuple[WireServer, str]:
    path = tmp_path / "k.py"
    path.write_text(text)
    server = WireServer(cwd=tmp_path)
    server.request(0, "initialize", {
        "processId": None, "rootUri": None, "workspaceFolders": [{"uri": tmp_path.as_uri(), "name": "ws"}],
        "capabilities": capabilities or {},
        "initializationOptions": {"debounceMs": 0, "python": jax_python(), **options}})
    server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    server.open(path.as_uri(), text)
    return server, path.as_uri()


def _run_ended(server: WireServer) -> None:
    """Wait for the end of the run's `$/progress` (the client answers the server's request to create it)."""
    create = server.wait_for(lambda m: m.get("method") == "window/workDoneProgress/create", timeout=240)
    server.send({"jsonrpc": "2.0", "id": create["id"], "result": None})
    token = create["params"]["token"]
    assert server.wait_for(lambda m: m.get("method") == "$/progress" and m["params"]["token"] == token
                           and m["params"]["value"].get("kind") == "end", timeout=240)


def _save(server: WireServer, uri: str) -> None:
    server.send({"jsonrpc": "2.0", "method": "textDocument/didSave", "params": {"textDocument": {"uri": uri}}})


def _published_with(server: WireServer, uri: str, predicate) -> list[dict]:
    found = server.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                            and m["params"]["uri"] == uri and predicate(m["params"]["diagnostics"]), timeout=240)
    assert found is not None, server.stderr.decode()[-3000:]
    return found["params"]["diagnostics"]


def test_after_a_save_jaxs_error_is_a_diagnostic_on_the_line_it_blames(tmp_path):
    server, uri = _server(tmp_path, MISMATCH, traceEntryPoints="onSave")
    try:
        assert server.published(uri) == []  # no rule knows this one
        _save(server, uri)
        diagnostics = _published_with(server, uri, lambda ds: any(d["code"] == "PAL100" for d in ds))
        (jax_error,) = [d for d in diagnostics if d["code"] == "PAL100"]
        assert jax_error["range"]["start"]["line"] == 7  # the addition in the body
        assert jax_error["message"].startswith(("TypeError", "ValueError"))
        assert any("__main__" in r["message"] for r in jax_error.get("relatedInformation") or [])
        assert jax_error["source"] == "jax"
    finally:
        server.kill()


def test_a_rules_finding_that_jax_confirms_is_one_diagnostic(tmp_path):
    server, uri = _server(tmp_path, GLOBAL_BUFFER, traceEntryPoints="onSave")
    try:
        assert [d["code"] for d in server.published(uri)] == ["PAL001"]
        _save(server, uri)
        diagnostics = _published_with(server, uri, lambda ds: any("confirmed by JAX" in d["message"] for d in ds))
        assert [d["code"] for d in diagnostics] == ["PAL001"]
        hover = server.request(5, "textDocument/hover", {"textDocument": {"uri": uri},
                                                         "position": {"line": 6, "character": 10}})
        assert "x_ref: Ref<gmem>{float32[128]}" in hover["result"]["contents"]["value"]
        assert "traced by JAX" in hover["result"]["contents"]["value"]  # JAX's own type, until the file changes
        server.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": GLOBAL_BUFFER + "\n"}]}})
        assert [d["message"].endswith("(confirmed by JAX)") for d in server.published(uri, 2)] == [False]
    finally:
        server.kill()



# The scratch fix of GLOBAL_BUFFER leaves a broadcast error no rule sees: JAX rejects the fixed code.
STILL_BROKEN = GLOBAL_BUFFER.replace("o_ref[...] = x_ref[...] + buf[...]",
                                     "o_ref[...] = x_ref[...] + buf[...] + jnp.ones((3,), jnp.float32)")


def _quick_fixes(server: WireServer, uri: str, diagnostic: dict, msg_id: int) -> list[dict]:
    answer = server.request(msg_id, "textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": diagnostic["range"],
        "context": {"diagnostics": [diagnostic], "only": ["quickfix"]}}, )
    return answer["result"] or []


def test_a_fix_jax_accepts_is_offered_as_verified_by_jax(tmp_path):
    server, uri = _server(tmp_path, GLOBAL_BUFFER, traceEntryPoints="onSave")
    try:
        (static,) = server.published(uri)
        titles = [a["title"] for a in _quick_fixes(server, uri, static, 5)]
        assert "pallas-lsp (PAL001): Allocate buf as scratch (scratch_types)" in titles  # before a run: the rules'
        _save(server, uri)
        (confirmed,) = _published_with(server, uri, lambda ds: any("confirmed by JAX" in d["message"] for d in ds))
        actions = _quick_fixes(server, uri, confirmed, 6)
        scratch = [a for a in actions if "Allocate buf as scratch" in a["title"]]
        assert [a["title"] for a in scratch] == [
            "pallas-lsp (PAL001): Allocate buf as scratch (scratch_types) (verified by JAX)"]
        assert scratch[0]["edit"]  # the edit JAX lowered, as offered
    finally:
        server.kill()


def test_a_fix_jax_rejects_is_not_offered_and_greyed_out_with_jaxs_reason(tmp_path):
    server, uri = _server(tmp_path, STILL_BROKEN, {"textDocument": {"codeAction": {"disabledSupport": True}}},
                          traceEntryPoints="onSave")
    try:
        (static,) = server.published(uri)
        assert static["code"] == "PAL001"
        _save(server, uri)
        diagnostics = _published_with(server, uri, lambda ds: any("confirmed by JAX" in d["message"] for d in ds))
        confirmed = next(d for d in diagnostics if d["code"] == "PAL001")
        scratch = [a for a in _quick_fixes(server, uri, confirmed, 6) if "Allocate buf as scratch" in a["title"]]
        assert [a.get("edit") for a in scratch] == [None]  # not offered: shown greyed out, with JAX's error
        assert scratch[0]["disabled"]["reason"].startswith("JAX rejects the fixed code: TypeError: add got incompatible shapes")
        assert "verified by JAX" not in scratch[0]["title"]
    finally:
        server.kill()


def test_a_rule_error_jax_contradicts_is_not_shown_and_the_hover_says_why(tmp_path):
    server, uri = _server(tmp_path, CONTRADICTED, traceEntryPoints="onSave")
    try:
        assert "PAL001" in [d["code"] for d in server.published(uri)]
        _save(server, uri)
        _published_with(server, uri, lambda ds: all(d["severity"] != 1 for d in ds))  # no error left
        hover = server.request(5, "textDocument/hover", {"textDocument": {"uri": uri},
                                                         "position": {"line": 13, "character": 4}})
        text = hover["result"]["contents"]["value"]
        assert ("PAL001 (get-global-not-semaphore) is not shown: JAX traced and lowered the launch of add_one "
                "(k.py:12) for cuda (float32[128]) without error, from the entry point k.py::test_add_one") in text, text
        server.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": CONTRADICTED + "\n"}]}})
        assert "PAL001" in [d["code"] for d in server.published(uri, 2)]  # edited: the rules' view again
        hover = server.request(6, "textDocument/hover", {"textDocument": {"uri": uri},
                                                         "position": {"line": 13, "character": 4}})
        assert "is not shown" not in ((hover.get("result") or {}).get("contents") or {}).get("value", "")
    finally:
        server.kill()


# Sizes the source does not give (a tuning table read at run time): JAX's figures after a save.
RUNTIME_SIZES = textwrap.dedent("""\
    import json

    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu

    SIZE = json.loads('{"block": 256}')["block"]


    def body(x_ref, o_ref, tmp_ref):
        tmp_ref[...] = x_ref[...]
        o_ref[...] = tmp_ref[...] + 1.0


    def add(x):
        return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
                            scratch_types=[plgpu.SMEM(x.shape, x.dtype)])(x)


    def test_add():
        add(jnp.ones((SIZE,), jnp.float32))
    """)


def test_after_a_run_inlay_hints_show_jaxs_types_and_the_lens_jaxs_shared_memory(tmp_path):
    server, uri = _server(tmp_path, RUNTIME_SIZES, {"window": {"workDoneProgress": True}},
                          traceEntryPoints="onSave", inlayHints=True)
    try:
        server.published(uri)
        span = {"start": {"line": 0, "character": 0}, "end": {"line": 22, "character": 0}}
        before = server.request(5, "textDocument/inlayHint", {"textDocument": {"uri": uri}, "range": span})["result"] or []
        assert not any("(traced)" in str(h["label"]) for h in before)
        lenses = server.request(6, "textDocument/codeLens", {"textDocument": {"uri": uri}})["result"] or []
        assert "SMEM ≥ 0 / 232,448 B" in [lens["command"]["title"] for lens in lenses]  # the source does not say
        _save(server, uri)
        _run_ended(server)
        hints = server.request(7, "textDocument/inlayHint", {"textDocument": {"uri": uri}, "range": span})["result"]
        labels = [str(h["label"]) for h in hints]
        assert labels == [": f32[256] gmem (traced)", ": f32[256] gmem (traced)", ": f32[256] smem (traced)"]
        lenses = server.request(300, "textDocument/codeLens", {"textDocument": {"uri": uri}})["result"] or []
        assert "SMEM 1,024 / 232,448 B (traced)" in [lens["command"]["title"] for lens in lenses]  # JAX's figure
    finally:
        server.kill()
