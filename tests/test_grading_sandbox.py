"""The sandbox of a learner kernel: what it sees, what it may do, and what happens without it."""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import nbformat
import pytest

from course.engine.exercise import LearnerRaised
from course.grading import process_limit
from course.grading.kernel import KernelLimits, cgroup_name, kernel_environment, kernel_manager, prepare_folders
from course.grading.remote import learner_raised
from course.grading.sandbox import LOST_WITHOUT_SANDBOX, sandbox_problem
from course.engine.results import Status
from support import fake_lesson, golden_class

from test_grading import _install

pytestmark = pytest.mark.containment

PROBE = r'''
import json, os, resource, socket, sys
found = {"uid": os.getuid(), "cwd": os.getcwd(), "files": sorted(os.listdir(".")), "isolated": sys.flags.isolated,
         "pids": sorted(p for p in os.listdir("/proc") if p.isdigit()), "env": sorted(os.environ),
         "as": resource.getrlimit(resource.RLIMIT_AS), "nproc": resource.getrlimit(resource.RLIMIT_NPROC),
         "cwd_on_path": os.getcwd() in sys.path[:3], "root": sorted(os.listdir("/")),
         "repository": os.path.exists(os.path.join(os.path.dirname(os.path.dirname(
             __import__("course").__file__)), "tests"))}
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2).close()
    found["network"] = True
except OSError:
    found["network"] = False
print(json.dumps(found))
'''


def _probe(sandbox: bool) -> dict:
    from nbclient import NotebookClient

    root = Path(tempfile.mkdtemp(prefix="course-probe-"))
    work, sockets = prepare_folders(root)
    (work / "lab.ipynb").write_text("{}")
    env = kernel_environment("probe", work, sandbox)
    manager = kernel_manager(work, sockets, env, KernelLimits(memory_mb=1024, cpu_seconds=120), sandbox)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(PROBE)]
    client = NotebookClient(nb, km=manager, timeout=60)

    async def run():
        try:
            async with client.async_setup_kernel(env=env, cwd=str(work)):
                await client.async_execute_cell(nb.cells[0], 0)
        finally:
            await manager.shutdown_kernel(now=True)

    try:
        asyncio.run(run())
    finally:
        shutil.rmtree(root, ignore_errors=True)
        process_limit.remove(cgroup_name(sockets))  # as the grader does once a sandbox is gone
    return json.loads(nb.cells[0].outputs[0]["text"])


@pytest.mark.slow
@pytest.mark.skipif(bool(sandbox_problem()), reason=f"no sandbox here: {sandbox_problem()}")
def test_a_sandboxed_kernel_sees_only_its_own_notebook_and_processes(monkeypatch):
    monkeypatch.setenv("MONGODB_URI", "mongodb://user:secret@127.0.0.1:1")
    found = _probe(sandbox=True)
    assert found["uid"] == 65534 and found["isolated"] == 1 and not found["network"]
    assert found["files"] == ["lab.ipynb"]  # a private copy of the one notebook, nothing else
    assert len(found["pids"]) <= 3  # bwrap's init, the kernel (and a helper): not the grader, not others
    assert "MONGODB_URI" not in found["env"] and "HOME" in found["env"]
    assert found["as"] == [1024 ** 3, 1024 ** 3] and found["nproc"][0] == found["nproc"][1] != -1
    assert not found["repository"]  # the repository's tests/ (and secrets next to them) are not there


def test_without_bubblewrap_grading_refuses_unless_told_unsandboxed(monkeypatch, tmp_path):
    import course.grading.sandbox as sandbox

    monkeypatch.setattr(sandbox, "sandbox_problem", lambda: "bubblewrap (bwrap) is not installed")
    from course.cli import main

    err = io.StringIO()
    with redirect_stderr(err), redirect_stdout(io.StringIO()):
        code = main(["grade", str(tmp_path), "--out", str(tmp_path / "out")])
    assert code == 2
    assert "--unsandboxed" in err.getvalue() and "bwrap" in err.getvalue()
    assert "other learners' submissions" in LOST_WITHOUT_SANDBOX and "secret tests" in LOST_WITHOUT_SANDBOX


@pytest.mark.slow
def test_unsandboxed_grading_still_computes_verdicts_outside_the_kernel(monkeypatch, tmp_path):
    from course.grading.runner import grade_notebook
    from course.handout.notebooks import write_notebook

    _install(monkeypatch)
    monkeypatch.setenv("COURSE_BACKEND", "mongomock")
    cheat = golden_class.lab_notebook()
    cheat.cells.insert(2, fake_lesson.code(golden_class.ATTACKS["cheat_evaluate"]))
    write_notebook(cheat, tmp_path / golden_class.NAME)
    graded = grade_notebook(tmp_path / golden_class.NAME, "mallory", timeout=30, sandbox=False)
    assert {r.status for r in graded.results} == {Status.NOT_ATTEMPTED}
    assert graded.flags  # the edit of the engine is listed for review


def test_what_a_learner_function_raised_crosses_as_names_and_a_message():
    error = learner_raised("BadPrice", "negative", None, ("BadPrice", "ValueError", "Exception"))
    assert isinstance(error, LearnerRaised) and isinstance(error, ValueError)
    assert error.type_name == "BadPrice" and error.is_a("ValueError") and error.message == "negative"
    assert str(error) == "BadPrice: negative"
    from pymongo.errors import OperationFailure, WriteError

    failure = learner_raised("WriteError", "Document failed validation", 121, ("WriteError", "OperationFailure"))
    assert isinstance(failure, WriteError) and isinstance(failure, OperationFailure) and failure.code == 121
    plain = learner_raised("Weird", "x")
    assert type(plain) is LearnerRaised and not isinstance(plain, ValueError)


def test_the_kernel_environment_carries_no_grader_settings(monkeypatch, tmp_path):
    monkeypatch.setenv("MONGODB_URI", "mongodb://u:p@127.0.0.1")
    monkeypatch.setenv("COURSE_EXPECT_STATUS", "correct")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    env = kernel_environment("ann_1", tmp_path, True)
    assert env["COURSE_DB_TAG"] == "ann_1" and env["HOME"] == "/tmp" and env["COURSE_GRADED_OUTSIDE"] == "1"
    assert not {"MONGODB_URI", "COURSE_EXPECT_STATUS", "AWS_SECRET_ACCESS_KEY", "PYTHONPATH"} & set(env)
    assert os.environ["MONGODB_URI"]  # the grader's own environment is untouched
