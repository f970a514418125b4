"""The JupyterLab that `make lab` starts hands a warm spare kernel to the next notebook opened (e2e)."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

pytestmark = pytest.mark.e2e

READY = "course: a spare kernel is ready"
HANDED = "got the spare kernel"


def open_session(server, path: str) -> dict:
    """POST /api/sessions as JupyterLab does when a notebook opens; the session's model."""
    body = json.dumps({"path": path, "name": path.rsplit("/", 1)[-1], "type": "notebook",
                       "kernel": {"name": "python3"}}).encode()
    request = urllib.request.Request(server.base_url + "api/sessions", data=body, method="POST",
                                     headers={"Authorization": f"token {server.token}",
                                              "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def wait_for_log(server, text: str, count: int, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while server.log.read_text(errors="replace").count(text) < count:
        assert time.monotonic() < deadline, f"JupyterLab's log never said {text!r} {count} times:\n" \
                                            + server.log.read_text(errors="replace")[-3000:]
        time.sleep(0.2)


def test_the_second_lab_of_a_folder_gets_the_warm_spare(lab_server):
    log = lambda: lab_server.log.read_text(errors="replace")  # noqa: E731
    sessions = []
    try:
        sessions.append(open_session(lab_server, "labs/00-start-here.ipynb"))  # the spare moves to labs/
        wait_for_log(lab_server, READY, log().count(READY) + 1)
        handed = log().count(HANDED)
        started = time.monotonic()
        sessions.append(open_session(lab_server, "labs/01-design-for-reads.ipynb"))
        seconds = time.monotonic() - started
        wait_for_log(lab_server, HANDED, handed + 1, timeout=5)
        kernels = {k["id"] for k in lab_server.api("GET", "api/kernels")}
        assert {s["kernel"]["id"] for s in sessions} <= kernels
        assert seconds < 1.0, f"opening a lab with a spare ready took {seconds:.2f} s"
    finally:
        for session in sessions:
            lab_server.api("DELETE", f"api/sessions/{session['id']}")
