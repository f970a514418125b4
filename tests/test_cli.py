"""The ``course`` command line: doctor, reset, and usage errors."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from course.store.backends import open_backend
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


@pytest.mark.parametrize("env, fragment", [
    ({"MONGODB_URI": "  "}, "holds only spaces"),
    ({"MONGODB_URI": "mongodb://127.0.0.1/?retryWritez=true"}, "unknown option retryWritez"),
    ({"MONGODB_URI": "mongodb://127.0.0.1/", "COURSE_SERVER_TIMEOUT_MS": "fast"}, "not a number of milliseconds"),
    ({"MONGODB_URI": "mongodb+srv://localhost/"}, "lets DNS pick the hosts"),
    ({"MONGODB_URI": "mongodb://127.0.0.1/?replicaSet=rs0"}, "replicaSet="),
])
def test_doctor_and_reset_name_a_bad_server_setting_without_a_traceback(env, fragment, monkeypatch, capsys):
    monkeypatch.delenv("COURSE_BACKEND", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    for argv in (["doctor"], ["reset", "01"]):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert fragment in err and "Traceback" not in err


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
    (["grade", "a.ipynb", "--out", "x", "--jobs", "0"], "--jobs must be positive"),
    (["grade", "a.ipynb", "--out", "x", "--notebook-timeout", "-1"], "--notebook-timeout must be positive"),
    (["grade", "a.ipynb", "--out", "x", "--memory-mb", "-5"], "--memory-mb"),
    (["grade", "a.ipynb", "--out", "x", "--lab", "77"], "no such lab"),
    (["grade", "a.ipynb", "--out", "x", "--tests", "no/such/dir"], "not a folder of secret tests"),
    (["release", "--solutions", "no/such/dir"], "is not a folder"),
    (["release", "--graded"], "--graded goes with --to"),
    (["grade", "a.ipynb", "--out", "a.ipynb/out"], "cannot write there"),
    (["grade", "a.ipynb", "--out", "a.ipynb"], "it is a file"),
    (["grade", ".", "--out", "graded"], "inside the class folder"),
    (["grade", "a.ipynb", "--out", "x", "--key-file", "a.ipynb"], "not a key file"),
    (["frobnicate"], "invalid choice"),
])
def test_usage_errors_exit_2(argv, fragment, capsys, tmp_path, monkeypatch):
    import course.grading.batch as batch

    monkeypatch.chdir(tmp_path)
    if "a.ipynb" in argv or "." in argv:
        (tmp_path / "a.ipynb").write_text("{}")
        (tmp_path / "a.ipynb").chmod(0o600)
    monkeypatch.setattr(batch, "grade_notebook", lambda *a, **k: pytest.fail("graded before the usage error"))
    assert main(argv + (["--unsandboxed"] if argv[:1] == ["grade"] else [])) == 2
    assert fragment in capsys.readouterr().err


def test_the_course_command_runs_main_then_freezes_what_is_left(monkeypatch):
    import gc

    from course import cli

    def main(argv=None):
        assert gc.get_freeze_count() == 0  # the command runs first, and is frozen only on its way out
        return 3

    monkeypatch.setattr(cli, "main", main)
    try:
        assert cli.command() == 3  # main's exit code, unchanged
        assert gc.get_freeze_count() > 0  # the way out has nothing left to collect
    finally:
        gc.unfreeze()


def test_python_dash_m_course_and_the_console_script_run_the_cli_through_command(tmp_path):
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    scripts = tomllib.loads((root / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"course": "course.cli:command"}
    probe = ("import gc, runpy, sys\nsys.argv = ['course', '--help']\ntry:\n"
             "    runpy.run_module('course', run_name='__main__')\nexcept SystemExit as stop:\n"
             "    print('exit', stop.code, 'frozen', gc.get_freeze_count() > 0)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines()[-1] == "exit 0 frozen True", done.stderr  # python -m course: command()
    for command in ("release", "grade", "doctor", "reset"):  # ... which runs the CLI
        assert command in done.stdout
    out = tmp_path / "work"  # a command that writes files, end to end through the quick exit
    done = subprocess.run([sys.executable, "-m", "course", "work", "--labs", str(root / "labs"), "--into", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for lab in (root / "labs").glob("*.ipynb"):
        assert (out / lab.name).read_bytes() == lab.read_bytes()
    missing = subprocess.run([sys.executable, "-m", "course", "grade", str(tmp_path / "nowhere"), "--out",
                              str(tmp_path / "out"), "--unsandboxed"], capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "nowhere" in missing.stderr


# ---- course release --to DIR: the learners' hand-out ------------------------------------

def _mini_course(root):
    """A checkout with the real package and labs 00-01, plus what must never be handed out."""
    import shutil
    from pathlib import Path

    real = Path(__file__).resolve().parents[1]
    def ignore(folder, names):  # caches, and the lessons of labs 02-05 (only labs 00 and 01 are here)
        lessons = Path(folder).name == "lessons"
        return [n for n in names if n == "__pycache__" or lessons and n.startswith("lesson")
                and not n.startswith(("lesson00", "lesson01"))]

    shutil.copytree(real / "course", root / "course", ignore=ignore)
    for name in ("pyproject.toml", "README.md", "Makefile", "LICENSE"):
        shutil.copy(real / name, root / name)
    for folder in ("labs", "solutions"):
        (root / folder).mkdir()
        for lab in ("00-start-here.ipynb", "01-design-for-reads.ipynb"):
            shutil.copy(real / folder / lab, root / folder / lab)
    from course.handout.release import release

    release(root / "solutions", root / "labs", force=True)  # up to date with these solutions, whatever labs/ holds
    (root / "data").mkdir()
    (root / "data" / "sample.json").write_text("[]")
    (root / "tests").mkdir()
    (root / "tests" / "test_secret.py").write_text("ANSWER = 42\n")
    (root / ".ci").mkdir()
    (root / ".ci" / "run").write_text("echo\n")
    return root


def test_handout_has_labs_package_and_data_but_no_solutions_or_tests(tmp_path):
    from course.handout.build import HandoutError, make_handout

    root = _mini_course(tmp_path / "repo")
    report = make_handout(tmp_path / "out", root=root)
    names = {p.relative_to(tmp_path / "out").as_posix() for p in report.files}
    assert {"labs/00-start-here.ipynb", "labs/01-design-for-reads.ipynb", "course/__init__.py",
            "course/engine/exercise.py", "data/sample.json", "pyproject.toml", "README.md", "Makefile"} <= names
    assert not any(n.startswith(("solutions/", "tests/", ".ci/", "course/grading/")) for n in names)
    assert not (tmp_path / "out" / "solutions").exists() and not (tmp_path / "out" / "tests").exists()
    with pytest.raises(HandoutError, match="earlier hand-out"):
        make_handout(tmp_path / "out", root=root)
    make_handout(tmp_path / "out", root=root, force=True)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "thesis.tex").write_text("mine")
    with pytest.raises(HandoutError, match="not empty"):
        make_handout(tmp_path / "busy", root=root, force=True)
    assert (tmp_path / "busy" / "thesis.tex").read_text() == "mine"
    with pytest.raises(HandoutError, match="inside the course checkout"):
        make_handout(root / "handout", root=root)


def test_handout_refuses_labs_out_of_date_with_the_solutions(tmp_path):
    from course.handout.build import HandoutError, make_handout

    root = _mini_course(tmp_path / "repo")
    lab = root / "labs" / "01-design-for-reads.ipynb"
    lab.write_text(lab.read_text().replace("____", "____ ", 1))
    with pytest.raises(HandoutError, match="out of date"):
        make_handout(tmp_path / "out", root=root)


def _local_setuptools_builds_this_project() -> bool:
    """True when this interpreter's setuptools understands pyproject.toml's SPDX ``license`` string (>= 77)."""
    import importlib.metadata

    try:
        major = int(importlib.metadata.version("setuptools").split(".")[0])
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return False
    return major >= 77


@pytest.mark.slow
def test_the_handout_installs_and_imports(tmp_path):
    """`course release --to DIR`, then `pip install -e DIR` in a fresh venv: course imports from DIR, labs are there."""
    import sysconfig
    import venv
    from pathlib import Path

    root = _mini_course(tmp_path / "repo")
    from course.handout.build import make_handout

    out = tmp_path / "handout"
    make_handout(out, root=root)
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "grader-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")  # pip, setuptools, deps
    isolation = ["--no-build-isolation"] if _local_setuptools_builds_this_project() else []
    done = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", *isolation, "-q",
                           "-e", str(out)], capture_output=True, text=True, timeout=600)
    if done.returncode != 0 and not isolation and ("setuptools" in done.stderr and "No matching" in done.stderr
                                                   or "NewConnectionError" in done.stderr):
        pytest.skip("no setuptools here and no package index to build the hand-out with")
    assert done.returncode == 0, done.stderr
    probe = ("import importlib.util, course, course.lessons.lesson01; "
             "print(course.__file__, importlib.util.find_spec('course.grading'))")
    check = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert check.returncode == 0, check.stderr
    package, grader = check.stdout.split()
    assert Path(package).resolve() == (out / "course" / "__init__.py").resolve()
    assert grader == "None"  # the grader stays with the instructor
    assert sorted(p.name for p in (out / "labs").glob("*.ipynb")) == ["00-start-here.ipynb", "01-design-for-reads.ipynb"]


def test_grading_inside_a_handout_is_refused_in_one_line(tmp_path, monkeypatch, capsys):
    from course.cli import HANDOUT_MARKER
    from course.handout.build import MARKER

    assert HANDOUT_MARKER == MARKER  # the file course release --to writes
    (tmp_path / MARKER).write_text("course hand-out\n")
    (tmp_path / "work" / "class").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "work")
    assert main(["grade", "class", "--out", "out"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a learners' hand-out" in err and "instructor's checkout" in err
    assert not (tmp_path / "work" / "out").exists()
