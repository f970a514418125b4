"""WiredTiger's build: lesson 04 says how far it has got, and a second environment reuses the wheel built."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from course.setup import storage_build
from course.toolkit.storage_costs import available

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def build_state(tmp_path, monkeypatch):
    """The build's status, log and lock in ``tmp_path``, and no wiredtiger importable."""
    monkeypatch.setattr(storage_build, "_beside_venv", lambda suffix: tmp_path / f"course-wiredtiger.{suffix}")
    monkeypatch.setitem(sys.modules, "wiredtiger", None)  # import wiredtiger raises ImportError
    monkeypatch.setattr(storage_build, "installed_version", lambda: None)
    monkeypatch.setattr(storage_build, "missing_tools", lambda: [])
    return tmp_path


def write_status(**fields) -> None:
    storage_build.status_file().write_text(json.dumps({"requirement": storage_build.requirement(),
                                                       "python": sys.version.split()[0], **fields}))


def test_lesson_04_says_wiredtiger_is_still_being_built_while_a_build_holds_the_lock(build_state):
    write_status(state="building", started=time.time() - 42)
    with open(storage_build.lock_file(), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ready, why = available()
        assert not ready and why.startswith("WiredTiger is still being built (42 s so far")
        assert "run this cell again" in why
    ready, why = available()  # the lock is free: no build runs any more (it was stopped)
    assert not ready and "still being built" not in why and "`make venv` builds it" in why


def test_a_failed_build_is_reported_and_not_retried_in_the_background(build_state, monkeypatch, capsys):
    write_status(state="failed", started=time.time() - 300, seconds=300)
    ready, why = available()
    assert not ready and "the WiredTiger build failed" in why and str(storage_build.log_file()) in why
    monkeypatch.setattr(storage_build.subprocess, "Popen", lambda *a, **k: pytest.fail("started a build"))
    assert storage_build.start(background=True) == 0
    assert "the last WiredTiger build failed" in capsys.readouterr().out


def test_without_swig_nothing_is_built_and_the_note_says_what_installs_it(build_state, monkeypatch, capsys):
    monkeypatch.setattr(storage_build, "missing_tools", lambda: ["swig"])
    monkeypatch.setattr(storage_build.subprocess, "Popen", lambda *a, **k: pytest.fail("started a build"))
    assert storage_build.start(background=False) == 0
    assert "it needs swig (make prereqs installs them)" in capsys.readouterr().out
    assert "`make prereqs` installs them" in available()[1]


def test_the_wheel_is_kept_in_the_course_cache_and_pip_keeps_its_own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path / "cache"))
    assert storage_build.wheel_cache() == tmp_path / "cache" / "wheels"
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["storage"]
    assert storage_build.requirement() == extra[0]
    build, install = storage_build._commands()
    cache = str(tmp_path / "cache" / "wheels")
    assert build[-1] == install[-1] == extra[0]
    assert build[build.index("--wheel-dir") + 1] == cache and install[install.index("--find-links") + 1] == cache
    assert "--no-cache-dir" not in build + install and "--prefer-binary" in install


def _cached_wheel() -> Path | None:
    """A wiredtiger wheel built on this machine for this Python: the course's cache, else pip's."""
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    pips = Path.home() / ".cache" / "pip" / "wheels"
    found = storage_build.cached_wheels() or (sorted(pips.rglob(f"wiredtiger-*-{tag}-{tag}-*.whl"))
                                              if pips.is_dir() else [])
    return found[-1] if found else None


@pytest.mark.slow
def test_a_second_environment_reuses_the_built_wheel_in_the_background_with_pips_cache_off(tmp_path):
    wheel = _cached_wheel()
    if wheel is None:
        pytest.skip("no WiredTiger wheel has been built on this machine yet for this Python")
    cache = tmp_path / "cache" / "wheels"
    cache.mkdir(parents=True)
    (cache / wheel.name).write_bytes(wheel.read_bytes())
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = str(venv / "bin" / "python")
    env = {**os.environ, "COURSE_CACHE_DIR": str(tmp_path / "cache"), "PIP_NO_CACHE_DIR": "1"}
    start = time.monotonic()
    started = subprocess.run([python, "-m", "course.setup.storage_build", "--background"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=120)
    assert started.returncode == 0, started.stderr
    assert "Building WiredTiger in the background" in started.stdout and time.monotonic() - start < 30
    status = venv / "course-wiredtiger.json"
    while json.loads(status.read_text()).get("state") == "building":  # replaced whole, never half-written
        assert time.monotonic() - start < 180, (venv / "course-wiredtiger.log").read_text()[-2000:]
        time.sleep(0.5)
    log = (venv / "course-wiredtiger.log").read_text()
    assert json.loads(status.read_text())["state"] == "built", log[-2000:]
    assert "Building wheel for wiredtiger" not in log  # the wheel was reused, not built again
    done = subprocess.run([python, "-c", "import wiredtiger; print(wiredtiger.wiredtiger_version()[0])"],
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.startswith("WiredTiger "), done.stderr
