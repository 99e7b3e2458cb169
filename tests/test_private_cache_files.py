"""Cache files are used only when they are the user's alone (issue 19, item 2): a `jedi-imports`
file forged by another local user (in a shared `PALLAS_LSP_CACHE_DIR`, or in a `HOME` that sudo
kept) is ignored with a warning, a FIFO under a cache file's name hangs neither `check` nor `serve`,
and a planted symbolic link is neither followed nor written through. The real CLI and server, and a
real second user made with `useradd`."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import jax_python
from lsp_wire import WireServer

KERNEL = ("from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import mosaic_gpu as plgpu\n\n"
          "def body():\n    s = pl.get_global(plgpu.SemaphoreType.BARRIER)\n")
FOUND = "Found 1 error.\n"
PASSED = "All checks passed! (1 file checked)\n"

needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="making a second user (useradd) and writing as them needs root")


def check(kernel: Path, cache: Path | None, **env) -> subprocess.CompletedProcess:
    environment = {**os.environ, **env}
    if cache is not None:
        environment["PALLAS_LSP_CACHE_DIR"] = str(cache)
    return subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--python", jax_python(), str(kernel)],
                          capture_output=True, text=True, timeout=120, env=environment, stdin=subprocess.DEVNULL)


def warning(text: str) -> str:
    return f"pallas-lsp: warning: {text}\n"


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "project").mkdir()
    kernel = tmp_path / "project" / "kernel.py"
    kernel.write_text(KERNEL)
    return kernel


def forged(real: Path) -> bytes:
    """The jedi-imports file with every import answered by the stdlib's `json` (stamps made to fit):
    `pl.get_global` is then not Pallas's, and the kernel passes."""
    data = json.loads(real.read_bytes())
    found = os.stat(json.__file__)
    for entry in data["data"].values():
        entry[0] = [[json.__file__, "json", 1, "module", "json", "json"]]
        entry[1] = [[found.st_mtime_ns, found.st_size]]
    return json.dumps(data).encode()


@pytest.fixture
def other_user():
    """A real second local user, removed afterwards."""
    name = f"pallas-cache-{os.getpid()}"
    for attempt in range(20):  # another test may be adding a user at the same moment (/etc/passwd lock)
        done = subprocess.run(["useradd", "-m", "-s", "/bin/sh", name], capture_output=True, text=True)
        if done.returncode == 0:
            break
        time.sleep(0.5)
    else:
        pytest.fail(f"useradd failed: {done.stderr}")
    try:
        yield pwd.getpwnam(name)
    finally:
        subprocess.run(["userdel", "-r", name], capture_output=True)


def write_as(user, path: Path, data: bytes) -> None:
    """`path` written by `user` themselves (replacing what was there, as their folder rights allow)."""
    subprocess.run(["runuser", "-u", user.pw_name, "--", "sh", "-c", 'rm -f "$0" && cat > "$0"', str(path)],
                   input=data, check=True, timeout=60)


@pytest.fixture
def shared_folder():
    """A folder any user can reach (pytest's own tmp folder is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="pallas-lsp-shared-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


@needs_root
def test_a_cache_file_forged_by_another_user_is_ignored_with_a_warning(project, other_user, shared_folder):
    cache = shared_folder / "cache"
    first = check(project, cache)
    assert (first.returncode, first.stdout.endswith(FOUND), first.stderr) == (1, True, "")
    (real,) = cache.glob("jedi-imports-*.json")
    forgery = forged(real)

    # The forgery works when the file is the user's own: what an ownership check has to stop.
    control = shared_folder / "control"
    control.mkdir(mode=0o700)
    for file in cache.iterdir():
        shutil.copy(file, control / file.name)
    (control / real.name).write_bytes(forgery)
    assert check(project, control).stdout == PASSED

    # A shared cache folder: the other user replaces the file with the forgery.
    cache.chmod(0o777)
    write_as(other_user, real, forgery)
    assert real.stat().st_uid == other_user.pw_uid
    shared = check(project, cache)
    assert (shared.returncode, shared.stdout.endswith(FOUND)) == (1, True)
    assert shared.stderr == warning(f"not using the cache folder {cache}: others may write it (mode 0777)")

    # The folder made private again, the other user's file still in it.
    cache.chmod(0o700)
    kept = check(project, cache)
    assert (kept.returncode, kept.stdout.endswith(FOUND)) == (1, True)
    assert kept.stderr == warning(f"ignoring the cache file {real}: it belongs to another user "
                                  f"(uid {other_user.pw_uid})")
    assert real.stat().st_uid == 0  # replaced by this run's answers

    # A file of the user's own that the group may write.
    real.write_bytes(forgery)
    real.chmod(0o620)
    writable = check(project, cache)
    assert (writable.returncode, writable.stdout.endswith(FOUND)) == (1, True)
    assert writable.stderr == warning(f"ignoring the cache file {real}: others may write it (mode 0620)")


@needs_root
def test_a_home_kept_by_sudo_is_not_a_cache_for_root(project, other_user, tmp_path):
    """`sudo pallas-lsp check` keeping HOME: the cache folder is the other user's, so it is not used."""
    first = check(project, tmp_path / "cache")
    (real,) = (tmp_path / "cache").glob("jedi-imports-*.json")
    theirs = Path(other_user.pw_dir) / ".cache" / "pallas-lsp"
    subprocess.run(["runuser", "-u", other_user.pw_name, "--", "mkdir", "-p", str(theirs)], check=True, timeout=60)
    write_as(other_user, theirs / real.name, forged(real))
    env = {k: v for k, v in os.environ.items() if k not in ("PALLAS_LSP_CACHE_DIR", "XDG_CACHE_HOME")}
    done = subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--python", jax_python(), str(project)],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                          env={**env, "HOME": other_user.pw_dir})
    assert (first.returncode, done.returncode, done.stdout.endswith(FOUND)) == (1, 1, True)
    assert done.stderr == warning(f"not using the cache folder {theirs}: it belongs to another user "
                                  f"(uid {other_user.pw_uid})")
    assert sorted(p.name for p in theirs.iterdir()) == [real.name]  # nothing written there either


