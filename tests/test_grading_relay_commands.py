"""The relay reads commands as the server does: names past generic arguments, every namespace, an allow-list,
cursors of its own calls, a write budget, a time limit and a watchdog."""

from __future__ import annotations

import socket
import struct
import threading
import time

import bson
import pytest
from bson import SON

from course.grading.commandlog import CommandLog, operations
from course.grading.relay import Relay, parse_op_msg, read_op_msg
from course.grading.wire_commands import DuplicateKey, command_name, decode_body, judge, namespaces

pytestmark = pytest.mark.containment

MINE = frozenset({"course_98_scratch_gme", "course_98_gme"})


def _body(*pairs, db="course_98_scratch_gme") -> SON:
    return SON([*pairs, ("$db", db)])


# ---- names and namespaces ------------------------------------------------------------------

@pytest.mark.parametrize("prefix", ["lsid", "$db", "comment", "maxTimeMS", "txnNumber", "$clusterTime",
                                    "$readPreference", "readConcern", "writeConcern", "apiVersion", "autocommit"])
def test_a_generic_argument_put_first_does_not_hide_the_command(prefix):
    body = SON([(prefix, {"id": 1} if prefix != "$db" else "course_98_scratch_gme"), ("find", "products"),
                ("$db", "course_98_scratch_gme")]) if prefix != "$db" else \
        SON([("$db", "course_98_scratch_gme"), ("find", "products")])
    assert command_name(body) == "find"
    assert operations(body, {})[0][:3] == ("read", "products", "find")
    listing = SON([(prefix, 1 if prefix != "$db" else "admin"), ("listDatabases", 1), ("$db", "admin")]) \
        if prefix != "$db" else SON([("$db", "admin"), ("listDatabases", 1)])
    assert "refused 'listDatabases'" in judge(listing, MINE)


def test_a_body_that_names_a_key_twice_is_refused_at_any_depth():
    raw = b"".join([bson.encode({"find": "a"})[4:-1], bson.encode({"$db": "other"})[4:-1],
                    bson.encode({"$db": "course_98_scratch_gme"})[4:]])
    with pytest.raises(DuplicateKey):
        decode_body(struct.pack("<i", len(raw) + 4) + raw)
    stage = _joined(bson.encode({"$out": "mine"}), bson.encode({"$out": {"db": "other", "coll": "x"}}))
    pipeline = b"\x030\0" + stage  # an array is a document keyed "0", "1", ...
    pipeline = struct.pack("<i", len(pipeline) + 5) + pipeline + b"\0"
    nested = _joined(bson.encode({"aggregate": "a"}), b"\x04pipeline\0" + pipeline)
    assert bson.decode(nested)["pipeline"] == [{"$out": {"db": "other", "coll": "x"}}]  # Python reads the last
    with pytest.raises(DuplicateKey):
        decode_body(nested)


def _joined(*parts: bytes) -> bytes:
    """One document of the elements of ``parts`` (whole documents, or raw elements)."""
    elements = b"".join(part[4:-1] if part[:1] != b"\x04" else part for part in parts)
    return struct.pack("<i", len(elements) + 5) + elements + b"\0"


@pytest.mark.parametrize("stage, target", [
    ({"$out": "x"}, ("course_98_scratch_gme", "x")),
    ({"$out": {"db": "elsewhere", "coll": "x"}}, ("elsewhere", "x")),
    ({"$merge": "x"}, ("course_98_scratch_gme", "x")),
    ({"$merge": {"into": {"db": "elsewhere", "coll": "x"}}}, ("elsewhere", "x")),
    ({"$merge": {"into": "x", "on": "_id"}}, ("course_98_scratch_gme", "x")),
    ({"$lookup": {"from": "x", "localField": "a", "foreignField": "b", "as": "c"}}, ("course_98_scratch_gme", "x")),
    ({"$lookup": {"from": {"db": "elsewhere", "coll": "x"}, "pipeline": [], "as": "c"}}, ("elsewhere", "x")),
    ({"$graphLookup": {"from": "x", "startWith": "$a", "connectFromField": "a", "connectToField": "b",
                       "as": "c"}}, ("course_98_scratch_gme", "x")),
    ({"$unionWith": "x"}, ("course_98_scratch_gme", "x")),
    ({"$unionWith": {"coll": "x", "db": "elsewhere", "pipeline": []}}, ("elsewhere", "x")),
    ({"$facet": {"a": [{"$lookup": {"from": {"db": "elsewhere", "coll": "x"}, "pipeline": [], "as": "c"}}]}},
     ("elsewhere", "x")),
    ({"$lookup": {"from": "y", "as": "c", "pipeline": [{"$unionWith": {"coll": "x", "db": "elsewhere"}}]}},
     ("elsewhere", "x")),
    ({"$unionWith": {"coll": "y", "pipeline": [{"$facet": {"b": [{"$out": {"db": "elsewhere", "coll": "x"}}]}}]}},
     ("elsewhere", "x")),
])
def test_every_namespace_a_pipeline_names_is_found(stage, target):
    body = _body(("aggregate", "products"), ("pipeline", [{"$match": {}}, stage]), ("cursor", {}))
    assert target in namespaces(body, "course_98_scratch_gme")
    verdict = judge(body, MINE)
    assert (verdict == "") == (target[0] in MINE), verdict


