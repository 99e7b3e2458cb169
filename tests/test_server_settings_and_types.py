"""Settings per workspace folder (workspace/configuration over pyproject.toml), hovers and inlay hints
for kernel parameters — through the real server over stdio."""

import sys
import textwrap

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import jax_python, publish_for

BAD = textwrap.dedent("""\
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu

    def body(x_ref, o_ref, tmp_ref):
        s = pl.get_global(plgpu.SemaphoreType.BARRIER)

    k = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((8,), jnp.float32),
                     scratch_types=[plgpu.SMEM((128,), jnp.float32)])
    """)
CAPABILITIES = types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(
    configuration=True, workspace_folders=True))


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "pallas_lsp", "serve"]))
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


async def diagnostics_for(client: LanguageClient, uri: str, timeout: float = 30.0):
    return [d.code for d in (await publish_for(client, uri, timeout=timeout)).diagnostics]


def open_file(client: LanguageClient, path, version=1):
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=path.as_uri(), language_id="python", version=version, text=path.read_text())))


@pytest.mark.asyncio(loop_scope="function")
async def test_each_folder_gets_its_own_settings_editor_over_pyproject(client: LanguageClient, tmp_path):
    folders = {name: tmp_path / name for name in ("plain", "editor_ignores", "pyproject_ignores", "editor_overrides")}
    for folder in folders.values():
        folder.mkdir()
        (folder / "kernel.py").write_text(BAD)
    for name in ("pyproject_ignores", "editor_overrides"):
        (folders[name] / "pyproject.toml").write_text('[tool.pallas-lsp]\nignore = ["PAL001"]\n')
    client.set_configuration({"python": jax_python(), "debounceMs": 0}, section="pallas")
    client.set_configuration({"ignore": ["PAL001"]}, section="pallas", scope_uri=folders["editor_ignores"].as_uri())
    client.set_configuration({"ignore": []}, section="pallas", scope_uri=folders["editor_overrides"].as_uri())
    await client.initialize_session(types.InitializeParams(
        capabilities=CAPABILITIES,
        workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=n) for n, f in folders.items()]))
    seen = {}
    for name, folder in folders.items():
        open_file(client, folder / "kernel.py")
        seen[name] = await diagnostics_for(client, (folder / "kernel.py").as_uri())
    assert seen == {"plain": ["PAL001"], "editor_ignores": [], "pyproject_ignores": [], "editor_overrides": ["PAL001"]}

    # Changing the settings re-analyses open files with the new ones.
    client.set_configuration({"ignore": ["PAL001"]}, section="pallas", scope_uri=folders["plain"].as_uri())
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    plain_uri = (folders["plain"] / "kernel.py").as_uri()
    assert await diagnostics_for(client, plain_uri) == []

    # A client-wide setting the user clears goes back to its default (it does not stick).
    client.set_configuration({}, section="pallas", scope_uri=folders["plain"].as_uri())
    client.set_configuration({"python": jax_python(), "debounceMs": 0, "ignore": ["PAL001"]}, section="pallas")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    assert await diagnostics_for(client, plain_uri) == []
    client.set_configuration({"python": jax_python(), "debounceMs": 0}, section="pallas")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    assert await diagnostics_for(client, plain_uri) == ["PAL001"]


@pytest.mark.asyncio(loop_scope="function")
async def test_hover_and_inlay_hints_show_kernel_parameter_types(client: LanguageClient, tmp_path):
    path = tmp_path / "kernel.py"
    path.write_text(BAD)
    await client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=tmp_path.as_uri(),
        initialization_options={"python": jax_python(), "debounceMs": 0}))
    open_file(client, path)
    await diagnostics_for(client, path.as_uri())
    document = types.TextDocumentIdentifier(uri=path.as_uri())
    hints = await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=document, range=types.Range(start=types.Position(line=0, character=0),
                                                   end=types.Position(line=20, character=0))))
    assert [(h.position.line, h.position.character, h.label, h.kind) for h in hints] == [
        (5, 14, ": gmem", types.InlayHintKind.Type),
        (5, 21, ": f32[8] gmem", types.InlayHintKind.Type),
        (5, 30, ": f32[128] smem", types.InlayHintKind.Type),
    ]
    assert hints[2].tooltip == "Ref<smem>{float32[128]}: kernel scratch from `scratch_types[0]` of `plgpu.kernel` (line 9)"
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=document, position=types.Position(line=5, character=24)))
    assert hover.contents.value == ("```python\ntmp_ref: Ref<smem>{float32[128]}\n```\n\n"
                                    "- kernel scratch from `scratch_types[0]` of `plgpu.kernel` (line 9)")


@pytest.mark.asyncio(loop_scope="function")
async def test_inlay_hints_can_be_switched_off(client: LanguageClient, tmp_path):
    path = tmp_path / "kernel.py"
    path.write_text(BAD)
    client.set_configuration({"python": jax_python(), "debounceMs": 0, "inlayHints": False}, section="pallas")
    await client.initialize_session(types.InitializeParams(
        capabilities=CAPABILITIES, root_uri=tmp_path.as_uri(),
        initialization_options={"python": jax_python(), "debounceMs": 0}))
    open_file(client, path)
    await diagnostics_for(client, path.as_uri())  # analysis waits for the configuration answer
    hints = await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=20, character=0))))
    assert hints is None


PALLAS_CALL = textwrap.dedent("""\
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu

    def body(x_ref, o_ref):
        pl.semaphore_signal(pl.get_global(plgpu.SemaphoreType.REGULAR))

    k = pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct((8,), jnp.float32))
    """)


@pytest.mark.asyncio(loop_scope="function")
async def test_the_platform_setting_picks_what_a_bare_pallas_call_is_lowered_for(client: LanguageClient, tmp_path):
    """`platform` from the editor (VS Code's `pallas.platform`) reaches the analysis; left out, gpu applies."""
    (tmp_path / "kernel.py").write_text(PALLAS_CALL)
    uri = (tmp_path / "kernel.py").as_uri()
    client.set_configuration({"python": jax_python(), "debounceMs": 0, "platform": "tpu"}, section="pallas")
    await client.initialize_session(types.InitializeParams(
        capabilities=CAPABILITIES, workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="k")]))
    open_file(client, tmp_path / "kernel.py")
    (tpu,) = (await publish_for(client, uri, timeout=30.0)).diagnostics
    assert (tpu.code, tpu.message.split(";")[0]) == (
        "PAL003", 'JAX: "Unimplemented primitive in Pallas TPU lowering for tc: get_global"')
    client.set_configuration({"python": jax_python(), "debounceMs": 0, "platform": "gpu"}, section="pallas")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    (gpu,) = (await publish_for(client, uri, timeout=30.0)).diagnostics
    assert (gpu.code, gpu.message.split(";")[0]) == (
        "PAL003", 'JAX: "Unimplemented primitive in Pallas Triton lowering: get_global"')
