"""``course audit``: --demo on the embedded engines, --uri through pymongo and the wire server, usage errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from course.audit import KINDS
from course.store.backends import mongoeco_available
from course.cli import main

ROOT = Path(__file__).resolve().parents[2]
WIRE_SERVER = ROOT / "tests" / "support" / "wire_server.py"


@pytest.mark.parametrize("engine", ["mongoeco", "mongomock"])
def test_demo_reports_every_kind_it_can_know(engine, monkeypatch, capsys):
    if engine == "mongoeco" and not mongoeco_available():
        pytest.skip("mongoeco needs Python >= 3.13")
    monkeypatch.delenv("MONGODB_URI", raising=False)
    monkeypatch.setenv("COURSE_BACKEND", engine)
    assert main(["audit", "--demo", "--json"]) == 1  # findings: exit 1
    report = json.loads(capsys.readouterr().out)
    assert report["database"] == "course_06_demo"
    found = {f["kind"] for f in report["findings"]}
    unknown = {n["kind"] for n in report["sampled"]["not_examined"]}
    assert found | unknown == set(KINDS) and not found & unknown
    assert "unused_index" in unknown


@pytest.mark.parametrize("argv, message", [
    (["audit"], "use --demo"),
    (["audit", "--demo", "--db", "shop"], "leave out --db"),
    (["audit", "--demo", "--sample", "0"], "--sample must be a positive"),
    (["audit", "--uri", "mongodb://127.0.0.1:1/?directConnection=true"], "name the database with --db"),
])
def test_usage_errors(argv, message, monkeypatch, capsys):
    monkeypatch.delenv("MONGODB_URI", raising=False)
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_a_remote_server_is_refused_without_permission(monkeypatch, capsys):
    monkeypatch.delenv("COURSE_ALLOW_REMOTE", raising=False)
    assert main(["audit", "--uri", "mongodb://db.example.org:27017/", "--db", "shop"]) == 1
    assert "not this machine" in capsys.readouterr().err


@pytest.fixture(scope="module")
def wire_uri(tmp_path_factory):
    """MONGODB_URI when set (CI's wire phase), else a wire server of our own for this module."""
    if os.environ.get("MONGODB_URI"):
        yield os.environ["MONGODB_URI"]
        return
    if not mongoeco_available():
        pytest.skip("the wire server needs mongoeco (Python >= 3.13)")
    port_file = tmp_path_factory.mktemp("wire") / "port"
    server = subprocess.Popen([sys.executable, str(WIRE_SERVER), "--port", "0", "--port-file", str(port_file)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not port_file.exists() or not port_file.read_text().strip():
            assert server.poll() is None and time.monotonic() < deadline, "the wire server did not start"
            time.sleep(0.2)
        yield f"mongodb://127.0.0.1:{int(port_file.read_text())}/?directConnection=true"
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.slow
def test_uri_through_pymongo_and_the_wire_server(wire_uri, monkeypatch, capsys):
    import pymongo

    monkeypatch.setenv("COURSE_SERVER_TIMEOUT_MS", "60000")
    client = pymongo.MongoClient(wire_uri, serverSelectionTimeoutMS=60000, socketTimeoutMS=120000)
    db = client["course_audit_cli"]
    client.drop_database(db.name)
    try:
        db.orders.insert_many([{"_id": i, "customer_id": i % 7, "placed_at": i,
                                **({"schema_version": 1 + i % 2} if i % 5 else {})} for i in range(300)])
        db.orders.create_index([("customer_id", 1)])
        db.orders.create_index([("customer_id", 1), ("placed_at", 1)])
        before = list(db.orders.find().sort("_id", 1))
        assert main(["audit", "--uri", wire_uri, "--db", "course_audit_cli", "--json", "--sample", "100"]) == 1
        report = json.loads(capsys.readouterr().out)
        assert report["sampled"]["collections"]["orders"] == {"examined": 100, "documents": 300,
                                                              "method": "$sample"}
        assert {"redundant_index", "missing_version", "version_mix"} <= {f["kind"] for f in report["findings"]}
        assert main(["audit", "--uri", wire_uri, "--db", "course_audit_cli"]) == 1
        assert "on mongoeco-wire" in capsys.readouterr().out
        assert list(db.orders.find().sort("_id", 1)) == before and len(db.orders.index_information()) == 3
    finally:
        client.drop_database(db.name)
        client.close()
