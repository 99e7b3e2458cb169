"""`check --fix` never loses the user's code: edits made during the run are kept, writes are atomic
(a failed or killed write leaves the old file or the new one, never a mix), read-only files are
reported and skipped, modes, symlinks and encodings are kept."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, jax_python
from golden_cases import GOLDEN
from pallas_lsp import cli
from pallas_lsp.fixes import fix_all as fix_all_module
from pallas_lsp.fixes import write_back
from pallas_lsp.fixes.write_back import write_fixed_file
from pallas_lsp.output import display_path

CASE = GOLDEN / "scratch_list_plgpu_smem"
BEFORE, AFTER = (CASE / "before.py").read_text(), (CASE / "after.py").read_text()
FIX = "PAL001 Allocate tile as scratch (scratch_types)"  # its one fix, as `check --fix` names it


def run_cli(*args, cwd, **kwargs):
    return subprocess.run([sys.executable, "-m", "pallas_lsp", "check", "--python", jax_python(), *args],
                          capture_output=True, text=True, cwd=cwd, timeout=300, **kwargs)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".pallas-lsp-tmp"))


def test_an_edit_made_while_fixes_are_computed_is_kept_and_reported(tmp_path, monkeypatch, capsys):
    """The user appends a line while `--fix` works: the file keeps it, nothing is written over it."""
    kernel = tmp_path / "kernel.py"
    kernel.write_text(BEFORE)
    real_fix_all = fix_all_module.fix_all

    def fix_all_then_user_edits(*args, **kwargs):
        result = real_fix_all(*args, **kwargs)
        with open(kernel, "a") as file:
            file.write("# typed by the user meanwhile\n")
        return result

    monkeypatch.setattr(fix_all_module, "fix_all", fix_all_then_user_edits)
    status = cli.main(["check", "--python", jax_python(), "--fix", "--format", "json", str(kernel)])
    assert kernel.read_text() == BEFORE + "# typed by the user meanwhile\n"
    err = capsys.readouterr().err
    assert err == (f"pallas-lsp: warning: {display_path(str(kernel))} not rewritten: it changed while the fixes were computed "
                   "(run again to fix the new text)\n"
                   f"pallas-lsp: warning: fix not applied: {display_path(str(kernel))}:11:10: {FIX}\n"
                   "pallas-lsp: applied 0 of 1 fix in 0 files; 1 not applied, their files unchanged (see above)\n")
    assert status == 1  # the finding is still there, and reported
    assert leftovers(tmp_path) == []


def test_an_edit_made_while_the_new_text_is_written_is_kept(tmp_path, monkeypatch):
    """Stamp and content are checked again after the temporary file is written, just before the rename."""
    kernel = tmp_path / "kernel.py"
    kernel.write_text(BEFORE)
    real_fsync = os.fsync

    def fsync_then_user_saves(fd):
        real_fsync(fd)
        with open(kernel, "a") as file:
            file.write("x = 1\n")

    monkeypatch.setattr(write_back.os, "fsync", fsync_then_user_saves)
    skipped = write_fixed_file(str(kernel), BEFORE, AFTER)
    assert str(skipped) == f"{kernel} not rewritten: it changed while the fixes were written (run again to fix the new text)"
    assert kernel.read_text() == BEFORE + "x = 1\n"
    assert leftovers(tmp_path) == []


def test_read_only_file_is_reported_and_the_other_files_fixed(tmp_path):
    (tmp_path / "locked.py").write_text(BEFORE)
    (tmp_path / "open.py").write_text(BEFORE)
    os.chmod(tmp_path / "locked.py", 0o444)
    run = run_cli("--fix", "--format", "json", ".", cwd=tmp_path)
    assert run.stderr == ("pallas-lsp: warning: locked.py not rewritten: it is read-only\n"
                          f"pallas-lsp: warning: fix not applied: locked.py:11:10: {FIX}\n"
                          "pallas-lsp: applied 1 of 2 fixes in 1 file; 1 not applied, their files unchanged (see above)\n")
    assert (tmp_path / "locked.py").read_text() == BEFORE
    assert (tmp_path / "open.py").read_text() == AFTER
    assert run.returncode == 1 and '"path": "locked.py"' in run.stdout


def test_mode_symlink_and_encoding_are_kept(tmp_path):
    real = tmp_path / "real.py"
    real.write_bytes(b"\xef\xbb\xbf" + BEFORE.replace("\n", "\r\n").encode())
    os.chmod(real, 0o751)
    (tmp_path / "link.py").symlink_to(real)
    assert write_fixed_file(str(tmp_path / "link.py"), BEFORE.replace("\n", "\r\n"), AFTER.replace("\n", "\r\n")) is None
    assert (tmp_path / "link.py").is_symlink()
    assert real.read_bytes() == b"\xef\xbb\xbf" + AFTER.replace("\n", "\r\n").encode()
    assert os.stat(real).st_mode & 0o7777 == 0o751


def test_latin1_cookie_file_is_written_back_in_latin1(tmp_path):
    path = tmp_path / "kernel.py"
    old = "# -*- coding: latin-1 -*-\n# caf\xe9\nx = 1\n"
    path.write_bytes(old.encode("latin-1"))
    assert write_fixed_file(str(path), old, old + "y = 2\n") is None
    assert path.read_bytes() == (old + "y = 2\n").encode("latin-1")
    skipped = write_fixed_file(str(path), old + "y = 2\n", old + "z = '\u4e2d'\n")
    assert str(skipped) == f"{path} not rewritten: the fixed text cannot be encoded in the file's encoding"


def test_undecodable_file_is_never_rewritten(tmp_path):
    path = tmp_path / "kernel.py"
    path.write_bytes(b"x = 1  # \xff\n")
    skipped = write_fixed_file(str(path), "x = 1  # \ufffd\n", "x = 2  # \ufffd\n")
    assert str(skipped) == f"{path} not rewritten: its bytes do not decode losslessly in its encoding"
    assert path.read_bytes() == b"x = 1  # \xff\n"


# ---- crash tests: the file is always the old text or the new one ---------------------------------


def test_a_write_cut_short_by_ulimit_leaves_the_old_file(tmp_path):
    """`ulimit -f` (as a full disk or a quota would) makes the write fail partway."""
    path = tmp_path / "kernel.py"
    path.write_text(BEFORE)
    limit = len(BEFORE) // 2

    def small_file_limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    run = run_cli("--no-jedi", "--fix", "kernel.py", cwd=tmp_path, preexec_fn=small_file_limit)
    assert "pallas-lsp: warning: kernel.py not rewritten: writing failed: File too large; the file is unchanged\n" in run.stderr
    assert path.read_text() == BEFORE
    assert leftovers(tmp_path) == []


FAILURE_POINTS = ["mkstemp", "write", "fsync", "chmod", "recheck", "replace"]


@pytest.mark.parametrize("point", FAILURE_POINTS)
def test_a_failure_at_any_step_leaves_the_old_file(tmp_path, monkeypatch, point):
    path = tmp_path / "kernel.py"
    path.write_text(BEFORE)

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    if point == "mkstemp":
        monkeypatch.setattr(write_back.tempfile, "mkstemp", fail)
    elif point == "write":
        real_fdopen = open

        class FailingFile:
            def __init__(self, handle):
                self.handle = handle

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.handle.close()

            def write(self, data):
                self.handle.write(data[: len(data) // 3])
                self.handle.flush()
                fail()

        monkeypatch.setattr(write_back, "open", lambda f, mode="r", *a, **k: FailingFile(real_fdopen(f, mode, *a, **k))
                            if isinstance(f, int) else real_fdopen(f, mode, *a, **k), raising=False)
    elif point == "recheck":
        calls = []
        real_read = write_back._read

        def read(target):
            calls.append(target)
            if len(calls) == 2:
                fail()
            return real_read(target)

        monkeypatch.setattr(write_back, "_read", read)
    else:
        monkeypatch.setattr(write_back.os, point, fail)
    skipped = write_fixed_file(str(path), BEFORE, AFTER)
    if point == "mkstemp":
        assert str(skipped) == f"{path} not rewritten: cannot create a temporary file beside it: No space left on device"
    else:
        assert str(skipped) == f"{path} not rewritten: writing failed: No space left on device; the file is unchanged"
    assert path.read_text() == BEFORE
    assert leftovers(tmp_path) == []


def test_killed_at_random_points_the_file_is_always_the_old_or_the_new_text():
    """A process rewriting a file back and forth, killed (SIGKILL) at random moments
    (bench/reliability_kill_fix_writes.py; docs/reliability.md has a larger run)."""
    run = subprocess.run([sys.executable, str(REPO / "bench" / "reliability_kill_fix_writes.py"), "8"],
                         capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    counts = json.loads(run.stdout)
    assert counts["other"] == 0 and counts["old"] + counts["new"] == 8, counts


# ---- owner and group (issue 19, item 10) --------------------------------------------------------

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="creates a second user (useradd) and gives files to it: needs root")


@pytest.fixture(scope="module")
def second_user():
    """A real second user, with a supplementary group of its own beside its primary one; removed afterwards."""
    import grp
    import pwd
    import uuid

    name = f"pl{uuid.uuid4().hex[:8]}"
    subprocess.run(["groupadd", f"{name}x"], check=True, capture_output=True)
    try:
        subprocess.run(["useradd", "-M", "-G", f"{name}x", name], check=True, capture_output=True)
        try:
            yield pwd.getpwnam(name), grp.getgrnam(f"{name}x")
        finally:
            subprocess.run(["userdel", name], check=True, capture_output=True)
    finally:
        subprocess.run(["groupdel", f"{name}x"], check=True, capture_output=True)


@pytest.fixture
def shared_folder(second_user):
    """A folder outside root's private pytest folder (mode 0700), the second user's."""
    import shutil
    import tempfile

    user, _ = second_user
    folder = Path(tempfile.mkdtemp(prefix="pallas-lsp-owner-"))
    os.chown(folder, user.pw_uid, user.pw_gid)
    yield folder
    shutil.rmtree(folder)


def kernel_owned_by(folder: Path, uid: int, gid: int, mode: int) -> Path:
    kernel = folder / "kernel.py"
    kernel.write_text(BEFORE)
    os.chown(kernel, uid, gid)
    os.chmod(kernel, mode)
    return kernel


def owner(path: Path) -> tuple[int, int, int]:
    stat = os.stat(path)
    return stat.st_uid, stat.st_gid, stat.st_mode & 0o7777


def run_cli_without_chown(*args, cwd, groups=()):
    """The real CLI as a process that may not give files away: root without CAP_CHOWN, which the
    kernel holds to a user's rules (a group of its own to a file of its own, nothing else). A real
    non-root user cannot run the test interpreter here: it lives under root's 0700 home."""
    command = ["setpriv", "--inh-caps=-chown", "--bounding-set=-chown", f"--groups={','.join(map(str, groups))}"
               if groups else "--clear-groups", "--", sys.executable, "-m", "pallas_lsp", "check", "--python",
               jax_python(), *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=300)


