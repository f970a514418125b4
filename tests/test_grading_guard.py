"""The grader's protections one by one: the plain-data channel, the relay, hard limits, secret tests, bad input."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import nbformat
import pytest

from course.grading import store
from course.grading.channel import ChannelError, Encoder, Opaque, decode, receive, send
from course.grading.commandlog import CommandLog, operations
from course.grading.relay import Relay, parse_op_msg, refusal
from course.grading.runner import Limits, describe_cell, grade_notebook, lab_exercises, suspicious_code
from course.grading.sandbox import base_arguments, sandboxed
from course.grading.secret import SecretTestError, hidden_for, load_secret_tests
from course.grading.submissions import find_empty
from course.engine.recording import RecordingCollection
from course.engine.results import Result, Status
from support.fake_lesson import code, notebook

from test_grading import _SANDBOX, fake_lab  # noqa: F401 - fixture

pytestmark = pytest.mark.containment


# ---- the channel carries plain data only ----------------------------------------------

class AlwaysEqual:
    def __eq__(self, other):
        return True


class Spy(dict):
    seen: list = []

    def __eq__(self, other):
        Spy.seen.append(other)
        return True


class Shouty(str):
    def __eq__(self, other):
        return True


def test_objects_with_their_own_methods_cross_as_plain_data_or_not_at_all():
    plain = decode(Encoder(materialise=True).encode(
        {"a": AlwaysEqual(), "spy": Spy(x=1), "s": Shouty("hi"), "t": (1, 2), "set": {3}, 5: "int key"}))
    assert isinstance(plain["a"], Opaque) and plain["a"] != plain["a"] == plain["a"] or plain["a"] != 42
    assert plain["a"] != 42 and plain["a"] != "anything"
    assert type(plain["spy"]) is dict and plain["spy"] == {"x": 1} and plain["spy"] != {"x": 2}
    assert type(plain["s"]) is str and plain["s"] != "other"
    assert plain["t"] == (1, 2) and plain["set"] == {3} and plain[5] == "int key"
    assert Spy.seen == []  # no comparison reached the learner's object


def test_the_channel_refuses_oversized_deep_and_malformed_frames():
    deep: list = []
    for _ in range(150):
        deep = [deep]
    with pytest.raises(ValueError, match="nested"):
        Encoder().encode(deep)
    a, b = socket.socketpair()
    send(a, {"ok": [1, 2]})
    assert receive(b) == {"ok": [1, 2]}
    a.sendall((1 << 30).to_bytes(4, "big"))
    with pytest.raises(ChannelError, match="outside the limits"):
        receive(b)
    a.sendall((8).to_bytes(4, "big") + b"\x08\0\0\0\x99\0\0\0")
    with pytest.raises(ChannelError):
        receive(b)
    with pytest.raises(ChannelError, match="unknown tag"):
        decode({"$course": "pickle", "data": "..."})


def test_generators_and_cursors_come_back_as_lists():
    encoder = Encoder(materialise=True)
    assert decode(encoder.encode((x for x in range(3)))) == [0, 1, 2]
    assert decode(encoder.encode({"k": map(str, [1])})) == {"k": ["1"]}



def test_a_returned_cursor_or_generator_remembers_it_was_not_a_list():
    # "return a list (not the cursor itself)": the grader must see what the learner's function returned
    from course.engine.exercise import Exercise, Incorrect
    from course.grading.channel import Materialised

    encoder = Encoder(materialise=True)
    came = decode(encoder.encode((x for x in range(3))))
    assert isinstance(came, Materialised) and came.returned_type == "generator" and came == [0, 1, 2]
    assert not isinstance(decode(encoder.encode([0, 1, 2])), Materialised)
    exercise = Exercise.__new__(Exercise)
    assert exercise.expect_type("names", [1], list) == [1]
    with pytest.raises(Incorrect, match="names should be a list; got a generator"):
        exercise.expect_type("names", came, list)


# ---- the relay: only this call's databases, and the command log --------------------

def _op_msg(body: dict, request_id: int = 7) -> bytes:
    import struct

    import bson

    payload = struct.pack("<I", 0) + b"\0" + bson.encode(body)
    return struct.pack("<iiii", 16 + len(payload), request_id, 0, 2013) + payload


def test_commands_become_the_calls_a_recording_wrapper_logs():
    assert operations({"find": "orders", "filter": {"a": 1}, "limit": 1, "$db": "x"}, {}) == [
        ("read", "orders", "find", ({"a": 1},), {"limit": 1})]
    update = operations({"update": "orders", "$db": "x"}, {"updates": [
        {"q": {"_id": 1}, "u": {"$push": {"a": 1}}, "upsert": False}, {"q": {}, "u": {"b": 2}, "multi": False}]})
    assert [u[2] for u in update] == ["update_one", "replace_one"]
    assert operations({"aggregate": "c", "pipeline": [{"$match": {"k": 1}}, {"$group": {"_id": 1, "n": {"$sum": 1}}}],
                       "$db": "x"}, {})[0][2:4] == ("count_documents", ({"k": 1},))
    assert operations({"findAndModify": "c", "query": {"q": 1}, "update": {"$inc": {"n": 1}}, "$db": "x"}, {})[0][2] \
        == "find_one_and_update"


def test_the_command_log_feeds_the_wrapper_and_runs_its_race_before_the_first_write_after_a_read():
    class Coll:
        name = "orders"

    raced = []
    wrapper = RecordingCollection(Coll(), race=lambda: raced.append(len(wrapper.ops())))
    log = CommandLog()
    log.watch_collection("course_01_scratch_gx", "orders", wrapper)
    log("course_01_scratch_gx", {"find": "orders", "filter": {}}, {})
    log("course_01_scratch_gx", {"update": "orders"}, {"updates": [{"q": {"_id": 1}, "u": {"$set": {"a": 1}}}]})
    assert [o.method for o in wrapper.ops()] == ["find", "update_one"] and raced == [1]
    assert wrapper.read_then_write() and wrapper.updates()[0].update == {"$set": {"a": 1}}


def test_the_relay_refuses_other_databases_and_data_commands_between_calls(tmp_path):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(0.2)
    forwarded = []

    def upstream():
        def read(conn):
            while True:
                try:
                    data = conn.recv(65536)
                except OSError:
                    return
                if not data:
                    return
                forwarded.append(data)

        while server.fileno() != -1:  # a closed listener ends this thread (a later fork needs none left)
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            threading.Thread(target=read, args=(conn,), daemon=True).start()

    threading.Thread(target=upstream, daemon=True).start()
    relay = Relay(str(tmp_path / "db.sock"), lambda: server.getsockname())
    try:
        client = socket.socket(socket.AF_UNIX)
        client.connect(str(tmp_path / "db.sock"))  # outside a call: a data command closes the connection
        try:
            client.sendall(_op_msg({"find": "x", "$db": "course_01_scratch_gx"}))
            assert client.recv(100) == b""
        except (BrokenPipeError, ConnectionResetError):
            pass
        with relay.call({"course_01_scratch_gx"}):
            client = socket.socket(socket.AF_UNIX)
            client.connect(str(tmp_path / "db.sock"))
            client.sendall(_op_msg({"listDatabases": 1, "$db": "admin"}))
            _, body, _ = parse_op_msg(client.recv(65536)[16:])
            assert body["code"] == 13 and "refused" in body["errmsg"]
            client.sendall(_op_msg({"dropDatabase": 1, "$db": "course_01_gother"}))
            _, body, _ = parse_op_msg(client.recv(65536)[16:])
            assert body["code"] == 13
            client.sendall(_op_msg({"find": "x", "$db": "course_01_scratch_gx"}))
            for _ in range(100):
                if forwarded:
                    break
                threading.Event().wait(0.02)
        assert len(forwarded) == 1 and b"course_01_scratch_gx" in forwarded[0]
        try:
            client.sendall(_op_msg({"find": "x", "$db": "course_01_scratch_gx"}))  # the call has ended
            assert client.recv(100) == b""  # so a data command loses its connection
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert len(forwarded) == 1
        assert len(relay.refused) == 2
    finally:
        relay.close()
        server.close()
    assert refusal(3, "x")[8:12] == (3).to_bytes(4, "little")



def _op_query(collection: str, query: dict, request_id: int = 8) -> bytes:
    import struct

    import bson

    payload = struct.pack("<i", 0) + collection.encode() + b"\0" + struct.pack("<ii", 0, -1) + bson.encode(query)
    return struct.pack("<iiii", 16 + len(payload), request_id, 0, 2004) + payload


def _op_compressed(inner: bytes, request_id: int = 9) -> bytes:
    import struct
    import zlib

    original_opcode = struct.unpack_from("<i", inner, 12)[0]
    body = zlib.compress(inner[16:])
    payload = struct.pack("<iiB", original_opcode, len(inner) - 16, 2) + body
    return struct.pack("<iiii", 16 + len(payload), request_id, 0, 2012) + payload


def _upstream_recorder():
    """A fake server that records whatever reaches it; returns (listening socket, forwarded chunks)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    forwarded: list[bytes] = []

    def serve():
        while server.fileno() != -1:  # a closed listener ends this thread (a later fork needs none left)
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            threading.Thread(target=lambda: [forwarded.append(d) for d in iter(lambda: conn.recv(65536), b"")],
                             daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return server, forwarded


def _closed(client: socket.socket) -> bool:
    try:
        client.settimeout(5)
        return client.recv(100) == b""
    except (BrokenPipeError, ConnectionResetError):
        return True


@pytest.mark.parametrize("message", [
    _op_compressed(_op_msg({"find": "x", "$db": "course_01_scratch_gx"})),
    _op_compressed(_op_msg({"hello": 1, "$db": "admin"})),
    _op_query("course_01_scratch_gx.$cmd", {"find": "x"}),
    _op_query("course_01_gother.x", {}),
    _op_query("admin.$cmd", {"listDatabases": 1}),
    b"\x10\x00\x00\x00" + b"\x00" * 8 + (1999).to_bytes(4, "little"),  # an unknown opcode
    _op_msg({"find": "x", "$db": "course_01_scratch_gx"})[:20] + b"\xff" * 30,  # a length that lies
], ids=["compressed-find", "compressed-hello", "query-command", "query-other-db", "query-admin", "unknown-opcode",
        "truncated"])
def test_compressed_legacy_and_malformed_messages_never_reach_the_checks_server(tmp_path, message):
    server, forwarded = _upstream_recorder()
    relay = Relay(str(tmp_path / "db.sock"), lambda: server.getsockname())
    try:
        with relay.call({"course_01_scratch_gx"}):  # even during a call, on the call's own database
            client = socket.socket(socket.AF_UNIX)
            client.connect(str(tmp_path / "db.sock"))
            try:
                client.sendall(message)
                if len(message) == int.from_bytes(message[:4], "little"):
                    assert _closed(client)
            except (BrokenPipeError, ConnectionResetError):
                pass
            finally:
                client.close()
            threading.Event().wait(0.2)
        assert forwarded == []
    finally:
        relay.close()
        server.close()


def test_a_legacy_handshake_passes_so_old_drivers_can_connect(tmp_path):
    server, forwarded = _upstream_recorder()
    relay = Relay(str(tmp_path / "db.sock"), lambda: server.getsockname())
    try:
        client = socket.socket(socket.AF_UNIX)
        client.connect(str(tmp_path / "db.sock"))
        client.sendall(_op_query("admin.$cmd", {"isMaster": 1}))
        for _ in range(100):
            if forwarded:
                break
            threading.Event().wait(0.02)
        assert forwarded and b"isMaster" in forwarded[0]
        client.close()
    finally:
        relay.close()
        server.close()


def test_the_launcher_limits_cpu_time_and_file_size(tmp_path):
    script = ("import course.grading.launcher as l, os, resource, signal\n"
              "l.set_hard_limit('RLIMIT_FSIZE', 1024 * 1024)\n"
              "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
              "try:\n    open('big', 'wb').write(b'x' * (2 * 1024 * 1024))\n"
              "except OSError as error:\n    print('file:', error.errno)\n"
              "print('size:', os.path.getsize('big'))\n"
              "l.set_hard_limit('RLIMIT_CPU', 1)\n"
              "while True:\n    pass\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert "file: 27" in done.stdout  # EFBIG
    assert "size: 1048576" in done.stdout
    assert done.returncode in (-9, -24)  # SIGKILL or SIGXCPU: the busy loop was stopped by the CPU limit


@pytest.mark.slow
@pytest.mark.skipif(bool(__import__("course.grading.sandbox", fromlist=["x"]).sandbox_problem()),
                    reason="no sandbox here")
def test_the_sandbox_tmp_is_capped(tmp_path):
    from course.grading.sandbox import TMP_BYTES

    work, sockets = tmp_path / "work", tmp_path / "sockets"
    work.mkdir()
    sockets.mkdir()
    script = ("import os\nwritten = 0\ntry:\n    with open('/tmp/fill', 'wb') as f:\n"
              "        while True:\n            f.write(b'x' * (1 << 20)); f.flush(); written += 1 << 20\n"
              "except OSError as error:\n    print('stopped', error.errno, written)\n")
    command = sandboxed([sys.executable, "-I", "-c", script], work, sockets, {"PATH": "/usr/bin:/bin"})
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    stopped, errno, written = done.stdout.split()
    assert stopped == "stopped" and errno == "28"  # ENOSPC
    assert TMP_BYTES - (2 << 20) <= int(written) <= TMP_BYTES
    assert not list(tmp_path.rglob("fill"))  # nothing of it outside the sandbox


# ---- the sandbox's view ----------------------------------------------------------------

def test_the_sandbox_binds_the_environment_read_only_and_nothing_of_the_class(tmp_path):
    import course

    arguments = sandboxed(["python"], tmp_path / "work", tmp_path / "sockets", {"A": "1"})
    read_only = {arguments[i + 1] for i, a in enumerate(arguments) if a == "--ro-bind"}
    writable = {arguments[i + 1] for i, a in enumerate(arguments) if a == "--bind"}
    assert writable == {str(tmp_path / "work"), str(tmp_path / "sockets")}
    package = str(Path(course.__file__).resolve().parent)
    assert package in read_only
    over = [arguments[i + 1] for i, a in enumerate(arguments) if a == "--ro-bind" and arguments[i + 2] == package]
    assert len(over) == 2 and over[-1].endswith("/course") and over[-1] != package  # the learners' copy on top
    assert "raise NotImplementedError" in Path(over[-1], "lessons", "lesson01", "__init__.py").read_text()
    repository = Path(course.__file__).resolve().parents[1]
    assert not any(Path(p) in (repository, repository / "tests", Path("/root"), Path("/")) for p in read_only)
    assert {"--unshare-all", "--die-with-parent", "--new-session", "--clearenv"} <= set(arguments)
    assert arguments[arguments.index("--uid") + 1] == "65534" and "--share-net" not in base_arguments()


def test_suspicious_code_is_reported_with_its_cell():
    nb = notebook(code("x = 1"), code("get_ipython().input_transformers_post.append(f)"))
    assert suspicious_code(nb) == ["cell 1 rewrites cells before they run (it mentions 'input_transformers')"]


def test_cells_are_described_by_their_index_and_exercise(fake_lab):
    nb = notebook(code("start"), code("total = 1", "exercise:99.1"), code("print(1)"))
    assert describe_cell(nb, 0) == "cell 0 (before the first exercise)"
    assert describe_cell(nb, 1) == "cell 1 (the answer cell of exercise 99.1)"
    assert describe_cell(nb, 2) == "cell 2 (after exercise 99.1)"


# ---- secret tests ---------------------------------------------------------------------

def test_secret_tests_are_loaded_counted_and_checked(tmp_path, fake_lab):
    (tmp_path / "a.py").write_text(
        "from course.grading.secret import hidden_for\n"
        "@hidden_for('99.1', points=2)\ndef big(exercise, answers):\n    '''total is big'''\n"
        "@hidden_for('99.1')\ndef small(exercise, answers):\n    pass\n")
    (tmp_path / "_helper.py").write_text("raise SystemExit('not a test file')\n")
    secret = load_secret_tests(tmp_path)
    assert secret.points == {"99.1": 3.0} and secret.descriptions == {"99.1": ["total is big", "small"]}
    assert len(secret.digest) == 64 and list(secret.files.values()) == [(tmp_path / "a.py").resolve()]
    _, exercises = lab_exercises("99", secret)
    assert exercises[0].max_points == 6.0 and exercises[1].max_points == 2.0
    with pytest.raises(SecretTestError, match="exercise id"):
        hidden_for("1.2")
    (tmp_path / "b.py").write_text("x = 1\n")
    with pytest.raises(SecretTestError, match="no function decorated"):
        load_secret_tests(tmp_path)
    (tmp_path / "b.py").write_text("import nowhere_to_be_found\n")
    with pytest.raises(SecretTestError, match="cannot be imported"):
        load_secret_tests(tmp_path)
    with pytest.raises(SecretTestError, match="not a folder"):
        load_secret_tests(tmp_path / "missing")


# ---- results on disk ----------------------------------------------------------------------

def test_atomic_write_leaves_the_old_file_when_writing_fails(tmp_path, monkeypatch):
    target = tmp_path / "r" / "x.json"
    store.atomic_write(target, "old")

    def broken(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError):
        store.atomic_write(target, "new")
    assert target.read_text() == "old" and [p.name for p in target.parent.iterdir()] == ["x.json"]


def test_results_are_keyed_by_content_and_damaged_files_are_regraded(tmp_path, fake_lab):
    from course.grading.runner import Graded

    nb = tmp_path / "99-x.ipynb"
    nb.write_text("{}")
    key = store.grading_key(nb, "code", {"lab": ""})
    graded = Graded("ann", nb, "99", [Result("99.1", "t", Status.CORRECT, "", 3, 3)], ["a note"], "", "T", ["f"])
    store.save(tmp_path / "out", key, graded, nb, "run1")
    loaded, run = store.load(tmp_path / "out", "ann", nb, key)
    assert (loaded, run) == (graded, "run1")
    nb.write_text('{"changed": 1}')
    assert store.grading_key(nb, "code", {"lab": ""}) != key
    assert store.load(tmp_path / "out", "ann", nb, "another key") is None
    store.result_path(tmp_path / "out", "ann", nb).write_text("{half a fi")
    assert store.load(tmp_path / "out", "ann", nb, key) is None
    assert store.safe_name("a b") != store.safe_name("a_b")


# ---- bad input -----------------------------------------------------------------------------

def test_empty_learner_folders_and_empty_class_folders_are_found(tmp_path):
    (tmp_path / "class" / "ann").mkdir(parents=True)
    (tmp_path / "class" / "ben").mkdir()
    (tmp_path / "class" / "ben" / "01-x.ipynb").write_text("{}")
    (tmp_path / "nothing").mkdir()
    learners, folders = find_empty([tmp_path / "class", tmp_path / "nothing"])
    assert learners == [("ann", tmp_path / "class" / "ann")] and folders == [tmp_path / "nothing"]


def test_a_notebook_of_another_lab_gets_error_rows_for_the_lab_being_graded(fake_lab, tmp_path):
    target = tmp_path / "00-start-here.ipynb"
    nbformat.write(notebook(code("1"), lab="00"), target)
    graded = grade_notebook(target, "x", expected_lab="99")
    assert [r.exercise_id for r in graded.results] == ["99.1", "99.2", "99.3"]
    assert {r.status for r in graded.results} == {Status.ERROR}
    assert "is lab 00's notebook, but lab 99 is being graded" in graded.skipped


# ---- limits ------------------------------------------------------------------------------

def test_the_launcher_sets_hard_limits_the_learner_cannot_raise():
    script = ("import resource, course.grading.launcher as l; l.limit_memory(512); "
              "l.set_hard_limit('RLIMIT_NPROC', 300)\n"
              "print(*resource.getrlimit(resource.RLIMIT_AS))\n"
              "try:\n    resource.setrlimit(resource.RLIMIT_AS, (2 ** 40, 2 ** 40))\n"
              "except (ValueError, OSError):\n    print('refused')\n"
              "bytearray(1024 ** 3)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    first, second = done.stdout.splitlines()[:2]
    assert first == f"{512 * 1024 * 1024} {512 * 1024 * 1024}" and second == "refused"
    assert "MemoryError" in done.stderr


@pytest.mark.slow
def test_the_notebook_time_limit_names_the_cell_and_exercise(fake_lab, tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_BACKEND", "mongomock")
    from support.golden_class import solution

    nb = solution()
    nb.cells[4].source += "\nimport time\ntime.sleep(120)"
    target = tmp_path / "99-fake-lab.ipynb"
    nbformat.write(nb, target)
    graded = grade_notebook(target, "slow", limits=Limits(cell_timeout=100, notebook_timeout=12),
                            sandbox=_SANDBOX)
    statuses = {r.exercise_id: r.status for r in graded.results}
    assert statuses == {"99.1": Status.CORRECT, "99.2": Status.ERROR, "99.3": Status.ERROR}
    text = " ".join(graded.notes) + " ".join(r.message for r in graded.results)
    assert "total time limit of 12 s" in text
    assert "cell 4 (the answer cell of exercise 99.2)" in text


def test_an_oversized_notebook_is_not_read(fake_lab, tmp_path, monkeypatch):
    import course.grading.runner as runner

    monkeypatch.setattr(runner, "MAX_NOTEBOOK_BYTES", 1000)
    target = tmp_path / "99-fake-lab.ipynb"
    target.write_text("{" + " " * 5000 + "}")
    graded = grade_notebook(target, "big")
    assert [r.status for r in graded.results] == [Status.ERROR] * 3 and "are not graded" in graded.skipped


def test_feedback_files_of_similar_names_do_not_collide():
    from course.grading.gradebook import feedback_filename

    assert feedback_filename("bob") == "bob.md"
    assert len({feedback_filename(n) for n in ("a b", "a_b", "a/b")}) == 3




def test_a_collation_crosses_as_the_document_it_stands_for():
    # lesson 08's name_search may return pymongo's Collation: the checks must see its fields, not an opaque object
    from pymongo.collation import Collation

    from course.grading.agent import _collation_document

    assert _collation_document(Collation("en", strength=2)) == {"locale": "en", "strength": 2}
    assert _collation_document({"locale": "en"}) is None


def test_an_opaque_value_is_named_after_its_type():
    """A value that crossed as its type name alone reads as that type in a check's message (``type(x).__name__``),
    as in one process: review 38 saw "(a Opaque)" for an UpdateResult."""
    from course.engine.crossed_values import opaque

    value = opaque("UpdateResult")
    assert isinstance(value, Opaque) and type(value).__name__ == "UpdateResult"
    assert repr(value) == "<a UpdateResult object>" and value != opaque("UpdateResult")
    odd = opaque("not a name")
    assert type(odd) is Opaque and odd.type_name == "not a name"
    assert type(decode(_encoded_opaque("Cursor"))).__name__ == "Cursor"


def _encoded_opaque(type_name):
    """What the channel sends for a value that is not data (see channel.Encoder)."""
    from course.grading.channel import Encoder
    return Encoder().encode(object.__new__(type(type_name, (), {})))
