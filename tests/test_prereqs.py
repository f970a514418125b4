"""The one prerequisites step: without bubblewrap, `make test` and `course grade` stop and say what to run.

Every test here that needs bubblewrap to be missing builds a throw-away PATH holding everything on the real
PATH but ``bwrap``, and runs the prerequisites step in its "check only" mode (it must never apt-get).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from course.setup import prereqs

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "course" / "setup" / "prereqs.py"


def path_without(tmp_path: Path, *left_out: str) -> str:
    """A PATH of one folder linking every executable of the real PATH (the first of each name), but ``left_out``."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if not entry or not os.path.isdir(entry):
            continue
        for name in os.listdir(entry):
            source = os.path.join(entry, name)
            if name in left_out or (folder / name).exists() or not os.access(source, os.X_OK) \
                    or os.path.isdir(source):
                continue
            (folder / name).symlink_to(source)
    assert shutil.which("bwrap", path=str(folder)) is None or "bwrap" not in left_out
    return str(folder)


@pytest.fixture
def no_bwrap(tmp_path) -> dict[str, str]:
    """An environment whose PATH has no ``bwrap`` and whose prerequisites step only looks."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith("MAKE") and k != "COURSE_REQUIRE_SANDBOX"},
            "PATH": path_without(tmp_path, "bwrap"), "COURSE_PREREQS": "check"}


def run(command: list[str], env: dict[str, str], timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def test_the_step_runs_on_the_standard_library_alone_and_stops_make_test_without_bubblewrap(no_bwrap):
    done = run([sys.executable, "-I", "-S", str(SCRIPT), "--for", "test"], no_bwrap)  # -S: no site-packages
    assert done.returncode == 1, done
    # bubblewrap, and whatever else this machine lacks for make test (Slurm and munge on a fresh machine)
    assert re.search(r"bubblewrap( and [\w-]+)* (is|are) missing \(not installed: --check\)", done.stdout), done.stdout
    assert "the grader's sandbox" in done.stdout and "make test stops" in done.stdout  # what it serves, what is lost
    missing = [p for p in prereqs.needed("test") if p.name == "bubblewrap" or not p.found()]
    command, _ = prereqs.install_command(missing, prereqs.platform_name(), os.geteuid() == 0)
    assert re.search(rf"Install (it|them) with:  {re.escape(command)}", done.stdout) and "bubblewrap" in command
    assert "make test stops here: bubblewrap is missing: run make prereqs" in done.stderr


def test_make_lab_goes_on_without_bubblewrap(no_bwrap):
    done = run([sys.executable, "-I", str(SCRIPT), "--for", "lab"], no_bwrap)
    assert done.returncode == 0, done
    assert "bubblewrap is missing" in done.stdout and "make lab goes on without it" in done.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_test_stops_before_running_anything_without_bubblewrap(no_bwrap, tmp_path):
    # A venv of its own and a pytest flag that fails at once: were the step to let it through, nothing long runs.
    done = run(["make", "test", f"VENV={tmp_path / 'never-built'}", "PYTEST_ARGS=--no-such-flag"], no_bwrap)
    assert done.returncode != 0
    output = done.stdout + done.stderr
    assert "make test stops here: bubblewrap is missing: run make prereqs" in output
    assert "=== phase" not in output and "Creating" not in output and not (tmp_path / "never-built").exists()


def test_course_grade_refuses_without_bubblewrap_and_says_what_to_install(no_bwrap, tmp_path):
    (tmp_path / "class").mkdir()
    done = run([sys.executable, "-m", "course", "grade", str(tmp_path / "class"), "--out", str(tmp_path / "out")],
               no_bwrap)
    assert done.returncode == 2, done
    assert "cannot sandbox the learners' kernels" in done.stderr and "bubblewrap" in done.stderr
    assert "apt-get install bubblewrap" in done.stderr and "--unsandboxed" in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_containment_test_fails_under_make_test_without_bubblewrap_and_skips_elsewhere(no_bwrap, tmp_path):
    (tmp_path / "test_held.py").write_text(textwrap.dedent("""
        import pytest
        pytestmark = [pytest.mark.containment, pytest.mark.skipif(True, reason="no sandbox here")]
        def test_held():
            raise AssertionError("never runs")
    """))
    command = [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-q", "-rs",
               "-W", "ignore::pytest.PytestUnknownMarkWarning", str(tmp_path / "test_held.py")]
    env = {**no_bwrap, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT)])}
    skipped = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert "1 skipped" in skipped.stdout, skipped.stdout
    failed = subprocess.run(command, cwd=tmp_path, env={**env, "COURSE_REQUIRE_SANDBOX": "1"},
                            capture_output=True, text=True, timeout=120)
    assert failed.returncode == 1 and "1 failed" in failed.stdout, failed.stdout
    assert "bubblewrap is missing: run make prereqs" in failed.stdout and "never runs" not in failed.stdout


def test_each_target_needs_what_it_uses_and_only_make_test_and_e2e_stop():
    names = {target: {p.name for p in prereqs.needed(target)} for target in prereqs.TARGETS}
    assert {"bubblewrap", "swig", "C compiler"} <= names["test"] and {"swig", "C compiler"} <= names["lab"]
    assert names["e2e"] == {"chromium"} and names["all"] == {p.name for p in prereqs.PREREQUISITES}
    stops = {target: {p.name for p in prereqs.PREREQUISITES if target in p.required_by} for target in prereqs.TARGETS}
    assert stops["test"] == {"bubblewrap"} and stops["lab"] == set() and stops["e2e"] == {"chromium"}
    assert "chromium" not in stops["ci"] and {"bubblewrap", "swig", "make"} <= stops["ci"]


def test_the_one_command_per_platform():
    by_name = {p.name: p for p in prereqs.PREREQUISITES}
    wanted = [by_name["bubblewrap"], by_name["swig"], by_name["C compiler"]]
    assert prereqs.install_command(wanted, "debian", root=False) == ("sudo apt-get install -y bubblewrap swig gcc", [])
    assert prereqs.install_command(wanted, "debian", root=True)[0] == "apt-get install -y bubblewrap swig gcc"
    assert prereqs.install_command(wanted, "fedora", root=False)[0] == "sudo dnf install -y bubblewrap swig gcc"
    assert prereqs.install_command(wanted, "arch", root=False)[0] == "sudo pacman -S --needed bubblewrap swig gcc"
    command, advice = prereqs.install_command(wanted + [by_name["chromium"]], "macos", root=False)
    assert command == "brew install swig && brew install --cask chromium"
    assert any("needs Linux" in line for line in advice) and any("xcode-select --install" in line for line in advice)


def test_it_installs_as_root_with_apt_get_and_only_prints_the_command_otherwise(monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(prereqs.subprocess, "run",
                        lambda command, **kw: calls.append(command) or subprocess.CompletedProcess(command, 0))
    monkeypatch.setattr(prereqs, "platform_name", lambda: "debian")
    monkeypatch.setattr(prereqs.shutil, "which", lambda name, *a, **k: None if name in ("bwrap", "sudo") else "/bin/x")
    monkeypatch.setattr(prereqs.os, "geteuid", lambda: 1000)  # no root, no sudo: nothing is run
    assert prereqs.run("test", check_only=False) == 1 and calls == []
    assert "sudo apt-get install -y bubblewrap" in capsys.readouterr().out
    monkeypatch.setattr(prereqs.os, "geteuid", lambda: 0)
    assert prereqs.run("test", check_only=False) == 1  # the fake apt-get installed nothing, so it still stops
    assert calls[0] == ["apt-get", "update", "-qq"]
    assert calls[1] == ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "bubblewrap"]
    calls.clear()
    assert prereqs.run("test", check_only=True) == 1 and calls == []  # --check never installs


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_every_make_target_that_builds_the_venv_runs_the_step_for_itself():
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}

    def dry(target: str) -> str:
        return subprocess.run(["make", "-n", target], cwd=ROOT, env=env, capture_output=True, text=True,
                              check=True).stdout

    assert "course/setup/prereqs.py --for lab" in dry("lab") and "course.setup.storage_build --background" in dry("lab")
    test = dry("test")
    assert "course/setup/prereqs.py --for test" in test and "export COURSE_REQUIRE_SANDBOX=1" in test
    assert test.index("course/setup/prereqs.py") < test.index("pip install")  # before anything is built
    assert "course/setup/prereqs.py --for e2e" in dry("e2e") and "course/setup/prereqs.py --for all" in dry("prereqs")
    ci = (ROOT / ".ci" / "run").read_text()
    assert "course/setup/prereqs.py --for ci" in ci and "apt-get install -y -qq chromium" not in ci  # no second copy