@needs_root
def test_root_fixing_another_users_file_keeps_its_owner_group_and_mode(shared_folder, second_user):
    """Before: the rewritten file was root's (`root:root`), the user could no longer write it."""
    user, group = second_user
    kernel = kernel_owned_by(shared_folder, user.pw_uid, group.gr_gid, 0o640)
    run = run_cli("--fix", "kernel.py", cwd=shared_folder)
    assert run.returncode == 0, run.stderr
    assert kernel.read_text() == AFTER
    assert owner(kernel) == (user.pw_uid, group.gr_gid, 0o640)
    assert leftovers(shared_folder) == []


@needs_root
def test_a_process_fixing_a_file_of_another_group_of_its_own_keeps_that_group(tmp_path, second_user):
    """A new file gets its writer's primary group: a file in a project group must stay in it."""
    _, group = second_user
    kernel = kernel_owned_by(tmp_path, 0, group.gr_gid, 0o664)
    run = run_cli_without_chown("--fix", "kernel.py", cwd=tmp_path, groups=[group.gr_gid])
    assert run.returncode == 0, run.stderr
    assert kernel.read_text() == AFTER
    assert owner(kernel) == (0, group.gr_gid, 0o664)


@needs_root
def test_a_process_does_not_take_over_another_users_file_it_may_write(tmp_path, second_user):
    """A group-writable file of another user's: rewriting it would make it the writer's."""
    user, group = second_user
    kernel = kernel_owned_by(tmp_path, user.pw_uid, group.gr_gid, 0o664)
    run = run_cli_without_chown("--fix", "kernel.py", cwd=tmp_path, groups=[group.gr_gid])
    assert run.stderr == (f"pallas-lsp: warning: kernel.py not rewritten: it belongs to {user.pw_name}:{group.gr_name}, "
                          "and a rewritten file would not (run as its owner, or as root)\n"
                          f"pallas-lsp: warning: fix not applied: kernel.py:11:10: {FIX}\n"
                          "pallas-lsp: applied 0 of 1 fix in 0 files; 1 not applied, their files unchanged (see above)\n")
    assert run.returncode == 1
    assert kernel.read_text() == BEFORE and owner(kernel) == (user.pw_uid, group.gr_gid, 0o664)
    assert leftovers(tmp_path) == []
