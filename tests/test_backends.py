"""Backend choice: the rules of course.store.backends, and what each backend declares it lacks."""

import sys

import pytest

from course.store.backends import BackendError, _open, is_loopback, open_backend, redact, uri_hosts
from course.store.capabilities import Capability, capabilities_of
from course.store.namespace import NamespaceError, database_name, guard, lab_databases
from course.lab.session import Lab


def test_unreachable_server_stops_with_a_clear_message():
    with pytest.raises(BackendError) as raised:
        _open({"MONGODB_URI": "mongodb://127.0.0.1:9/", "COURSE_SERVER_TIMEOUT_MS": "300"})
    message = str(raised.value)
    assert "127.0.0.1:9 did not answer" in message
    assert "does not fall back" in message


def test_remote_hosts_need_explicit_permission():
    with pytest.raises(BackendError, match="not this machine"):
        _open({"MONGODB_URI": "mongodb://db.example.com:27017/"})
    with pytest.raises(BackendError, match="not this machine"):
        _open({"MONGODB_URI": "mongodb+srv://user:pw@cluster0.example.net/"})


def test_malformed_uri_is_named():
    with pytest.raises(BackendError, match="not a valid MongoDB URI"):
        _open({"MONGODB_URI": "mongodb://127.0.0.1:notaport/"})


def test_uri_and_embedded_choice_conflict():
    with pytest.raises(BackendError, match="unset one of them"):
        _open({"MONGODB_URI": "mongodb://127.0.0.1:27017/", "COURSE_BACKEND": "mongomock"})


def test_unknown_backend_name():
    with pytest.raises(BackendError, match="is not a backend"):
        _open({"COURSE_BACKEND": "sqlite"})


def test_default_backend_follows_python_version():
    backend = _open({})
    try:
        expected = "mongoeco" if sys.version_info >= (3, 13) else "mongomock"
        assert backend.name == expected
        if expected == "mongomock":
            assert "needs Python >= 3.13" in backend.notes[0]
    finally:
        backend.client.close()  # an engine left to the garbage collector warns from mongoeco's finalizer


def test_mongomock_on_request():
    backend = _open({"COURSE_BACKEND": "mongomock"})
    assert backend.name == "mongomock"
    assert not backend.supports(Capability.VALIDATORS)


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="mongoeco is available here")
def test_mongoeco_on_old_python_explains_itself():
    with pytest.raises(BackendError, match="needs Python >= 3.13"):
        _open({"COURSE_BACKEND": "mongoeco"})


def test_open_backend_is_cached_per_environment():
    env = {"COURSE_BACKEND": "mongomock"}
    assert open_backend(env) is open_backend(env)


def test_loopback_detection():
    assert is_loopback("localhost") and is_loopback("127.0.0.1") and is_loopback("127.8.9.1")
    assert is_loopback("::1") and is_loopback("[::1]")
    assert not is_loopback("10.0.0.1") and not is_loopback("example.com")
    assert uri_hosts("mongodb://a:1,localhost:2/?replicaSet=rs0") == [("a", 1), ("localhost", 2)]


def test_redact_hides_passwords():
    assert redact("mongodb://ann:secret@127.0.0.1:27017/x") == "mongodb://ann:***@127.0.0.1:27017/x"
    assert redact("mongodb://127.0.0.1:27017") == "mongodb://127.0.0.1:27017"


def test_capabilities_declared_once_and_honestly():
    assert capabilities_of("server") == frozenset(Capability)
    eco = capabilities_of("mongoeco")
    assert Capability.VALIDATORS in eco and Capability.PIPELINE_UPDATES in eco
    assert Capability.SERVER_EXPLAIN not in eco and Capability.COLLMOD not in eco
    mock = capabilities_of("mongomock")
    for missing in (Capability.VALIDATORS, Capability.PIPELINE_UPDATES, Capability.TYPE_QUERIES,
                    Capability.JSON_SCHEMA_QUERIES, Capability.SERVER_EXPLAIN):
        assert missing not in mock


def test_namespace_rules(monkeypatch):
    monkeypatch.delenv("COURSE_DB_TAG", raising=False)
    assert database_name("01") == "course_01"
    assert lab_databases("01") == ("course_01", "course_01_scratch", "course_01_demo")
    monkeypatch.setenv("COURSE_DB_TAG", "ann_1f3a")
    assert lab_databases("01") == ("course_01_gann_1f3a", "course_01_scratch_gann_1f3a", "course_01_demo_gann_1f3a")
    monkeypatch.setenv("COURSE_DB_TAG", "Bad Tag!")
    with pytest.raises(NamespaceError):
        database_name("01")
    with pytest.raises(NamespaceError):
        guard("admin")
    with pytest.raises(ValueError):
        database_name("1")


