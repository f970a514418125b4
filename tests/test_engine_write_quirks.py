"""The quirks of course/store/mongoeco/equality_scans.py, merge_on_fields.py and embedded_fields.py: a server's answers, on every backend.

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


# --- course/store/mongoeco/numeric_types.py and course/store/mongoeco/command_arguments.py: what pymongo against a server answers -----------


def _mongoeco_only(backend, what):
    if backend.name != "mongoeco":
        pytest.skip(f"{what}: a quirk of mongoeco the course absorbs ({backend.name} is left as it is)")


def test_every_long_comes_back_as_an_int64(db, backend):
    _mongoeco_only(backend, "longs decoded as Int64")
    db.t.insert_many([{"_id": 1, "v": Int64(5)}, {"_id": 2, "v": 2 ** 31, "deep": [2 ** 40, {"x": -(2 ** 33)}]},
                      {"_id": 3, "v": 2 ** 31 - 1}, {"_id": 4, "v": 7}])
    db.t.update_one({"_id": 3}, {"$inc": {"v": 1}})  # an int past int32 becomes a long, as on a server
    found = {d["_id"]: d for d in db.t.find()}
    assert [type(found[i]["v"]) for i in (1, 2, 3, 4)] == [Int64, Int64, Int64, int]
    assert type(found[2]["deep"][0]) is Int64 and type(found[2]["deep"][1]["x"]) is Int64
    types = {d["_id"]: d["t"] for d in db.t.aggregate([{"$project": {"t": {"$type": "$v"}}}])}
    longs = {i for i, d in found.items() if isinstance(d["v"], Int64)}  # a learner's census of longs
    assert longs == {i for i, t in types.items() if t == "long"} == {1, 2, 3}
    assert type(db.t.find_one({"_id": 3})["v"]) is Int64
    total = next(db.t.aggregate([{"$group": {"_id": None, "s": {"$sum": "$v"}}}]))["s"]
    assert total == 5 + 2 ** 32 + 7 and type(total) is Int64
    after = db.t.find_one_and_update({"_id": 4}, {"$inc": {"v": 1}}, return_document=True)
    assert after["v"] == 8 and type(after["v"]) is int  # an int that fits stays an int


def test_arithmetic_of_an_int_and_a_long_is_a_long(db, backend):
    _mongoeco_only(backend, "arithmetic type widening")
    db.t.insert_many([{"_id": 1, "views": 3}, {"_id": 2, "views": Int64(4)}])
    typed = lambda expression: [(d["r"], type(d["r"])) for d in  # noqa: E731
                                db.t.aggregate([{"$sort": {"_id": 1}}, {"$project": {"r": expression}}])]
    assert typed({"$multiply": ["$views", Int64(1)]}) == [(3, Int64), (4, Int64)]
    assert typed({"$add": ["$views", Int64(1)]}) == [(4, Int64), (5, Int64)]
    assert typed({"$subtract": ["$views", Int64(1)]}) == [(2, Int64), (3, Int64)]
    assert typed({"$add": ["$views", 1]}) == [(4, int), (5, Int64)]  # int + int stays an int
    assert typed({"$multiply": ["$views", 1.5]}) == [(4.5, float), (6.0, float)]
    assert typed({"$add": [2 ** 31, -5]}) == [(2 ** 31 - 5, Int64)] * 2  # a long (2 ** 31) plus an int: a long
    kinds = [d["t"] for d in db.t.aggregate([{"$sort": {"_id": 1}},
                                             {"$project": {"t": {"$type": {"$add": ["$views", Int64(0)]}}}}])]
    assert kinds == ["long", "long"]
    db.t.update_one({"_id": 1}, {"$mul": {"views": Int64(1)}})
    assert type(db.t.find_one({"_id": 1})["views"]) is Int64


def test_inc_past_int64_is_refused_as_a_server_refuses_it(db, backend):
    from pymongo.errors import WriteError

    _mongoeco_only(backend, "$inc overflow")
    db.t.insert_many([{"_id": "k", "v": Int64(2 ** 63 - 1)}, {"_id": 7, "v": 42}])
    with pytest.raises(WriteError) as refused:
        db.t.update_one({"_id": "k"}, {"$inc": {"v": 1}})
    assert refused.value.code == 2
    assert refused.value.details["errmsg"] == ("Failed to apply $inc operations to current value "
                                               '((NumberLong)9223372036854775807) for document {_id: "k"}')
    with pytest.raises(WriteError) as refused:
        db.t.update_one({"_id": 7}, {"$inc": {"v": Int64(2 ** 63 - 1)}})
    assert "((NumberInt)42) for document {_id: 7}" in str(refused.value)
    with pytest.raises(OperationFailure) as refused:
        db.t.find_one_and_update({"_id": "k"}, {"$inc": {"v": 1}})
    assert refused.value.code == 2
    assert db.t.find_one({"_id": "k"})["v"] == 2 ** 63 - 1 and db.t.find_one({"_id": 7})["v"] == 42  # unchanged


def test_database_command_takes_pymongos_positional_value(db, backend):
    _mongoeco_only(backend, "Database.command's signature")
    db.products.insert_one({"category": "tools"})
    db.products.create_index("category")
    assert db.command("dropIndexes", "products", index="category_1")["ok"] == 1
    assert "category_1" not in db.products.index_information()
    assert db.command("collStats", "products")["count"] == 1
    db.command("create", "readings", timeseries={"timeField": "ts", "metaField": "sensor"})
    assert "readings" in db.list_collection_names()
    assert db.command({"ping": 1})["ok"] == 1 and db.command("ping")["ok"] == 1
    assert db.command("noSuchCommand", check=False)["ok"] == 0
    with pytest.raises(OperationFailure):
        db.command("noSuchCommand")


def test_rename_takes_drop_target(db, backend):
    _mongoeco_only(backend, "Collection.rename's keyword arguments")
    db.old.insert_many([{"_id": 1}, {"_id": 2}])
    db.new.insert_one({"_id": "stale"})
    db.old.rename("new", dropTarget=True)
    assert sorted(db.list_collection_names()) == ["new"] and sorted(d["_id"] for d in db.new.find()) == [1, 2]
    db.new.rename("newer", dropTarget=False)
    assert db.list_collection_names() == ["newer"]
    with pytest.raises(OperationFailure) as refused:
        db.newer.rename("other", noSuchField=True)
    assert refused.value.code == 40415


def test_collation_objects_are_taken_as_pymongo_takes_them(db, backend):
    from pymongo.collation import Collation

    _mongoeco_only(backend, "pymongo Collation objects")
    caseless = Collation("en", strength=2)
    db.t.insert_many([{"_id": 1, "name": "Ada"}, {"_id": 2, "name": "ada"}, {"_id": 3, "name": "Bob"}])
    assert db.t.count_documents({"name": "ADA"}, collation=caseless) == 2
    assert sorted(d["_id"] for d in db.t.find({"name": "ADA"}, collation=caseless)) == [1, 2]
    assert len(list(db.t.aggregate([{"$match": {"name": "ADA"}}], collation=caseless))) == 2
    assert db.t.update_many({"name": "ADA"}, {"$set": {"seen": True}}, collation=caseless).modified_count == 2
    name = db.t.create_index("name", collation=caseless)
    assert db.t.index_information()[name]["collation"]["strength"] == 2
    assert db.t.count_documents({"name": "ADA"}) == 0  # without the collation, a binary comparison


def test_set_with_an_embedded_document_of_fields_sets_them_inside(db, backend):
    """A server reads {"$set": {"customer": {"phones": ...}}} as customer.phones: the customer's other fields stay
    (course/store/mongoeco/embedded_fields.py); an expression, $literal and a missing target are built whole."""
    from course.store.capabilities import Capability

    db.t.insert_many([{"_id": 1, "customer": {"name": "Ann", "phone": "0900", "address": {"city": "Oslo"}}},
                      {"_id": 2, "customer": "not a document"}, {"_id": 3}])
    stage = {"$set": {"customer": {"phones": ["$customer.phone"], "address": {"zip": "0150"}}}}
    got = {d["_id"]: d.get("customer") for d in db.t.aggregate([stage])}
    assert got[1] == {"name": "Ann", "phone": "0900", "address": {"city": "Oslo", "zip": "0150"}, "phones": ["0900"]}
    assert got[3]["address"] == {"zip": "0150"}
    assert isinstance(got[2], dict) and got[2]["address"] == {"zip": "0150"}  # a scalar is replaced by the document
    literal = next(iter(db.t.aggregate([{"$match": {"_id": 1}}, {"$set": {"customer": {"$literal": {"a": 1}}}}])))
    assert literal["customer"] == {"a": 1}
    expression = next(iter(db.t.aggregate([{"$match": {"_id": 1}},
                                           {"$addFields": {"customer": {"$ifNull": ["$nothing", "x"]}}}])))
    assert expression["customer"] == "x"
    if not backend.supports(Capability.PIPELINE_UPDATES):
        return
    db.t.update_one({"_id": 1}, [{"$set": {"schema_version": 2, "customer": {"phones": ["$customer.phone"]}}},
                                 {"$unset": "customer.phone"}])
    assert db.t.find_one({"_id": 1})["customer"] == {"name": "Ann", "address": {"city": "Oslo"}, "phones": ["0900"]}
