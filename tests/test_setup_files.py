"""The set-up files (Makefile, .ci/run, environment.yml, README, ...) stay consistent."""

from __future__ import annotations

import configparser
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
WIRE_SERVER = ROOT / "tests" / "support" / "wire_server.py"

needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def requirement_name(spec: str) -> str:
    """`pymongo>=4.9; python_version...` -> `pymongo` (lower case, - for _)."""
    name = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec).group(1)
    return re.sub(r"[._]", "-", name).lower()


def environment_yml() -> tuple[str, list[str], list[str]]:
    """(python spec, conda dependencies, pip dependencies) of environment.yml, without YAML."""
    python, conda, pip = "", [], []
    section = None
    pip_indent = None  # indent of the "- pip:" item while inside its list
    for raw in (ROOT / "environment.yml").read_text().splitlines():
        line = raw.split(" #", 1)[0].rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            section = line.rstrip(":")
            continue
        if section != "dependencies":
            continue
        item = line.strip()
        if pip_indent is not None and indent > pip_indent:
            pip.append(item[2:].strip())
            continue
        pip_indent = None
        if item == "- pip:":
            pip_indent = indent
            continue
        value = item[2:].strip()
        if re.match(r"python\b(?!-)", value):
            python = value
        else:
            conda.append(value)
    return python, conda, pip


def make_dry_run(target: str, **variables: str) -> str:
    args = ["make", "-n", target] + [f"{k}={v}" for k, v in variables.items()]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout


# ---- environment.yml ----------------------------------------------------------------

def test_environment_yml_lists_every_runtime_dependency():
    python, conda, pip = environment_yml()
    listed = {requirement_name(s) for s in conda + [p for p in pip if not p.startswith("-")]}
    for spec in PYPROJECT["project"]["dependencies"]:
        assert requirement_name(spec) in listed, f"environment.yml lacks {spec!r} from pyproject.toml"


def test_environment_yml_lists_the_lab_and_test_extras():
    _, conda, pip = environment_yml()
    listed = {requirement_name(s) for s in conda + pip if not s.startswith("-")}
    for extra in ("lab", "test"):
        for spec in PYPROJECT["project"]["optional-dependencies"][extra]:
            assert requirement_name(spec) in listed, f"environment.yml lacks {spec!r} (extra {extra})"


def test_environment_yml_has_nothing_pyproject_does_not_know():
    _, conda, pip = environment_yml()
    known = {requirement_name(s) for s in PYPROJECT["project"]["dependencies"]}
    for extra in PYPROJECT["project"]["optional-dependencies"].values():
        known |= {requirement_name(s) for s in extra}
    known.add("pip")
    extra = {requirement_name(s) for s in conda + pip if not s.startswith("-")} - known
    assert not extra, f"environment.yml lists packages pyproject.toml does not: {sorted(extra)}"


def test_environment_yml_uses_python_313_conda_forge_and_installs_the_package():
    text = (ROOT / "environment.yml").read_text()
    python, _, pip = environment_yml()
    assert python.replace(" ", "") in ("python=3.13", "python>=3.13")
    assert re.search(r"^channels:\s*\n\s+- conda-forge\s*$", text, re.M)
    assert "-e ." in pip
    assert any(requirement_name(p) == "mongoeco" for p in pip), "mongoeco is not on conda-forge: pip section"


# ---- Makefile -------------------------------------------------------------------------

def makefile_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text()
    return set(re.findall(r"^([a-z][a-z0-9-]*):(?!=)", text, re.M))


def test_every_make_target_is_phony():
    text = (ROOT / "Makefile").read_text()
    phony = set()
    for line in re.findall(r"^\.PHONY:(.*)$", text, re.M):
        phony |= set(line.split())
    assert {"help", "lab", "test", "doctor", "release", "clean"} <= makefile_targets()
    assert makefile_targets() <= phony, f"not .PHONY: {sorted(makefile_targets() - phony)}"


def test_makefile_installs_the_extras_pyproject_defines():
    text = (ROOT / "Makefile").read_text()
    extras = set(PYPROJECT["project"]["optional-dependencies"])
    assert {"lab", "test"} <= extras
    assert "pip install --quiet -e '.[lab,test]'" in text


@needs_make
def test_make_lab_binds_loopback_with_token_auth():
    lab = make_dry_run("lab")
    command = lab[lab.index("jupyter lab"):]
    assert "--ServerApp.ip=127.0.0.1" in command
    for forbidden in ("0.0.0.0", "token=''", 'token=""', "token= ", "--no-token", "password=",
                      "disable_check_xsrf", "allow_remote_access", "--ip=*", "ip='*'"):
        assert forbidden not in command, f"`make lab` must not pass {forbidden!r}"
    assert "--ServerApp.root_dir=work" in command  # the learner's own copies of labs/ (make lab copies them)
    assert "--ServerApp.kernel_manager_class=course.lab.spare_kernels.SpareKernelManager" in command  # warm kernels


