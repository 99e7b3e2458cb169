"""A fix that edits two files (the kernel body in one module, its launch in another) is written whole
or not at all by `check --fix`: when one of its files cannot be written, the other is left as it was,
the fix is named with the reason, and the run exits 1. Before, the writable file was rewritten alone
(the kernel broken), the run exited 0 and the next check said "All checks passed!"."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, jax_python
from pallas_lsp.analysis import Project
from pallas_lsp.analysis.findings import Finding, Fix, Span, TextEdit
from pallas_lsp.fixes import write_back
from pallas_lsp.fixes.fix_all import fix_files
from pallas_lsp.fixes.write_groups import fix_groups

CORPUS = REPO / "tests" / "fixes" / "corpus"
GOLDEN = REPO / "tests" / "fixes" / "golden" / "scratch_list_plgpu_smem"
FINDING = ('bodies.py:8:16: PAL001 JAX: "get_global only supports semaphores, got Ref<gmem>{float32[128]}"; '
           "pass the array as a kernel input.")
FIX = "fix not applied: bodies.py:8:16: PAL001 Pass residual as a kernel operand"


def check(*args, cwd, command=()) -> subprocess.CompletedProcess:
    return subprocess.run([*command, sys.executable, "-m", "pallas_lsp", "check", "--python", jax_python(), *args],
                          capture_output=True, text=True, cwd=cwd, timeout=300)


@pytest.fixture
def layout(tmp_path) -> Path:
    """A body in bodies.py launched from launch.py (one two-file fix), beside an unrelated kernel
    (single.py, one fix of its own)."""
    for source in (CORPUS / "other_module_body").glob("*.py"):
        shutil.copy(source, tmp_path / source.name)
    shutil.copy(GOLDEN / "before.py", tmp_path / "single.py")
    return tmp_path


def contents(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


@pytest.mark.parametrize("locked", ["bodies.py", "launch.py"])
def test_a_read_only_file_of_a_two_file_fix_leaves_both_unchanged(layout, locked):
    before = contents(layout)
    os.chmod(layout / locked, 0o444)
    run = check("--fix", ".", cwd=layout)
    other = {"bodies.py": "launch.py", "launch.py": "bodies.py"}[locked]
    assert run.stderr == (f"pallas-lsp: warning: {locked} not rewritten: it is read-only; {other} is not rewritten "
                          "either (a fix is written whole or not at all)\n"
                          f"pallas-lsp: warning: {FIX}\n"
                          "pallas-lsp: applied 1 of 2 fixes in 1 file; 1 not applied, their files unchanged (see above)\n")
    after = contents(layout)
    assert {name: after[name] for name in ("bodies.py", "launch.py")} == {name: before[name] for name in ("bodies.py", "launch.py")}
    assert after["single.py"] == (GOLDEN / "after.py").read_bytes()  # a fix of its own files is still applied
    assert run.returncode == 1 and run.stdout.startswith(FINDING) and run.stdout.endswith("Found 1 error.\n")
    again = check(".", cwd=layout)  # the next check still sees the finding
    assert again.returncode == 1 and again.stdout.startswith(FINDING), again.stdout


needs_root = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                                reason="gives a file to another user and drops CAP_CHOWN (setpriv): needs root")


@needs_root
def test_a_file_of_another_owner_in_a_two_file_fix_leaves_both_unchanged(layout):
    """A process that may not give files away (root without CAP_CHOWN, held to a user's rules) would
    take over `nobody`'s launch.py by rewriting it: so neither file of the fix is written."""
    nobody = pwd.getpwnam("nobody")
    os.chown(layout / "launch.py", nobody.pw_uid, nobody.pw_gid)
    os.chmod(layout / "launch.py", 0o666)
    before = contents(layout)
    run = check("--fix", ".", cwd=layout,
                command=("setpriv", "--inh-caps=-chown", "--bounding-set=-chown", "--clear-groups", "--"))
    owner = write_back._owner(os.stat(layout / "launch.py"))  # nobody:nogroup, as the system names them
    assert run.stderr == (f"pallas-lsp: warning: launch.py not rewritten: it belongs to {owner}, and a rewritten file "
                          "would not (run as its owner, or as root); bodies.py is not rewritten either (a fix is "
                          "written whole or not at all)\n"
                          f"pallas-lsp: warning: {FIX}\n"
                          "pallas-lsp: applied 1 of 2 fixes in 1 file; 1 not applied, their files unchanged (see above)\n")
    after = contents(layout)
    assert (after["bodies.py"], after["launch.py"]) == (before["bodies.py"], before["launch.py"])
    assert os.stat(layout / "launch.py").st_uid == nobody.pw_uid
    assert run.returncode == 1 and run.stdout.startswith(FINDING)


def fixed_texts(folder: Path) -> dict[str, tuple[str, str]]:
    """{path: (old, new)} of the two-file fix, as `check --fix` computes it."""
    project = Project(root=str(folder), python=jax_python())
    changed, _ = fix_files(project, [str(folder / "bodies.py"), str(folder / "launch.py")])
    assert sorted(Path(p).name for p in changed) == ["bodies.py", "launch.py"]
    return changed


def test_a_file_changed_since_it_was_read_leaves_the_whole_group_unchanged(layout):
    changes = fixed_texts(layout)
    launch = str(layout / "launch.py")
    with open(launch, "a") as file:
        file.write("# saved by the user meanwhile\n")
    before = contents(layout)
    skipped = write_back.write_group(changes)
    assert str(skipped) == f"{launch} not rewritten: it changed while the fixes were computed (run again to fix the new text)"
    assert contents(layout) == before  # bodies.py too, and no temporary file left


def test_a_rename_that_fails_mid_group_puts_back_the_files_written_before_it(layout, monkeypatch):
    """Every check passed, the first file is renamed, the second rename fails (as on a full or
    vanished folder): the first file gets its old bytes back, owner and mode kept."""
    changes = fixed_texts(layout)
    os.chmod(layout / "bodies.py", 0o640)
    before = contents(layout)
    real_replace = os.replace
    renamed = []

    def replace(source, target):
        if len(renamed) == 1:
            renamed.append(target)
            raise OSError(28, "No space left on device")
        renamed.append(target)
        return real_replace(source, target)

    monkeypatch.setattr(write_back.os, "replace", replace)
    skipped = write_back.write_group(changes)
    monkeypatch.undo()
    first, second = (Path(p).name for p in renamed[:2])
    assert str(skipped) == (f"{layout / second} not rewritten: writing failed: No space left on device; the file is "
                            "unchanged, and the files written before it are put back")
    assert contents(layout) == before
    assert os.stat(layout / "bodies.py").st_mode & 0o7777 == 0o640 and {first, second} == {"bodies.py", "launch.py"}


def test_a_group_that_can_be_written_is_written_whole(layout):
    changes = fixed_texts(layout)
    assert write_back.write_group(changes) is None
    assert {Path(p).name: Path(p).read_text() for p in changes} == {Path(p).name: new for p, (_, new) in changes.items()}
    assert sorted(contents(layout)) == ["bodies.py", "launch.py", "single.py"]  # no temporary file left


def test_fixes_that_share_a_file_are_written_as_one_group(tmp_path):
    """a+b by one fix, b+c by another: a, b and c together (transitively); d alone."""
    paths = {name: str(tmp_path / f"{name}.py") for name in "abcd"}
    changed = {path: ("old\n", "new\n") for path in paths.values()}
    span = Span(0, 0, 0, 3)

    def fix(*names):
        finding = Finding(paths[names[0]], span, "PAL001", "get-global-not-semaphore", "error", "m")
        return finding, Fix(f"pallas-lsp (PAL001): edit {'+'.join(names)}", tuple(TextEdit(paths[n], span, "new") for n in names))

    chosen = [fix("a", "b"), fix("d"), fix("c", "b")]
    groups = fix_groups(changed, chosen)
    assert [sorted(Path(p).stem for p in group.changes) for group in groups] == [["a", "b", "c"], ["d"]]
    assert [[f.title.split("edit ")[1] for _, f in group.fixes] for group in groups] == [["a+b", "c+b"], ["d"]]
