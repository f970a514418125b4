"""The process limit holds for a root grader too: a pids cgroup around each sandbox."""

import os
import subprocess
import sys

import pytest

from course.grading import process_limit

pytestmark = pytest.mark.containment


def test_an_ordinary_grader_needs_no_cgroup(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert process_limit.wrap(["bwrap", "x"], "n", 256) == ["bwrap", "x"]
    assert process_limit.enforced()


@pytest.mark.skipif(process_limit.hierarchy() is None, reason="needs root and a writable pids cgroup")
def test_a_root_grader_caps_processes_with_a_cgroup():
    name = f"test-{os.getpid()}"
    forks = ("import os\nn = 0\ntry:\n    for _ in range(200):\n        if os.fork() == 0:\n"
             "            import time; time.sleep(3); os._exit(0)\n        n += 1\nexcept OSError:\n    pass\nprint(n)")
    command = process_limit.wrap([sys.executable, "-c", forks], name, 40)
    assert command[0] == process_limit.TRAMPOLINE_SHELL and command[-3:] == [sys.executable, "-c", forks]
    started = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert started.returncode == 0, started.stderr
    assert int(started.stdout.split()[-1]) < 40  # the cgroup stopped the forks (RLIMIT_NPROC would not, as root)
    process_limit.remove(name, wait=10)
    assert not (process_limit.hierarchy() / process_limit.PARENT / name).exists()


@pytest.mark.skipif(process_limit.hierarchy() is None, reason="needs root and a writable pids cgroup")
def test_a_sandbox_that_cannot_enter_its_cgroup_never_starts(tmp_path):
    name = f"test-gone-{os.getpid()}"
    marker = tmp_path / "ran"
    command = process_limit.wrap([sys.executable, "-c", f"open({str(marker)!r}, 'w')"], name, 40)
    process_limit.remove(name, wait=10)  # the cgroup is gone before the trampoline runs
    started = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert started.returncode != 0 and not marker.exists()
