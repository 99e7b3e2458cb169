"""The setup scripts wait for another apt-get or dpkg instead of failing (issue 22: README command 2
failed while another apt-get ran). Real apt-get against a private apt tree, with its real locks held."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

HOLD_LOCK = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o640)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # what apt-get and dpkg take
print("held", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def apt_tree(tmp_path):
    """An apt configuration whose lists, dpkg status and cache (and so their locks) lie in tmp_path."""
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        pytest.skip("needs apt-get, run as root (sudo would not pass APT_CONFIG on)")
    for folder in ("lists/partial", "dpkg", "cache", "sources.list.d"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "dpkg" / "status").write_text("")
    (tmp_path / "sources.list").write_text("")
    config = tmp_path / "apt.conf"
    config.write_text(f'Dir::State::Lists "{tmp_path}/lists";\nDir::State::status "{tmp_path}/dpkg/status";\n'
                      f'Dir::Cache "{tmp_path}/cache";\nDir::Etc::SourceList "{tmp_path}/sources.list";\n'
                      f'Dir::Etc::SourceParts "{tmp_path}/sources.list.d";\n')
    return tmp_path, {**os.environ, "APT_CONFIG": str(config)}


@pytest.mark.parametrize("command, lock", [("update -qq", "lists/lock"), ("install -y -qq", "dpkg/lock-frontend")])
def test_apt_get_waits_while_another_holds_the_lock_says_so_once_and_then_runs(apt_tree, command, lock):
    tree, env = apt_tree
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(tree / lock)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        holder_name = Path(f"/proc/{holder.pid}/comm").read_text().strip()
        setup = subprocess.Popen(["bash", "-c", f". scripts/apt-when-free.sh && apt_get_when_free {command}",
                                  "setup-test"], cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
        said = setup.stderr.readline()  # only once apt-get has found the lock held
        assert said == (f"setup-test: waiting for another apt-get or dpkg to finish (Could not get lock "
                        f"{tree / lock}. It is held by process {holder.pid} ({holder_name}))\n")
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    assert setup.wait(timeout=600) == 0
    assert setup.stderr.read() == ""


def test_both_setup_scripts_run_apt_get_only_through_the_shared_wait():
    for script in ("setup-editors.sh", "setup-vscode.sh"):
        text = (REPO / "scripts" / script).read_text()
        assert ". scripts/apt-when-free.sh" in text, script
        calls = [line.strip() for line in text.splitlines() if re.search(r"\bapt-get (update|install)", line)
                 and not line.lstrip().startswith(("#", "echo"))]
        assert calls == [], script