def cache_names(project: Path, tmp_path: Path) -> list[str]:
    """The names `check` gives its cache files for this project (the same in every cache folder)."""
    check(project, tmp_path / "names")
    return sorted(p.name for p in (tmp_path / "names").iterdir())


def test_fifos_under_the_cache_files_names_hang_neither_check_nor_serve(project, tmp_path, monkeypatch):
    from pallas_lsp.lsp.libraries import code_cache_file

    names = cache_names(project, tmp_path)
    assert [name.split("-")[0] for name in names] == ["imports", "jedi", "sys"]
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setenv("PALLAS_LSP_CACHE_DIR", str(cache))
    marshal_file = code_cache_file()
    for name in [*names, marshal_file.name]:
        os.mkfifo(cache / name)

    # Before: the server opened the marshal file at its start and waited for a writer forever.
    server = WireServer(env={**os.environ, "PALLAS_LSP_CACHE_DIR": str(cache)})
    try:
        answer = server.initialize(str(project.parent), python=jax_python())
        assert answer["result"]["serverInfo"]["name"] == "pallas-lsp"
        uri = project.as_uri()
        server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": KERNEL}}})
        published = server.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                                    and m["params"]["uri"] == uri)
        assert [d["code"] for d in published["params"]["diagnostics"]] == ["PAL001"]
        assert server.request(1, "shutdown")["result"] is None
        server.send({"jsonrpc": "2.0", "method": "exit"})
        assert server.exit_code() == 0
    finally:
        server.kill()
    assert warning(f"ignoring the cache file {marshal_file}: it is a FIFO, not a regular file").encode() \
        in server.stderr

    assert stat.S_ISREG(marshal_file.lstat().st_mode)  # replaced by a file of its own
    for name in names:  # FIFOs again for `check` (the server replaced those it wrote)
        (cache / name).unlink()
        os.mkfifo(cache / name)
    done = check(project, cache)
    assert (done.returncode, done.stdout.endswith(FOUND)) == (1, True)
    assert done.stderr == "".join(warning(f"ignoring the cache file {cache / name}: it is a FIFO, not a regular file")
                                  for name in names)
    assert all(stat.S_ISREG((cache / name).lstat().st_mode) for name in names)


def test_a_symbolic_link_under_a_cache_files_name_is_neither_followed_nor_written_through(project, tmp_path):
    names = cache_names(project, tmp_path)
    jedi_name = next(name for name in names if name.startswith("jedi-imports-"))
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    precious = tmp_path / "precious.json"
    precious.write_bytes((tmp_path / "names" / jedi_name).read_bytes())
    precious.chmod(0o600)
    os.symlink(precious, cache / jedi_name)
    done = check(project, cache)
    assert (done.returncode, done.stdout.endswith(FOUND)) == (1, True)
    assert done.stderr == warning(f"ignoring the cache file {cache / jedi_name}: it is a symbolic link, "
                                  "not a regular file")
    assert precious.read_bytes() == (tmp_path / "names" / jedi_name).read_bytes()
    assert stat.S_ISREG((cache / jedi_name).lstat().st_mode)  # the link itself was replaced


def test_a_cache_folder_that_is_a_symbolic_link_is_not_used(project, tmp_path):
    real = tmp_path / "elsewhere"
    real.mkdir(mode=0o700)
    os.symlink(real, tmp_path / "cache")
    done = check(project, tmp_path / "cache")
    assert (done.returncode, done.stdout.endswith(FOUND)) == (1, True)
    assert done.stderr == warning(f"not using the cache folder {tmp_path / 'cache'}: it is a symbolic link, "
                                  "not a folder")
    assert list(real.iterdir()) == []