@needs_make
def test_make_test_runs_pytest_then_nbval_with_expected_statuses():
    dry = make_dry_run("test")
    assert "phase tests -- tests/" in dry
    assert "notebooks solutions solutions correct" in dry
    assert "notebooks labs labs not_attempted" in dry
    for flag in ("--nbval-lax", "--nbval-current-env", "--nbval-sanitize-with tests/nbval-sanitize.cfg"):
        assert flag in dry
    assert 'COURSE_EXPECT_STATUS="$3"' in dry


@needs_make
def test_make_clean_removes_only_environments_and_caches():
    dry = make_dry_run("clean")
    removed = re.search(r"rm -rf (.*)", dry).group(1).split()
    assert set(removed) <= {".venv", ".venv-311", ".pytest_cache", "*.egg-info"}, removed
    for kept in ("labs", "solutions", "data", "course", "tests"):
        assert kept not in removed


# ---- CI script ------------------------------------------------------------------------

def test_ci_script_is_strict_bash_and_covers_the_three_paths():
    text = (ROOT / ".ci" / "run").read_text()
    assert text.startswith("#!/usr/bin/env bash") or text.startswith("#!/bin/bash")
    assert "set -euo pipefail" in text
    assert "make test" in text
    assert ".venv-311" in text and "'.[test]'" in text and "COURSE_BACKEND=mongomock" in text
    assert "tests/support/wire_server.py" in text and "directConnection=true" in text
    assert "trap" in text
    subprocess.run(["bash", "-n", str(ROOT / ".ci" / "run")], check=True)


# ---- README, .gitignore, nbval sanitizers -----------------------------------------------

def test_readme_starts_with_the_title_and_the_two_commands():
    text = (ROOT / "README.md").read_text()
    assert text.startswith("# Schema Design in a Schemaless Store")
    first_block = text[: text.index("## ")]
    assert "make lab" in first_block and "make test" in first_block
    for name in ("MONGODB_URI", "COURSE_ALLOW_REMOTE", "COURSE_BACKEND", "course_", "make release",
                 "gradebook.csv", "rs.initiate()"):
        assert name in text, f"README does not mention {name}"


def test_gitignore_covers_environments_caches_and_grading_output():
    lines = set((ROOT / ".gitignore").read_text().split())
    for pattern in (".venv*", "__pycache__/", ".ipynb_checkpoints/", "*.egg-info/", "gradebook-out/"):
        assert pattern in lines, f".gitignore lacks {pattern}"


def test_nbval_sanitizers_parse_and_compile():
    config = configparser.ConfigParser(interpolation=None)
    config.read(ROOT / "tests" / "nbval-sanitize.cfg")
    assert config.sections()
    for section in config.sections():
        re.compile(config[section]["regex"])
        assert "replace" in config[section]
    text = "ObjectId('65a1b2c3d4e5f60718293a4b') took 12.5 ms at 0x7f00deadbeef"
    for section in config.sections():
        text = re.sub(config[section]["regex"], config[section]["replace"], text)
    assert text == "ObjectId('OBJECT-ID') took DURATION at 0xADDRESS"


# ---- the wire server used by CI -------------------------------------------------------------

def test_wire_server_refuses_non_loopback_hosts():
    for host in ("0.0.0.0", "192.168.1.10", "example.org"):
        result = subprocess.run([sys.executable, str(WIRE_SERVER), "--host", host, "--port", "0"],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 2
        assert "not a loopback address" in result.stderr


@pytest.mark.slow
@pytest.mark.skipif(sys.version_info < (3, 13), reason="mongoeco needs Python >= 3.13")
def test_wire_server_serves_pymongo_and_stops_on_sigterm(tmp_path):
    pytest.importorskip("mongoeco")
    import pymongo

    port_file = tmp_path / "port"
    server = subprocess.Popen([sys.executable, str(WIRE_SERVER), "--port", "0", "--port-file", str(port_file)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 30
        while not port_file.exists():
            assert server.poll() is None, server.stdout.read()
            assert time.monotonic() < deadline, "the wire server did not write its port"
            time.sleep(0.1)
        port = int(port_file.read_text())
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        client = pymongo.MongoClient(f"mongodb://127.0.0.1:{port}/?directConnection=true",
                                     serverSelectionTimeoutMS=10000, socketTimeoutMS=120000)
        try:
            db = client.course_wire_selftest
            db.items.insert_many([{"n": n, "even": n % 2 == 0} for n in range(200)])
            assert db.items.create_index([("n", 1)]) == "n_1"
            assert db.items.count_documents({"even": True}) == 100
            assert db.items.find_one({"n": 7}, {"_id": 0}) == {"n": 7, "even": False}
            client.drop_database("course_wire_selftest")
            assert "course_wire_selftest" not in client.list_database_names()
        finally:
            client.close()
        server.terminate()
        assert server.wait(timeout=30) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
