"""The server's start: what importing it loads, and the compiled attrs methods it keeps on disk
(`pallas_lsp.lsp.libraries`). Timings live in bench/cold_start.py; these tests check that the faster
start builds the same protocol classes and leaves nothing changed behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import REPO

# The methods of every lsprotocol class, their compiled code field by field, fingerprinted per class.
# `__hash__` is left out: attrs salts its text with a string hash, which differs in every process.
FINGERPRINT = """
import hashlib, json, sys, types
import pallas_lsp.lsp.server
import attr, attr._make, lsprotocol.types as t

def fields(code):
    return (code.co_filename, code.co_name, code.co_qualname, code.co_firstlineno, code.co_code,
            code.co_linetable, code.co_exceptiontable, code.co_flags, code.co_argcount,
            code.co_kwonlyargcount, code.co_posonlyargcount, code.co_names, code.co_varnames,
            code.co_freevars, code.co_cellvars, code.co_stacksize,
            tuple(fields(c) if isinstance(c, types.CodeType) else repr(c) for c in code.co_consts))

prints = {}
for name, cls in vars(t).items():
    if isinstance(cls, type) and attr.has(cls) and cls.__module__ == t.__name__:
        methods = {m: fields(vars(cls)[m].__code__) for m in sorted(vars(cls)) if m != "__hash__"
                   and isinstance(vars(cls)[m], types.FunctionType)}
        prints[name] = hashlib.sha256(repr(methods).encode()).hexdigest()
print(json.dumps({"prints": prints, "patched": "compile" in vars(attr._make),
                  "lazy": sorted(m for m in ("jedi", "parso", "libcst", "pallas_lsp.fixes", "pallas_lsp.trace",
                                             "pallas_lsp.analysis.hover") if m in sys.modules)}))
"""


def import_server(cache: str, *flags: str) -> dict:
    env = {**os.environ, "PALLAS_LSP_CACHE_DIR": cache, "PYTHONPATH": str(REPO / "server")}
    run = subprocess.run([sys.executable, *flags, "-c", FINGERPRINT], capture_output=True, text=True, env=env,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)


def test_kept_methods_build_the_same_protocol_classes(tmp_path):
    cache = tmp_path / "cache"
    plain = import_server("")  # caching off: attrs compiles every method
    first = import_server(str(cache))  # writes the file
    (kept,) = cache.glob("attrs-code-*.marshal")
    written = kept.stat().st_mtime_ns, kept.stat().st_ino
    second = import_server(str(cache))  # reads it
    assert len(plain["prints"]) > 500  # lsprotocol's classes, all of them compared
    assert first["prints"] == plain["prints"] and second["prints"] == plain["prints"]
    assert (kept.stat().st_mtime_ns, kept.stat().st_ino) == written  # nothing compiled again: not rewritten
    for run in (plain, first, second):
        assert run["patched"] is False  # attrs' own compile again after the import
        assert run["lazy"] == []  # imported only when first needed, never at the start


def test_code_compiled_without_asserts_is_kept_apart(tmp_path):
    cache = tmp_path / "cache"
    plain, optimized = import_server(str(cache)), import_server(str(cache), "-O")
    assert sorted(p.name.endswith("-O1.marshal") for p in cache.glob("attrs-code-*")) == [False, True]
    assert import_server(str(cache), "-O")["prints"] == optimized["prints"]
    assert import_server(str(cache))["prints"] == plain["prints"]


def test_a_damaged_or_foreign_file_of_kept_methods_is_replaced(tmp_path, monkeypatch):
    from pallas_lsp.lsp.libraries import code_cache_file

    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", str(cache))
    path = code_cache_file()
    plain = import_server("")
    for damage in (b"", b"\xe3 not marshal", b"\xda\x05hello"):  # empty, garbage, a marshalled str
        path.write_bytes(damage)
        assert import_server(str(cache))["prints"] == plain["prints"]
        assert path.stat().st_size > 100_000  # compiled again and written whole


def test_kept_methods_that_others_may_write_are_not_loaded(tmp_path, monkeypatch):
    from pallas_lsp.lsp.libraries import CompileCache

    path = tmp_path / "attrs-code.marshal"
    cache = CompileCache(path)
    code = cache.compile("x = 1", "<attrs generated init>", "exec")
    cache.save()
    path.chmod(0o644)
    assert list(CompileCache(path).known.values()) == [code]
    path.chmod(0o664)  # group-writable: anyone in the group could put code there
    assert CompileCache(path).known == {}
    path.chmod(0o646)
    assert CompileCache(path).known == {}


def test_no_file_when_caching_is_off(tmp_path):
    env_home = tmp_path / "home"
    env = {**os.environ, "PALLAS_LSP_CACHE_DIR": "", "XDG_CACHE_HOME": str(env_home), "HOME": str(env_home),
           "PYTHONPATH": str(REPO / "server")}
    subprocess.run([sys.executable, "-c", "import pallas_lsp.lsp.server"], check=True, env=env, timeout=120)
    assert not env_home.exists() or not list(env_home.rglob("attrs-code-*"))


def test_an_opened_document_is_analysed_at_once_and_edits_after_its_first_diagnostics_wait_for_the_debounce(tmp_path):
    """`debounceMs` coalesces bursts of edits; the first diagnostics of an opened document waited for
    it too, adding it to every start (150 ms by default). Here it is a minute (the most): the first diagnostics
    come, and an edit's do not come before the answer to a request sent after it."""
    from conftest import jax_python
    from lsp_wire import WireServer

    kernel = tmp_path / "kernel.py"
    text = (REPO / "examples" / "kernels" / "pal001_global_buffer.py").read_text()
    kernel.write_text(text)
    uri = kernel.as_uri()
    server = WireServer()
    try:
        server.initialize(str(tmp_path), python=jax_python(), debounceMs=60_000)

        def published(version):
            return lambda m: (m.get("method") == "textDocument/publishDiagnostics"
                              and m["params"]["uri"] == uri and m["params"].get("version") == version)

        server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": text}}})
        first = server.wait_for(published(1))
        assert [d["code"] for d in first["params"]["diagnostics"]] == ["PAL001"]
        server.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                                "text": "# edited\n"}]}})
        assert server.request(1, "shutdown") is not None
        with server.changed:
            assert not [m for m in server.messages if published(2)(m)]
    finally:
        server.kill()


def test_a_message_from_another_thread_after_the_server_exited_is_dropped():
    """The jedi environment loads on its own thread from `initialize`; a client that leaves right after
    the first diagnostics closes the event loop before it reports, which raised in that thread."""
    import asyncio

    from pallas_lsp.lsp.server import PallasServer

    ls = PallasServer()
    loop = asyncio.new_event_loop()
    loop.close()
    ls.event_loop, ls.loop_thread = loop, None  # as after `initialize`, seen from another thread
    sent = []
    ls.notify_from_any_thread(sent.append, "the environment failed")
    assert sent == []
