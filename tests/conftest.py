"""Shared fixtures: every checker test runs on every backend installed here."""

from __future__ import annotations

import os

import pytest

from course.backends import close_all, mongoeco_available, open_mongoeco, open_mongomock, open_server
from course.session import Lab


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
