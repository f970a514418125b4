"""The quirks of course/equality_scans.py and course/merge_on_fields.py: a server's answers, on every backend.

Each test states what a MongoDB server answers; on mongoeco the course's patches must give the same (their
fast paths decide only cases a server decides the same way), and on mongomock what it implements.
"""

import pytest
from bson.int64 import Int64
from pymongo.errors import DuplicateKeyError, OperationFailure


@pytest.fixture
def db(make_lab):
    return make_lab("06").scratch()


def test_equality_filters_keep_bson_equality(db):
    db.t.insert_many([{"_id": 1, "a": 1, "b": "x"}, {"_id": 2, "a": 1.0, "b": "x"},
                      {"_id": 3, "a": Int64(1), "b": "x"},
                      {"_id": 4, "a": [0, 1], "b": "x"}, {"_id": 5, "b": "x"}, {"_id": 6, "a": None, "b": "x"},
                      {"_id": 7, "a": "1", "b": "x"}, {"_id": 8, "a": 2, "b": "y"}])
    ids = lambda query: sorted(d["_id"] for d in db.t.find(query))  # noqa: E731
    assert ids({"a": 1, "b": "x"}) == [1, 2, 3, 4]  # a number equals a number of any type, and an array holding it
    assert ids({"a": None}) == [5, 6]  # null matches a missing field
    assert ids({"a": "1"}) == [7]
    assert ids({"b": "y", "a": 2}) == [8]
    assert ids({"a": 3}) == []


def test_upserts_by_fields_insert_once(db):
    for _ in range(2):
        for n in range(30):
            db.t.update_one({"customer_id": n % 3, "order_no": n}, {"$set": {"total": n}}, upsert=True)
    assert db.t.count_documents({}) == 30
    db.t.update_one({"customer_id": 0, "order_no": 0.0}, {"$set": {"total": -1}}, upsert=True)  # 0.0 equals 0
    assert db.t.count_documents({}) == 30 and db.t.find_one({"order_no": 0})["total"] == -1


def test_compound_unique_index_refuses_the_same_duplicates(db):
    db.t.create_index([("customer_id", 1), ("order_no", 1)], unique=True)
    db.t.insert_many([{"customer_id": 1, "order_no": 1}, {"customer_id": 1, "order_no": 2}, {"order_no": 3}])
    for duplicate in ({"customer_id": 1, "order_no": 1.0}, {"customer_id": Int64(1), "order_no": 2},
                      {"order_no": 3}, {"customer_id": None, "order_no": 3}):
        with pytest.raises(DuplicateKeyError):
            db.t.insert_one(dict(duplicate))
    db.t.insert_one({"customer_id": 2, "order_no": 1})
    db.t.insert_one({"customer_id": "1", "order_no": 1})  # a string is not the number 1
    assert db.t.count_documents({}) == 5


def _merge(db, **options):
    stage = {"into": "history", "on": ["customer_id", "order_no"], **options}
    db.source.aggregate([{"$project": {"_id": 0}}, {"$merge": stage}])


def _skip_without_merge(backend):
    if backend.name == "mongomock":
        pytest.skip("mongomock does not implement $merge: exercises that need it report 'needs ...'")


def test_merge_on_fields_needs_a_unique_index(db, backend):
    _skip_without_merge(backend)
    db.source.insert_many([{"customer_id": 1, "order_no": 1, "total": 5}])
    db.history.insert_one({"customer_id": 0, "order_no": 0})
    with pytest.raises(OperationFailure) as refused:
        _merge(db)
    assert refused.value.code == 51183
    db.history.create_index([("order_no", 1), ("customer_id", 1)], unique=True)  # the fields in any order
    _merge(db)
    assert db.history.count_documents({}) == 2


def test_merge_on_fields_modes(db, backend):
    _skip_without_merge(backend)
    db.history.create_index([("customer_id", 1), ("order_no", 1)], unique=True)
    db.history.insert_one({"_id": "kept", "customer_id": 1, "order_no": 1, "total": 1, "note": "old"})
    db.source.insert_many([{"customer_id": 1, "order_no": 1, "total": 10},
                           {"customer_id": 1, "order_no": 2, "total": 20}])
    _merge(db, whenMatched="keepExisting", whenNotMatched="insert")
    _merge(db, whenMatched="keepExisting", whenNotMatched="insert")  # a rerun changes nothing
    assert db.history.count_documents({}) == 2
    assert db.history.find_one({"_id": "kept"})["total"] == 1
    _merge(db, whenMatched="merge", whenNotMatched="discard")
    assert db.history.find_one({"_id": "kept"}) == {"_id": "kept", "customer_id": 1, "order_no": 1, "total": 10,
                                                   "note": "old"}
    _merge(db, whenMatched="replace", whenNotMatched="discard")
    assert db.history.find_one({"_id": "kept"}) == {"_id": "kept", "customer_id": 1, "order_no": 1, "total": 10}
    with pytest.raises(OperationFailure):
        _merge(db, whenMatched="fail")
    db.source.insert_one({"customer_id": 9, "total": 0})  # no order_no
    with pytest.raises(OperationFailure) as missing:
        _merge(db, whenMatched="keepExisting")
    assert missing.value.code == 51132


def test_compound_index_lookups_keep_array_matches(db):
    db.t.create_index([("a", 1), ("b", 1)])
    db.t.insert_many([{"_id": 1, "a": 1, "b": 2}, {"_id": 2, "a": 1.0, "b": 2}, {"_id": 3, "a": 1, "b": 3}])
    assert sorted(d["_id"] for d in db.t.find({"a": 1, "b": 2})) == [1, 2]
    db.t.insert_one({"_id": 4, "a": [0, 1], "b": 2})  # an array matches by any of its elements
    db.t.delete_one({"_id": 4})
    db.t.insert_one({"_id": 5, "a": [7, 1], "b": 2})
    assert sorted(d["_id"] for d in db.t.find({"a": 1, "b": 2})) == [1, 2, 5]
    db.u.create_index([("a", 1), ("b", 1)])
    db.u.insert_one({"_id": 1, "a": 1, "b": 2})
    db.u.update_one({"_id": 1}, {"$set": {"a": [5, 1]}})  # an update that turns the field into an array
    assert [d["_id"] for d in db.u.find({"a": 1, "b": 2})] == [1]
    assert [d["_id"] for d in db.u.find({"a": 5, "b": 2, "_id": {"$gt": 0}})] == [1]
