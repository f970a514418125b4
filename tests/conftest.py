"""Shared fixtures: every checker test runs on every backend installed here."""

from __future__ import annotations

import os

import pytest

from course.store.backends import close_all, mongoeco_available, open_mongoeco, open_mongomock, open_server
from course.lab.session import Lab

#: ``COURSE_REQUIRE_SANDBOX=1`` (set by make test and .ci/run): a containment test fails, never skips, when the
#: grader's sandbox cannot run here, since a suite that skips them proves nothing about the grader.
REQUIRE_SANDBOX = "COURSE_REQUIRE_SANDBOX"


def missing_sandbox() -> str:
    """Why a containment test cannot prove anything here ("" when the sandbox runs, or is not required)."""
    if os.environ.get(REQUIRE_SANDBOX) != "1":
        return ""
    from course.grading.sandbox import bwrap_path, sandbox_problem

    if bwrap_path() is None:
        return f"bubblewrap is missing: run make prereqs ({REQUIRE_SANDBOX}=1: containment tests need the sandbox)"
    problem = sandbox_problem()
    return f"the grader's sandbox cannot run here: {problem} ({REQUIRE_SANDBOX}=1)" if problem else ""


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    """Report a containment test as failed, without running it, when the sandbox it needs is missing and
    required (before any skip mark of the test is looked at)."""
    if item.get_closest_marker("containment") is None:
        return None
    why = missing_sandbox()
    if not why:
        return None
    from _pytest.reports import TestReport

    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    keywords = {name: 1 for name in item.keywords}
    for when, outcome, longrepr in (("setup", "passed", None), ("call", "failed", why), ("teardown", "passed", None)):
        report = TestReport(item.nodeid, item.location, keywords, outcome, longrepr, when)
        item.ihook.pytest_runtest_logreport(report=report)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def available_backends() -> list[str]:
    """Backends this interpreter can run: mongoeco (>= 3.13), mongomock, and a server if MONGODB_URI is set."""
    names = []
    if mongoeco_available():
        names.append("mongoeco")
    names.append("mongomock")
    if os.environ.get("MONGODB_URI"):
        names.append("server")
    wanted = os.environ.get("COURSE_TEST_BACKENDS", "")  # e.g. "server": CI's wire phase, the rest ran already
    if wanted:
        names = [name for name in names if name in wanted.split(",")]
    return names


_OPENED: dict = {}


def backend_named(name: str):
    """Open (once per test session) the backend called ``name``."""
    if name not in _OPENED:
        if name == "mongoeco":
            _OPENED[name] = open_mongoeco()
        elif name == "mongomock":
            _OPENED[name] = open_mongomock()
        else:
            _OPENED[name] = open_server(os.environ["MONGODB_URI"], timeout_ms=10000)
    return _OPENED[name]


@pytest.fixture(scope="session", autouse=True)
def _close_backends():
    """Close every client the tests opened, once the session ends."""
    yield
    while _OPENED:
        _, backend = _OPENED.popitem()
        backend.client.close()
    close_all()


@pytest.fixture(params=available_backends())
def backend(request):
    """Each available backend in turn."""
    return backend_named(request.param)


@pytest.fixture
def make_lab(backend):
    """Return a function that gives a fresh Lab for a lab id on the current backend."""
    labs = []

    def make(lab_id: str) -> Lab:
        lab = Lab(lab_id, backend)
        lab.reset()
        labs.append(lab)
        return lab

    yield make
    for lab in labs:
        lab.reset()
