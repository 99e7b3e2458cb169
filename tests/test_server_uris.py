"""Documents whose URI is percent-encoded (`my%20proj`, `caf%C3%A9`, `a%23b`) or carries a
non-ASCII letter unencoded, over a real server in push mode (a client without pull, as Neovim 0.7
and eglot are): pygls keys open documents by the decoded URI, and every answer must name the
document exactly as the client opened it (clients compare URIs as strings). Before, such a client
never got diagnostics (hover worked), and re-checks published under the decoded URI."""

from __future__ import annotations

import itertools
from pathlib import Path
from urllib.parse import unquote

import pytest

from conftest import jax_python
from lsp_wire import WireServer

HELPER = """\
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

STAGING = plgpu.SMEM((128,), jnp.float32)
"""
HELPER_FIXED = HELPER.replace("plgpu.SMEM((128,), jnp.float32)", "plgpu.SemaphoreType.REGULAR")
KERNEL = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

from helper import STAGING

X = jax.ShapeDtypeStruct((4, 128), jnp.float32)


def scale_rows(x_ref, o_ref):
  staging = pl.get_global(STAGING)
  staging[...] = x_ref[0]
  o_ref[0] = staging[...] * 0.5


# pallas-lsp: trace(f32[4,128])
scale = plgpu.kernel(scale_rows, out_type=X, grid=(4,), grid_names=("row",))
"""
GET_GLOBAL_LINE = 11

# How clients spell a folder: as Path.as_uri() does (Neovim, eglot, VS Code), with lower-case hex
# (a server must not re-encode: it echoes the client's string), and with the letter unencoded.
SPELLINGS = {
    "space": ("my proj", lambda path: path.as_uri()),
    "non-ascii-encoded": ("café", lambda path: path.as_uri()),
    "non-ascii-lower-case-hex": ("crème", lambda path: path.as_uri().replace("%C3%A8", "%c3%a8")),
    "non-ascii-unencoded": ("naïve", lambda path: f"file://{path}"),
    "hash": ("a#b", lambda path: path.as_uri()),
}


class Client:
    """A push client (no pull, no resolve, no configuration) driving one real server over stdio."""

    def __init__(self, root: Path, capabilities: dict | None = None):
        self.server = WireServer()
        self.ids = itertools.count(1)
        answer = self.server.request(0, "initialize", {
            "processId": None, "rootUri": root.as_uri(), "capabilities": capabilities or {},
            "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
            "initializationOptions": {"python": jax_python(), "debounceMs": 0}})
        assert "result" in answer, answer
        self.notify("initialized", {})

    def notify(self, method: str, params: dict) -> None:
        self.server.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: dict):
        answer = self.server.request(next(self.ids), method, params)
        assert answer is not None and "error" not in answer, answer
        return answer["result"]

    def publishes(self) -> list[dict]:
        with self.server.changed:
            return [m["params"] for m in self.server.messages if m.get("method") == "textDocument/publishDiagnostics"]

    def next_publish(self, uri: str, version: int | None, after: int) -> dict:
        """The first publish for exactly `uri` (and `version`) among those after the `after` first ones."""
        found = self.server.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics" and (
            self._index(m) >= after) and m["params"]["uri"] == uri and (
            version is None or m["params"].get("version") == version))
        assert found is not None, "the server exited"
        return found["params"]

    def _index(self, message: dict) -> int:
        publishes = [m for m in self.server.messages if m.get("method") == "textDocument/publishDiagnostics"]
        return next(i for i, m in enumerate(publishes) if m is message)

    def open(self, uri: str, text: str) -> None:
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                               "text": text}})

    def replace_all(self, uri: str, version: int, old: str, new: str) -> None:
        lines = old.split("\n")
        self.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": len(lines) - 1, "character": len(lines[-1])}},
            "text": new}]})


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("uris")
    client = Client(root)
    yield root, client
    client.server.kill()


def codes(publish: dict) -> list[tuple[str, int]]:
    return [(d["code"], d["range"]["start"]["line"]) for d in publish["diagnostics"]]


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_every_answer_names_the_document_as_the_client_opened_it(workspace, spelling):
    root, client = workspace
    name, uri_of = SPELLINGS[spelling]
    folder = root / name
    folder.mkdir()
    (folder / "helper.py").write_text(HELPER)
    (folder / "k.py").write_text(KERNEL)
    uri, helper_uri = uri_of(folder / "k.py"), uri_of(folder / "helper.py")
    start = len(client.publishes())

    client.open(uri, KERNEL)
    first = client.next_publish(uri, 1, start)
    assert codes(first) == [("PAL001", GET_GLOBAL_LINE)]
    (diagnostic,) = first["diagnostics"]

    hover = client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                  "position": {"line": GET_GLOBAL_LINE, "character": 18}})
    assert "Ref<smem>{float32[128]}" in hover["contents"]["value"]
    hints = client.request("textDocument/inlayHint", {"textDocument": {"uri": uri}, "range": {
        "start": {"line": 0, "character": 0}, "end": {"line": 20, "character": 0}}})
    assert [hint["label"] for hint in hints] == [": gmem", ": f32[4,128] gmem"]
    lenses = client.request("textDocument/codeLens", {"textDocument": {"uri": uri}})
    assert [lens["command"]["arguments"] for lens in lenses] == [[uri, "scale"]]
    actions = client.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": diagnostic["range"],
                                                         "context": {"diagnostics": [diagnostic]}})
    edited = {change["textDocument"]["uri"] for action in actions if "edit" in action
              for change in action["edit"]["documentChanges"]}
    assert edited == {uri}, actions
    (fix_all,) = [action for action in actions if action["title"] == "Fix all pallas-lsp problems"]
    assert fix_all["command"]["arguments"] == [uri, 1]

    edited_text = "# edited\n" + KERNEL
    client.replace_all(uri, 2, KERNEL, edited_text)
    assert codes(client.next_publish(uri, 2, start)) == [("PAL001", GET_GLOBAL_LINE + 1)]

    # Another file's edit re-checks this one: the helper, opened, fixed and saved.
    client.open(helper_uri, HELPER)
    client.next_publish(helper_uri, 1, start)
    (folder / "helper.py").write_text(HELPER_FIXED)
    client.replace_all(helper_uri, 2, HELPER, HELPER_FIXED)
    after_edit = len(client.publishes())
    client.notify("textDocument/didSave", {"textDocument": {"uri": helper_uri}})
    assert codes(client.next_publish(uri, 2, after_edit)) == []

    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    closed = client.next_publish(uri, None, after_edit + 1)
    assert closed["diagnostics"] == []

    mine = [p["uri"] for p in client.publishes()[start:] if f"/{name}/" in unquote(p["uri"])]
    assert set(mine) == {uri, helper_uri}, mine


def test_a_pulling_client_gets_the_diagnostics_of_an_encoded_uri(tmp_path):
    """VS Code pulls (and can be asked to pull again): its `textDocument/diagnostic` for `my%20proj`."""
    folder = tmp_path / "my proj"
    folder.mkdir()
    (folder / "helper.py").write_text(HELPER)
    (folder / "k.py").write_text(KERNEL)
    uri = (folder / "k.py").as_uri()
    client = Client(tmp_path, {"textDocument": {"diagnostic": {}}, "workspace": {"diagnostics": {"refreshSupport": True}}})
    try:
        client.open(uri, KERNEL)
        report = client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
        assert [(d["code"], d["range"]["start"]["line"]) for d in report["items"]] == [("PAL001", GET_GLOBAL_LINE)]
        assert client.publishes() == []
    finally:
        client.server.kill()


@pytest.mark.slow
def test_trace_diagnostics_go_to_the_document_as_the_client_opened_it(tmp_path):
    """`pallas.trace` of a kernel in `my%20proj`: JAX's error is published on the opened URI, beside
    the static PAL001 (before: under `Path.as_uri()`'s spelling, which a client with `naïve` unencoded
    does not match)."""
    folder = tmp_path / "naïve proj"
    folder.mkdir()
    example = (Path(__file__).parent.parent / "examples" / "kernels" / "pal001_global_buffer.py").read_text()
    (folder / "k.py").write_text(example)
    uri = f"file://{folder}/k.py".replace(" ", "%20")  # the space encoded, the letter not
    client = Client(tmp_path)
    try:
        client.open(uri, example)
        client.next_publish(uri, 1, 0)
        after = len(client.publishes())
        result = client.request("workspace/executeCommand", {"command": "pallas.trace", "arguments": [uri, "scale"]})
        assert result["error"]["type"] == "NotImplementedError", result
        traced = client.next_publish(uri, 1, after)
        assert sorted(d["source"] for d in traced["diagnostics"]) == ["pallas-lsp", "pallas-trace"]
        assert {p["uri"] for p in client.publishes()} == {uri}
    finally:
        client.server.kill()