def test_explain_views_and_renames_are_judged_by_what_they_reach():
    explained = _body(("explain", SON([("aggregate", "p"), ("pipeline", [{"$out": {"db": "elsewhere", "coll": "x"}}]),
                                       ("cursor", {})])))
    assert "elsewhere" in judge(explained, MINE)
    assert judge(_body(("explain", SON([("find", "p"), ("filter", {})])), ("verbosity", "queryPlanner")), MINE) == ""
    view = _body(("create", "v"), ("viewOn", "p"),
                 ("pipeline", [{"$lookup": {"from": {"db": "elsewhere", "coll": "x"}, "pipeline": [], "as": "y"}}]))
    assert "elsewhere" in judge(view, MINE)
    rename = SON([("renameCollection", "course_98_scratch_gme.p"), ("to", "course_98_gother.p"), ("$db", "admin")])
    assert "course_98_gother" in judge(rename, MINE)
    inside = SON([("renameCollection", "course_98_scratch_gme.p"), ("to", "course_98_scratch_gme.q"), ("$db", "admin")])
    assert judge(inside, MINE) == ""


@pytest.mark.parametrize("command", [
    SON([("configureFailPoint", "failCommand"), ("mode", "alwaysOn"), ("$db", "admin")]),
    SON([("setParameter", 1), ("x", 1), ("$db", "admin")]),
    SON([("profile", 2), ("$db", "course_98_scratch_gme")]),
    SON([("eval", "1"), ("$db", "course_98_scratch_gme")]),
    SON([("applyOps", []), ("$db", "admin")]),
    SON([("copydb", 1), ("$db", "admin")]),
    SON([("shutdown", 1), ("$db", "admin")]),
    SON([("serverStatus", 1), ("$db", "admin")]),
    SON([("currentOp", 1), ("$db", "admin")]),
    SON([("killOp", 1), ("op", 1), ("$db", "admin")]),
    SON([("bulkWrite", 1), ("ops", []), ("nsInfo", [{"ns": "other.x"}]), ("$db", "admin")]),
    SON([("aggregate", 1), ("pipeline", [{"$currentOp": {}}]), ("cursor", {}), ("$db", "admin")]),
    SON([("aggregate", 1), ("pipeline", [{"$listLocalSessions": {}}]), ("cursor", {}),
         ("$db", "course_98_scratch_gme")]),
    SON([("aggregate", "p"), ("pipeline", [{"$changeStream": {"allChangesForCluster": True}}]), ("cursor", {}),
         ("$db", "course_98_scratch_gme")]),
    SON([("insert", "system.js"), ("documents", [{}]), ("$db", "course_98_scratch_gme")]),
])
def test_the_allow_list_refuses_what_no_learner_function_needs(command):
    assert judge(command, MINE)


@pytest.mark.parametrize("command", [
    SON([("find", "p"), ("filter", {}), ("$db", "course_98_scratch_gme")]),
    SON([("insert", "p"), ("$db", "course_98_gme")]),
    SON([("update", "p"), ("updates", [{"q": {}, "u": [{"$set": {"a": 1}}]}]), ("$db", "course_98_gme")]),
    SON([("aggregate", "p"), ("pipeline", [{"$merge": {"into": "q"}}]), ("cursor", {}), ("$db", "course_98_gme")]),
    SON([("createIndexes", "p"), ("indexes", []), ("$db", "course_98_gme")]),
    SON([("listCollections", 1), ("$db", "course_98_gme")]),
    SON([("commitTransaction", 1), ("$db", "admin")]),
    SON([("hello", 1), ("$db", "admin")]),
])
def test_the_allow_list_lets_through_what_a_learner_function_needs(command):
    assert judge(command, MINE) == ""


def test_a_duplicate_document_sequence_is_refused():
    docs = bson.encode({"_id": 1})
    section = b"\x01" + struct.pack("<i", 4 + len(b"documents\0") + len(docs)) + b"documents\0" + docs
    body = bson.encode(SON([("insert", "p"), ("$db", "course_98_gme")]))
    payload = struct.pack("<I", 0) + b"\0" + body + section + section
    with pytest.raises(DuplicateKey):
        read_op_msg(payload, strict=True)
    assert parse_op_msg(struct.pack("<I", 0) + b"\0" + body + section)[2]["documents"] == [{"_id": 1}]


# ---- a relay in front of a real engine -------------------------------------------------------

@pytest.fixture(scope="module")
def engine():
    from course.store.backends import mongoeco_available

    if not mongoeco_available():
        pytest.skip("needs mongoeco (Python >= 3.13) for the engine behind the relay")
    from course.grading.engine_host import EngineHost

    host = EngineHost()
    yield host
    host.close()


