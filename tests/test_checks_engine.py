"""The grader's own checks' engine: inside the grader, one per worker, served to the sandboxes' relays."""

from __future__ import annotations

import socket
import threading
import time

import pymongo
import pytest

from course.store.backends import mongoeco_available
from course.grading.checkdb import ChecksDatabase, open_checks_databases

pytestmark = pytest.mark.skipif(not mongoeco_available(), reason="the checks' engine is mongoeco (Python >= 3.13)")


def _engine_threads() -> int:
    return sum(1 for thread in threading.enumerate() if thread.name == "course-checks-engine")


def _over_the_wire(checks: ChecksDatabase) -> pymongo.MongoClient:
    host, port = checks.address
    return pymongo.MongoClient(f"mongodb://{host}:{port}/?directConnection=true", serverSelectionTimeoutMS=5000)


def test_each_worker_gets_its_own_engine_and_its_relays_reach_the_same_data_as_its_checks():
    before = _engine_threads()
    first, second = open_checks_databases(2)
    wire = None
    try:
        assert first.backend.name == "mongoeco" and first.address != second.address
        first.backend.client.course_t.c.insert_one({"_id": 1})
        assert second.backend.client.course_t.c.count_documents({}) == 0  # another engine, not another view
        wire = _over_the_wire(first)
        assert wire.course_t.c.find_one({"_id": 1}) == {"_id": 1}  # what a learner function reads
        wire.course_t.c.insert_one({"_id": 2, "by": "learner"})
        assert first.backend.client.course_t.c.find_one({"_id": 2}) == {"_id": 2, "by": "learner"}
        assert _engine_threads() == before + 2
    finally:
        if wire is not None:
            wire.close()
        first.close()
    address = second.address
    second.backend.client.course_t.c.insert_one({"_id": 3})  # closing one worker's engine left the other's
    second.close()
    assert _engine_threads() == before  # each engine's thread ended with it
    with pytest.raises(OSError):
        socket.create_connection(address, timeout=2).close()  # nobody serves the relays any more
    with pytest.raises(RuntimeError):
        second.address  # closed for good


def test_commands_from_the_checks_and_from_the_relays_never_run_at_once():
    checks = open_checks_databases(1)[0]
    wire = _over_the_wire(checks)
    try:
        collection = checks.backend.client.course_t.counter
        collection.insert_one({"_id": 1, "n": 0})

        def bump(through, times: int) -> None:
            for _ in range(times):
                through.update_one({"_id": 1}, {"$inc": {"n": 1}})

        threads = [threading.Thread(target=bump, args=(collection, 200)),
                   threading.Thread(target=bump, args=(wire.course_t.counter, 200)),
                   threading.Thread(target=bump, args=(collection, 200))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert collection.find_one({"_id": 1})["n"] == 600
    finally:
        wire.close()
        checks.close()


def test_the_engine_refuses_a_call_from_its_own_loop_instead_of_waiting_for_itself():
    checks = open_checks_databases(1)[0]
    try:
        client, host = checks.backend.client, checks.host
        outcome = []
        done = threading.Event()

        def from_the_loop() -> None:
            try:
                client.course_t.c.count_documents({})
            except RuntimeError as error:
                outcome.append(str(error))
            finally:
                done.set()

        host._loop.call_soon_threadsafe(from_the_loop)
        assert done.wait(10) and "its own event loop" in outcome[0]
        assert client.course_t.c.count_documents({}) == 0  # and it still serves everyone else
    finally:
        checks.close()


def test_a_database_closed_before_its_background_start_never_starts_an_engine():
    before = _engine_threads()
    checks = ChecksDatabase(lazy=True)
    checks.close()
    checks.start_soon()  # the background start comes after the close, as in a run that ended at once
    time.sleep(0.5)
    assert checks.host is None and _engine_threads() == before
    with pytest.raises(RuntimeError):
        checks.address
