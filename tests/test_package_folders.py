"""Module names and import roots: found once per folder while file events are trusted (`check`), and
found again after a file event (an `__init__.py` created or deleted); read from disk every time otherwise."""

import os

from pallas_lsp.analysis import Project


def _tree(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "sub" / "mod.py").write_text("x = 1\n")
    return str(tmp_path / "pkg" / "sub" / "mod.py")


def test_a_trusted_project_sees_a_new_init_after_the_file_event(tmp_path):
    project = Project(root=str(tmp_path), use_jedi=False)
    project.index.trust_events = True
    path = _tree(tmp_path)
    assert project.module_name(path) == "mod"
    assert project.import_roots(path)[0] == str(tmp_path / "pkg" / "sub")
    init = tmp_path / "pkg" / "sub" / "__init__.py"
    init.write_text("")
    assert project.module_name(path) == "mod"  # no event yet: what was found is kept
    project.file_changed(str(init))
    assert project.module_name(path) == "pkg.sub.mod"
    assert project.module_name(str(init)) == "pkg.sub"
    assert project.import_roots(path) == [str(tmp_path), str(tmp_path / "pkg" / "sub")]
    os.remove(init)
    project.file_changed(str(init))
    assert project.module_name(path) == "mod"


def test_an_untrusted_project_reads_the_disk_at_each_question(tmp_path):
    project = Project(root=str(tmp_path), use_jedi=False)
    path = _tree(tmp_path)
    assert project.module_name(path) == "mod"
    (tmp_path / "pkg" / "sub" / "__init__.py").write_text("")
    assert project.module_name(path) == "pkg.sub.mod"
    assert project.import_roots(path)[0] == str(tmp_path)