def _through(relay: Relay):
    import pymongo

    from urllib.parse import quote_plus

    return pymongo.MongoClient(f"mongodb://{quote_plus(relay.path)}/?directConnection=true",
                               serverSelectionTimeoutMS=5000)


def test_through_the_relay_a_prefixed_read_is_logged_and_a_prefixed_listing_refused(engine, tmp_path):
    import pymongo.errors

    engine.client["course_98_scratch_gme"]["p"].insert_many([{"_id": i} for i in range(5)])
    relay = Relay(str(tmp_path / "db.sock"), lambda: engine.address)
    client = _through(relay)
    try:
        log = CommandLog()
        with relay.call(set(MINE), log):
            db = client["course_98_scratch_gme"]
            reply = db.command(SON([("lsid", {"id": bson.Binary(b"0" * 16, 4)}), ("find", "p")]))
            assert len(reply["cursor"]["firstBatch"]) == 5
            with pytest.raises(pymongo.errors.OperationFailure, match="refused 'listDatabases'"):
                db.command(SON([("lsid", {"id": bson.Binary(b"0" * 16, 4)}), ("listDatabases", 1)]))
            with pytest.raises(pymongo.errors.OperationFailure, match="refused 'configureFailPoint'"):
                client.admin.command({"configureFailPoint": "failCommand", "mode": "alwaysOn"})
        assert [op[1][2] for op in log.seen] == ["find"]
    finally:
        client.close()
        relay.close()


def test_get_more_reaches_only_cursors_the_call_opened_and_reads_carry_a_time_limit(engine, tmp_path):
    import pymongo.errors

    engine.client["course_98_scratch_gme"]["c"].insert_many([{"_id": i} for i in range(300)])
    seen: list = []
    relay = Relay(str(tmp_path / "db.sock"), lambda: engine.address, command_seconds=7)
    client = _through(relay)
    try:
        with relay.call(set(MINE), lambda db, body, seq: seen.append(dict(body))):
            rows = list(client["course_98_scratch_gme"]["c"].find({}, batch_size=50))
            assert len(rows) == 300  # its own getMores pass
            with pytest.raises(pymongo.errors.OperationFailure, match="cursor this call did not open"):
                client["course_98_scratch_gme"].command({"getMore": bson.Int64(123456789), "collection": "c"})
        assert any(body.get("find") == "c" for body in seen)
        forwarded = relay._judge(2013, _payload(SON([("find", "c"), ("$db", "course_98_scratch_gme")])))
        assert forwarded is None  # between calls a data command loses its connection
        with relay.call(set(MINE)):
            command, payload = relay._judge(2013, _payload(SON([("find", "c"), ("$db", "course_98_scratch_gme")])))
        assert parse_op_msg(payload)[1]["maxTimeMS"] == 7000
    finally:
        client.close()
        relay.close()


def _payload(body) -> bytes:
    return struct.pack("<I", 0) + b"\0" + bson.encode(body)


def test_writes_past_the_budget_are_refused_and_say_why(engine, tmp_path):
    import pymongo.errors

    relay = Relay(str(tmp_path / "db.sock"), lambda: engine.address, write_limit=3 * 1024 * 1024)
    client = _through(relay)
    try:
        with relay.call(set(MINE)):
            target = client["course_98_scratch_gme"]["big"]
            target.insert_one({"_id": 1, "b": "x" * (2 * 1024 * 1024)})
            with pytest.raises(pymongo.errors.OperationFailure, match="more than 3 MiB"):
                target.insert_one({"_id": 2, "b": "x" * (2 * 1024 * 1024)})
        assert "more than 3 MiB" in relay.exceeded
        assert engine.client["course_98_scratch_gme"]["big"].count_documents({}) == 1
    finally:
        client.close()
        relay.close()


def test_the_watchdog_gives_up_on_a_command_that_gets_no_reply(tmp_path, monkeypatch):
    from course.grading import relay as relay_module

    monkeypatch.setattr(relay_module, "STUCK_GRACE", 0.2)
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(4)
    held: list = []
    threading.Thread(target=lambda: held.append(silent.accept()), daemon=True).start()
    stuck: list[str] = []
    relay = Relay(str(tmp_path / "db.sock"), lambda: silent.getsockname(), command_seconds=0.3,
                  on_stuck=stuck.append)
    try:
        client = socket.socket(socket.AF_UNIX)
        client.connect(relay.path)
        with relay.call(set(MINE)):
            message = _payload(SON([("aggregate", "p"), ("pipeline", []), ("cursor", {}),
                                    ("$db", "course_98_scratch_gme")]))
            client.sendall(struct.pack("<iiii", 16 + len(message), 5, 0, 2013) + message)
            deadline = time.monotonic() + 5
            while not stuck and time.monotonic() < deadline:
                time.sleep(0.05)
        assert stuck and "'aggregate'" in stuck[0] and relay.stuck == stuck[0]
    finally:
        relay.close()
        silent.close()
