"""The ``course`` command line: doctor, reset, and usage errors."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from course.backends import open_backend
from course.cli import main


@pytest.fixture
def mongomock_env(monkeypatch):
    monkeypatch.delenv("MONGODB_URI", raising=False)
    monkeypatch.delenv("COURSE_DB_TAG", raising=False)
    monkeypatch.setenv("COURSE_BACKEND", "mongomock")


def test_doctor_describes_backend_versions_capabilities_and_namespace(mongomock_env, capsys):
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "Backend: mongomock" in out
    assert f"Python: {platform.python_version()}" in out
    assert "pymongo: " in out and "mongomock: " in out and "ipywidgets: " in out
    assert "Capabilities missing:" in out and "validators: $jsonSchema validators raise" in out
    assert "Capabilities present:" in out
    assert "course_*" in out


def test_doctor_exits_1_with_the_backend_error(monkeypatch, capsys):
    monkeypatch.delenv("MONGODB_URI", raising=False)
    monkeypatch.setenv("COURSE_BACKEND", "bogus")
    assert main(["doctor"]) == 1
    assert "COURSE_BACKEND='bogus' is not a backend" in capsys.readouterr().err


def test_reset_drops_only_that_labs_databases(mongomock_env, capsys):
    client = open_backend().client
    client["course_01"]["things"].insert_one({"a": 1})
    client["course_02"]["things"].insert_one({"a": 1})
    assert main(["reset", "01"]) == 0
    out = capsys.readouterr().out
    assert "dropped course_01 (mongomock)" in out and "dropped course_01_scratch" in out
    assert client["course_01"]["things"].count_documents({}) == 0
    assert client["course_02"]["things"].count_documents({}) == 1
    client.drop_database("course_02")


def test_reset_uses_the_learner_tag(mongomock_env, monkeypatch, capsys):
    monkeypatch.setenv("COURSE_DB_TAG", "ann_1")
    assert main(["reset", "00"]) == 0
    out = capsys.readouterr().out
    assert "dropped course_00_gann_1 (mongomock)" in out and "dropped course_00_scratch_gann_1" in out


@pytest.mark.parametrize("argv, fragment", [
    ([], "required"),
    (["reset", "1"], "two digits"),
    (["grade", "--out", "x"], "SUBMISSIONS"),
    (["grade", "nowhere.ipynb", "--out", "x"], "no such file"),
    (["grade", "a.ipynb", "--out", "x", "--timeout", "0"], "positive"),
    (["release", "--solutions", "no/such/dir"], "is not a folder"),
    (["frobnicate"], "invalid choice"),
])
def test_usage_errors_exit_2(argv, fragment, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    if "a.ipynb" in argv:
        (tmp_path / "a.ipynb").write_text("{}")
    assert main(argv) == 2
    assert fragment in capsys.readouterr().err


def test_python_dash_m_course_runs_the_cli():
    done = subprocess.run([sys.executable, "-m", "course", "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    for command in ("release", "grade", "doctor", "reset"):
        assert command in done.stdout
