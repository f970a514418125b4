"""A check's own functions (a ``sleep``, a ``log``) handed to a learner function run in the grader.

The agent runs in a thread here (the kernel's part), the link in the test (the grader's part): only
plain data crosses, and what the check's function raises stops the learner's code.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import __main__
import pytest

from course.engine.exercise import LearnerRaised
from course.grading import agent
from course.grading.remote import AgentLink, answer_values


class Interrupted(Exception):
    """The check's simulated deploy."""


def batch_job(items, sleep, log):
    """A learner's job: log each item, pause after each, stop where sleep raises."""
    done = 0
    for item in items:
        log(f"item {item}")
        sleep(0.5)
        done += 1
    return done


def swallowing_job(items, sleep, log):
    """A learner's job that catches the interruption and says what it caught."""
    try:
        sleep(1)
    except Exception as error:  # noqa: BLE001 - the learner's choice
        return [type(error).__name__, str(error)]
    return "not interrupted"


def passes_a_function_back(items, sleep, log):
    """A learner's job that hands the check's log a function of its own."""
    log(print)


@contextmanager
def linked(tmp_path, monkeypatch, **answers):
    for name, value in answers.items():
        monkeypatch.setattr(__main__, name, value, raising=False)
    monkeypatch.setattr("course.engine.exercise.notebook_namespace", lambda: vars(__main__))
    path = str(tmp_path / "channel.sock")
    link = AgentLink(path, relay=None, call_timeout=20, interrupt=lambda: None)
    thread = threading.Thread(target=agent.serve, args=(path, "token", str(tmp_path / "db.sock")), daemon=True)
    thread.start()
    try:
        with link.session(threading.Event(), 20, "token"):
            yield answer_values(link, tuple(answers))
    finally:
        link.close()
        thread.join(10)


def test_a_sleep_and_a_log_passed_to_learner_code_run_in_the_grader(tmp_path, monkeypatch):
    lines, pauses = [], []
    with linked(tmp_path, monkeypatch, batch_job=batch_job) as found:
        done = found["batch_job"]([1, 2, 3], sleep=pauses.append, log=lines.append)
    assert done == 3
    assert lines == ["item 1", "item 2", "item 3"]
    assert pauses == [0.5, 0.5, 0.5]


def test_an_exception_the_check_raises_in_a_callback_stops_the_learner_code(tmp_path, monkeypatch):
    pauses = []

    def sleep(seconds):
        pauses.append(seconds)
        if len(pauses) == 2:
            raise Interrupted("deploy at pause 2")

    with linked(tmp_path, monkeypatch, batch_job=batch_job, swallowing_job=swallowing_job) as found:
        with pytest.raises(LearnerRaised) as raised:
            found["batch_job"]([1, 2, 3], sleep=sleep, log=lambda line: None)
        caught = found["swallowing_job"]([], sleep=lambda s: (_ for _ in ()).throw(ValueError("no pause")),
                                         log=print)
    assert raised.value.type_name == "Interrupted" and "deploy at pause 2" in raised.value.message
    assert pauses == [0.5, 0.5]
    assert caught == ["ValueError", "no pause"]  # a builtin class stays that class in the learner's code


def test_a_callback_gets_plain_data_only(tmp_path, monkeypatch):
    got = []
    with linked(tmp_path, monkeypatch, passes_a_function_back=passes_a_function_back) as found:
        with pytest.raises(LearnerRaised) as raised:
            found["passes_a_function_back"]([], sleep=got.append, log=got.append)
    assert got == []  # the check's log never received the learner's function
    assert "malformed callback" in raised.value.message


def tidies_in_place(product, tags, extra=None):
    """A learner's function that changes the dict and list it is given (and a keyword one), then raises."""
    product["name"] = product["name"].strip()
    product.pop("draft", None)
    tags.append("checked")
    if extra is not None:
        extra.clear()
    if product["name"] == "boom":
        raise ValueError("refused")
    return True


def test_a_learner_function_that_changes_its_arguments_is_seen_changing_them(tmp_path, monkeypatch):
    product, tags, extra = {"name": " lamp ", "draft": True}, ["new"], {"a": 1}
    kept = {"untouched": [1, 2]}
    with linked(tmp_path, monkeypatch, tidies_in_place=tidies_in_place) as found:
        assert found["tidies_in_place"](product, tags, extra=extra) is True
        assert product == {"name": "lamp"} and tags == ["new", "checked"] and extra == {}
        failing = {"name": "boom", "draft": 1}
        with pytest.raises(LearnerRaised):
            found["tidies_in_place"](failing, [], extra=kept)
    assert failing == {"name": "boom"} and kept == {}  # changed before it raised: seen all the same


def inserts_twice(documents):
    """A learner's function whose insert_many meets a duplicate key (a BulkWriteError with its details)."""
    import pymongo.errors

    raise pymongo.errors.BulkWriteError({"writeErrors": [{"index": 1, "code": 11000, "errmsg": "E11000 dup"}],
                                         "nInserted": 1})


def test_a_driver_error_crosses_with_its_type_code_and_details(tmp_path, monkeypatch):
    import pymongo.errors

    with linked(tmp_path, monkeypatch, inserts_twice=inserts_twice) as found:
        with pytest.raises(pymongo.errors.BulkWriteError) as raised:
            found["inserts_twice"]([{"_id": 1}, {"_id": 1}])
    assert raised.value.details["writeErrors"][0]["code"] == 11000 and raised.value.details["nInserted"] == 1
    assert isinstance(raised.value, LearnerRaised) and raised.value.type_name == "BulkWriteError"
