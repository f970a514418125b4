"""The grader's own checks' servers: one process imports mongoeco once and serves every worker from a fork."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from course.backends import mongoeco_available
from course.grading.checkdb import open_checks_databases

pytestmark = pytest.mark.skipif(not mongoeco_available(), reason="the checks' servers are mongoeco's (Python >= 3.13)")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as handle:  # a zombie has ended
        return handle.read().rsplit(")", 1)[1].split()[0] != "Z"


def _server_pids(first: int) -> list[int]:
    """The first server and the servers it forked."""
    children = Path(f"/proc/{first}/task/{first}/children").read_text().split()
    return [first, *map(int, children)]


def _wait_until(condition, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        threading.Event().wait(0.05)
    return condition()


def test_each_worker_gets_its_own_engine_and_the_last_close_stops_every_server():
    first, second = open_checks_databases(2)
    try:
        assert first.address != second.address
        first.backend.client.course_t.c.insert_one({"_id": 1})
        assert first.backend.client.course_t.c.count_documents({}) == 1
        assert second.backend.client.course_t.c.count_documents({}) == 0  # another engine, not another view
        process = first._servers.process
        assert process is second._servers.process  # one process tree for the group
        pids = _server_pids(process.pid)
        assert len(pids) == 2
        first.close()
        assert all(_alive(pid) for pid in pids), "a worker's close stopped the servers the other still uses"
        second.backend.client.course_t.c.insert_one({"_id": 2})
    finally:
        first.close()
        second.close()
    assert process.poll() == 0
    assert _wait_until(lambda: not any(_alive(pid) for pid in pids))
    with pytest.raises(RuntimeError):
        second.address  # closed for good


def test_a_closed_group_never_starts_again():
    first, second = open_checks_databases(2)
    first.close()
    second.close()
    with pytest.raises(RuntimeError):
        first.address
    assert first._servers.process is None


def test_a_forked_server_that_ends_stops_the_group_with_a_message(tmp_path):
    port_files = [tmp_path / "port0", tmp_path / "port1"]
    process = subprocess.Popen([sys.executable, "-m", "course.grading.checkdb", *map(str, port_files)],
                               stderr=subprocess.PIPE, text=True)
    try:
        assert _wait_until(lambda: all(p.exists() for p in port_files), 120)
        forked = _server_pids(process.pid)[1]
        os.kill(forked, signal.SIGKILL)
        assert process.wait(20) == 1
        assert f"the checks' server {forked} ended" in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.slow
def test_every_server_stops_when_the_grader_dies(tmp_path):
    port_files = [str(tmp_path / "port0"), str(tmp_path / "port1")]
    script = ("import os, subprocess, sys, time\n"
              f"p = subprocess.Popen([sys.executable, '-m', 'course.grading.checkdb', *{port_files!r}])\n"
              f"while not all(os.path.exists(f) for f in {port_files!r}):\n    time.sleep(0.05)\n"
              "print(p.pid, open(f'/proc/{p.pid}/task/{p.pid}/children').read(), flush=True)\n"
              "os._exit(0)\n")  # the 'grader' dies without stopping its servers
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    pids = [int(word) for word in done.stdout.split()]
    assert len(pids) == 2
    try:
        assert _wait_until(lambda: not any(_alive(pid) for pid in pids), 15), "a checks' server outlived its grader"
    finally:
        for pid in pids:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