def test_reset_touches_only_its_own_databases(backend, monkeypatch):
    monkeypatch.delenv("COURSE_DB_TAG", raising=False)
    client = backend.client
    client["course_00"].keep.insert_one({"_id": 1})
    client["course_01_other"].keep.insert_one({"_id": 1})
    lab = Lab("01", backend)
    lab.db.mine.insert_one({"_id": 1})
    lab.scratch().mine.insert_one({"_id": 1})
    lab.reset()
    names = set(client.list_database_names())
    assert "course_01" not in names and "course_01_scratch" not in names
    assert {"course_00", "course_01_other"} <= names
    client.drop_database("course_00")
    client.drop_database("course_01_other")


def test_lab_describe_names_backend_and_gaps(backend):
    text = Lab("01", backend).describe()
    assert backend.description in text
    assert "Database: course_01" in text
    for capability in backend.missing:
        assert str(capability) in text
    if backend.missing:  # one short line at the lab's start; the reasons on request
        assert sum(1 for line in text.splitlines() if line.startswith("Cannot check here")) == 1
        assert len(text.splitlines()) == 4 + len(backend.notes)
        details = Lab("01", backend).limits()
        assert all(f"{capability}: {why}" in details for capability, why in backend.missing.items())


# ---- environment that must give a clear message, never a traceback or the wrong backend (issue 11) --------

def test_a_uri_of_only_spaces_is_an_error_not_the_embedded_engine():
    with pytest.raises(BackendError, match="only spaces"):
        _open({"MONGODB_URI": "   "})
    assert _open({"MONGODB_URI": "", "COURSE_BACKEND": "mongomock"}).name == "mongomock"  # empty is unset


@pytest.mark.parametrize("env, fragment", [
    ({"MONGODB_URI": "mongodb://127.0.0.1/?directconection=true&foo=1"}, "unknown options directconection, foo"),
    ({"MONGODB_URI": "mongodb://127.0.0.1/", "COURSE_SERVER_TIMEOUT_MS": "3s"},
     "COURSE_SERVER_TIMEOUT_MS='3s' is not a number of milliseconds"),
    ({"MONGODB_URI": "mongodb://127.0.0.1/", "COURSE_SERVER_TIMEOUT_MS": "-5"}, "between 1 and"),
    ({"MONGODB_URI": "mongodb://127.0.0.1/?serverSelectionTimeoutMS=soon"}, "must be an integer"),
    ({"MONGODB_URI": "http://127.0.0.1/"}, "must start with mongodb://"),
    ({"MONGODB_URI": "mongodb://127.0.0.1/", "COURSE_ALLOW_REMOTE": "yes"}, "set it to 1"),
])
def test_bad_settings_get_a_message_naming_them(env, fragment):
    with pytest.raises(BackendError) as raised:
        _open(env)
    assert fragment in str(raised.value)


@pytest.mark.parametrize("uri, fragment", [
    ("mongodb+srv://localhost/", "lets DNS pick the hosts"),
    ("mongodb+srv://user:pw@127.0.0.1/course", "lets DNS pick the hosts"),
    ("mongodb://127.0.0.1:27017/?replicaSet=rs0", "replicaSet="),
    ("mongodb://localhost:1,127.0.0.1:2/?replicaset=rs0", "replicaSet="),
])
def test_uris_whose_hosts_are_picked_after_the_loopback_check_are_refused(uri, fragment):
    with pytest.raises(BackendError) as raised:
        _open({"MONGODB_URI": uri})
    message = str(raised.value)
    assert fragment in message and "after the course has checked" in message
    assert "COURSE_ALLOW_REMOTE=1" in message and "directConnection=true" in message
    assert "pw" not in message


def test_with_remote_allowed_a_replica_set_uri_is_tried(monkeypatch):
    with pytest.raises(BackendError, match="did not answer"):
        _open({"MONGODB_URI": "mongodb://127.0.0.1:9/?replicaSet=rs0", "COURSE_ALLOW_REMOTE": "1",
               "COURSE_SERVER_TIMEOUT_MS": "200"})


def test_a_loopback_seed_that_leads_to_remote_members_is_refused(monkeypatch):
    import pymongo

    closed = []

    class Description:
        def server_descriptions(self):
            return {("127.0.0.1", 27017): None, ("db1.example.com", 27017): None}

    class Client:  # what pymongo knows after a loopback member's hello listed its replica set
        def __init__(self, uri, **options):
            self.admin = self
            self.topology_description = Description()

        def command(self, name):
            return {"ok": 1, "version": "8.0.0"}

        def close(self):
            closed.append(True)

    monkeypatch.setattr(pymongo, "MongoClient", Client)
    with pytest.raises(BackendError) as raised:
        _open({"MONGODB_URI": "mongodb://127.0.0.1:27017/"})
    assert "db1.example.com" in str(raised.value) and "directConnection=true" in str(raised.value)
    assert closed == [True]
    assert _open({"MONGODB_URI": "mongodb://127.0.0.1:27017/", "COURSE_ALLOW_REMOTE": "1"}).name == "server"
