"""Sampling: whole collections when small, a bounded and labelled sample when large; reads only."""

from __future__ import annotations

import pytest

from course.audit import audit
from course.audit.readonly import ReadOnlyDatabase, WriteRefused
from course.audit.sampler import PICK, SAMPLE, backend_name
from tests.audit.conftest import contents


def test_a_large_collection_is_sampled_and_says_how(db, backend):
    db.big.insert_many([{"_id": i, "n": i} for i in range(300)])
    db.small.insert_many([{"_id": i} for i in range(10)])
    report = audit(db, backend=backend, sample=40)
    examined = {e.collection: e for e in report.examined}
    assert (examined["big"].examined, examined["big"].documents) == (40, 300)
    assert examined["big"].method == (SAMPLE if backend.name in ("server", "mongoeco-wire") else PICK)
    assert (examined["small"].examined, examined["small"].method) == (10, "all")
    assert report.to_json()["sampled"]["collections"]["big"] == {"examined": 40, "documents": 300,
                                                                 "method": examined["big"].method}


def test_the_embedded_sample_is_the_same_every_time(db, backend):
    if backend.name in ("server", "mongoeco-wire"):
        pytest.skip("a server samples with $sample, which is random")
    documents = [{"_id": i, "v": "x" if i % 97 else 1} for i in range(500)]
    db.big.insert_many(documents)
    first = audit(db, backend=backend, sample=100, kinds=["mixed_types"]).to_json()
    assert audit(db, backend=backend, sample=100, kinds=["mixed_types"]).to_json() == first


def test_the_backend_is_recognised_from_the_database(db, backend):
    assert backend_name(db) == backend.name


def test_the_read_only_view_refuses_writes(db, backend):
    db.t.insert_one({"_id": 1})
    view = ReadOnlyDatabase(db)
    with pytest.raises(WriteRefused):
        view["t"].aggregate([{"$match": {}}, {"$out": "copy"}])
    with pytest.raises(WriteRefused):
        view.command("drop", "t")
    for method in ("insert_one", "update_one", "delete_many", "drop", "create_index"):
        assert not hasattr(view["t"], method)
    assert not hasattr(view, "drop_collection") and not hasattr(view, "create_collection")


def test_bad_arguments(db, backend):
    db.t.insert_one({"_id": 1})
    with pytest.raises(ValueError, match="positive"):
        audit(db, backend=backend, sample=0)
    with pytest.raises(ValueError, match="unknown kind"):
        audit(db, backend=backend, kinds=["unbounded_arrays"])
    with pytest.raises(ValueError, match="no collection nope"):
        audit(db, backend=backend, collections=["nope"])
    before = contents(db)
    audit(db, backend=backend, collections=["t"])
    assert contents(db) == before


def test_the_server_code_path_runs_over_the_wire(db, backend):
    """A real server is not available here: run its code path ($sample, collStats, $indexStats, $in lookups)
    against mongoeco's wire server, whose answers have the server's shape."""
    if backend.name != "mongoeco-wire":
        pytest.skip("needs MONGODB_URI pointing at mongoeco's wire server")
    db.customers.insert_many([{"_id": c, "name": f"c{c}"} for c in range(1, 6)])
    db.orders.insert_many([{"_id": o, "customer_id": 1 + o % 5, "customer_copy": {"name": "old" if o == 3 else
                                                                                 f"c{1 + o % 5}"}}
                           for o in range(200)])
    db.orders.create_index([("customer_id", 1)])
    before = contents(db)
    report = audit(db, backend="server", sample=50)
    examined = {e.collection: e for e in report.examined}
    assert (examined["orders"].method, examined["orders"].examined) == (SAMPLE, 50)
    assert report.backend == "server" and contents(db) == before
    # mongoeco's $indexStats answers with ops 0 for every index: on the server path that reads as unused
    assert [f.evidence["index"] for f in report.of_kind("unused_index")] == ["customer_id_1"]


@pytest.mark.parametrize("server_path", [False, True])
def test_documents_by_id_reads_only_the_fields_asked_for(db, backend, server_path):
    """The lookup by _id (copy_drift's) projects the fields asked for; a dotted name gets whole documents."""
    from course.audit.sampler import lookup_by_ids

    db.people.insert_many([{"_id": k, "name": f"p{k}", "phone": str(k), "history": [{"n": n} for n in range(50)]}
                           for k in range(1, 6)])
    before = contents(db)
    lookup = lookup_by_ids(ReadOnlyDatabase(db), "server" if server_path else backend_name(db))
    assert lookup("people", [2, 4, 4, 99], ["name", "phone"]) == {
        2: {"_id": 2, "name": "p2", "phone": "2"}, 4: {"_id": 4, "name": "p4", "phone": "4"}}
    assert lookup("people", [3], ["_id"])[3]["history"][49] == {"n": 49}  # nothing but _id asked: all of it
    assert set(lookup("people", [3], ["name", "history.n"])[3]) == {"_id", "name", "phone", "history"}
    assert set(lookup("people", [3])[3]) == {"_id", "name", "phone", "history"}
    assert contents(db) == before
