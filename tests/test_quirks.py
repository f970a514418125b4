"""Backend quirks absorbed by the course: a correct answer written in a server's idiom works everywhere."""

import re

import pytest
from pymongo import IndexModel, UpdateOne

from course.toolkit.matching import index_on, index_specs, matching_ids, same_filter
from course.store.quirks import QUIRKS


@pytest.fixture
def db(make_lab):
    db = make_lab("01").scratch()
    db.items.insert_many([{"_id": i, "kind": "book" if i % 2 else "disc", "n": i} for i in range(6)])
    return db


def test_aggregate_with_merge_runs_when_called(db, backend):
    if backend.name == "mongomock":
        pytest.skip("mongomock does not implement $merge: exercises that need it report 'needs ...'")
    db.items.aggregate([{"$match": {"kind": "book"}}, {"$merge": {"into": "books"}}])  # cursor never read
    assert db.books.count_documents({}) == 3
    db.items.aggregate([{"$match": {"kind": "disc"}}, {"$out": "discs"}])
    assert db.discs.count_documents({}) == 3


def test_index_keys_in_every_form(db):
    db.items.create_index({"kind": 1, "n": -1})
    db.items.create_index([("n", 1)], name="by_n")
    db.items.create_indexes([IndexModel({"kind": 1}, name="kind_only")])
    specs = index_specs(db.items)
    assert specs["kind_1_n_-1"].keys == (("kind", 1), ("n", -1))
    assert specs["by_n"].keys == (("n", 1),) and specs["kind_only"].fields == ("kind",)
    assert specs["_id_"].unique
    assert index_on(db.items, ["kind", "n"]).name == "kind_1_n_-1"
    assert index_on(db.items, ["missing"]) is None


def test_single_operation_bulk_write(db):
    result = db.items.bulk_write([UpdateOne({"_id": 1}, {"$set": {"n": 10}})])
    assert result.modified_count == 1 and db.items.find_one({"_id": 1})["n"] == 10


def test_filters_compared_by_behaviour(db):
    documents = list(db.items.find())
    assert same_filter(db, {"kind": {"$eq": "book"}}, {"kind": "book"}, documents)
    assert not same_filter(db, {"kind": {"$ne": "disc"}, "n": {"$gt": 1}}, {"kind": "book"}, documents)
    assert matching_ids(db, {"n": {"$in": [2, 4]}}, documents) == [2, 4]


def test_a_database_knows_its_client(db):
    db.client.drop_database(db.name)  # pymongo's idiom, not a collection named "client"
    assert db.items.count_documents({}) == 0 and db.client.get_database(db.name).name == db.name


def test_every_quirk_is_declared():
    assert set(QUIRKS) == {"mongoeco", "mongomock"} and all(QUIRKS.values())


def test_cursors_are_iterators(db):
    assert next(db.items.find({}, {"_id": 1}).sort("_id", 1)) == {"_id": 0}
    assert next(db.items.aggregate([{"$count": "n"}])) == {"n": 6}
    cursor = db.items.find().sort("_id", 1)
    assert [next(cursor)["_id"], next(cursor)["_id"]] == [0, 1]


def test_partial_index_in_pymongos_spelling(db, backend):
    if backend.name == "mongomock":
        pytest.skip("mongomock drops partialFilterExpression (the PARTIAL_INDEXES capability)")
    db.items.create_index([("n", 1)], partialFilterExpression={"kind": "book"}, name="books_by_n")
    assert index_specs(db.items)["books_by_n"].partial_filter == {"kind": "book"}


def test_type_expression_and_validator_numbers_as_a_server(db, backend):
    from bson import Int64

    if backend.name == "mongomock":
        pytest.skip("mongomock has neither $type expressions nor validators")
    db.numbers.insert_many([{"_id": 1, "v": Int64(5)}, {"_id": 2, "v": 5}])
    types = {d["_id"]: d["t"] for d in db.numbers.aggregate([{"$project": {"t": {"$type": "$v"}}}])}
    assert types == {1: "long", 2: "int"}
    schema = {"properties": {"n": {"enum": [3]}, "m": {"minimum": 0, "exclusiveMinimum": True}}}
    db.create_collection("checked", validator={"$jsonSchema": schema})
    accepted = []
    for document in ({"n": Int64(3)}, {"n": 3.0}, {"n": 4}, {"m": 0}, {"m": 0.0}, {"m": 1}):
        try:
            db.checked.insert_one(dict(document))
            accepted.append(document)
        except Exception:  # DocumentValidationFailure / WriteError code 121
            pass
    assert accepted == [{"n": Int64(3)}, {"n": 3.0}, {"m": 1}]


def test_validator_with_tuples_as_a_server_reads_it(db, backend):
    if backend.name == "mongomock":
        pytest.skip("mongomock has no validators")
    db.create_collection("tupled", validator={"$jsonSchema": {
        "required": ("kind",), "properties": {"kind": {"enum": ("book", "disc"), "bsonType": ("string",)}}}})
    db.tupled.insert_one({"kind": "book"})
    with pytest.raises(Exception):
        db.tupled.insert_one({"kind": "toy"})


def test_cursor_slicing_and_indexing_as_pymongo(db):
    ordered = lambda: db.items.find({}, {"_id": 1}).sort("_id", 1)  # noqa: E731
    assert [d["_id"] for d in ordered()[2:4]] == [2, 3]
    assert [d["_id"] for d in ordered()[4:]] == [4, 5]
    assert list(ordered()[3:3]) == []
    assert ordered()[1] == {"_id": 1}
    with pytest.raises(IndexError):
        ordered()[60]


def _through_the_wire(name: str, steps) -> object:
    """Run ``steps(db)`` through pymongo against a mongoeco wire server with the course's quirk fixes."""
    import asyncio

    from course.store.backends import mongoeco_available

    if not mongoeco_available():
        pytest.skip("mongoeco needs Python >= 3.13")
    from mongoeco.engines.memory import MemoryEngine
    from mongoeco.wire import AsyncMongoEcoProxyServer
    from pymongo import MongoClient

    from course.store.quirks import absorb

    absorb("mongoeco")

    async def scenario():
        proxy = AsyncMongoEcoProxyServer(engine=MemoryEngine(), host="127.0.0.1", port=0)
        address = await proxy.start()
        try:
            def driver():
                client = MongoClient(f"mongodb://127.0.0.1:{address.port}/?directConnection=true",
                                     serverSelectionTimeoutMS=20000)
                try:
                    return steps(client[name])
                finally:
                    client.drop_database(name)
                    client.close()

            return await asyncio.to_thread(driver)
        finally:
            await proxy.close()

    return asyncio.run(scenario())


def test_out_through_the_wire_server():
    """$out works through mongoeco's wire server too (the course's quirk fix runs server-side)."""
    def steps(db):
        db.src.insert_many([{"_id": i, "k": i % 2} for i in range(4)])
        db.dst.insert_one({"_id": 99})
        db.src.aggregate([{"$match": {"k": 1}}, {"$out": "dst"}])
        return sorted(d["_id"] for d in db.dst.find())

    assert _through_the_wire("course_quirk_wire", steps) == [1, 3]


def test_array_literals_in_expressions_are_evaluated_as_a_server_does(db):
    db.tree.insert_many([{"_id": "b", "ancestors": ["a"]}, {"_id": "c", "ancestors": ["a", "b"]}])
    rows = list(db.tree.aggregate([{"$project": {"path": {"$concatArrays": ["$ancestors", ["$_id"]]}}},
                                   {"$sort": {"_id": 1}}]))
    assert rows == [{"_id": "b", "path": ["a", "b"]}, {"_id": "c", "path": ["a", "b", "c"]}]


def test_longs_as_a_server_makes_them(db, backend):
    """$toLong/$convert give a long, an update that changes only a number's type writes it, $inc keeps a long."""
    from bson import Int64

    from course.toolkit.census import bson_type_of

    def types(collection):
        return [bson_type_of(d["v"]) for d in collection.find().sort("_id", 1)]

    db.nums.insert_many([{"_id": 1, "v": 5}, {"_id": 2, "v": 5.0}, {"_id": 3, "v": Int64(4)}])
    db.nums.update_many({}, {"$inc": {"v": Int64(0)}})
    assert types(db.nums) == ["long", "double", "long"]
    if backend.name == "mongomock":
        pytest.skip("mongomock has no update pipelines, $convert or $merge (the PIPELINE_UPDATES capability)")
    converted = db.nums.aggregate([{"$project": {"a": {"$toLong": "$v"}, "t": {"$type": {"$toLong": "$v"}},
                                                 "b": {"$convert": {"input": "$v", "to": "long"}}}}])
    assert [(bson_type_of(d["a"]), bson_type_of(d["b"]), d["t"]) for d in converted] == [("long", "long", "long")] * 3
    for update in ([{"$set": {"v": {"$toLong": "$v"}}}],
                   [{"$set": {"v": {"$convert": {"input": "$v", "to": "long"}}}}]):
        db.nums.delete_many({})
        db.nums.insert_many([{"_id": 1, "v": 5}, {"_id": 2, "v": 5.0}, {"_id": 3, "v": Int64(4)}])
        assert db.nums.update_many({}, update).modified_count == 2
        assert types(db.nums) == ["long", "long", "long"]
        assert db.nums.update_many({}, update).modified_count == 0
    db.nums.delete_many({})
    db.nums.insert_many([{"_id": 1, "v": 5}, {"_id": 2, "v": 5.0}])
    db.nums.aggregate([{"$set": {"v": {"$toLong": "$v"}}}, {"$merge": {"into": "nums", "whenMatched": "replace"}}])
    assert types(db.nums) == ["long", "long"]


def test_drop_index_by_keys_as_pymongo_does(db):
    """pymongo turns keys into the default name (kind_1): an index named otherwise is not found, on a server too."""
    from pymongo.errors import OperationFailure

    db.items.create_index([("kind", 1)], name="by_kind")
    with pytest.raises(OperationFailure):
        db.items.drop_index([("kind", 1)])
    db.items.create_index([("n", 1)])
    db.items.drop_index([("n", 1)])
    assert sorted(db.items.index_information()) == ["_id_", "by_kind"]


def test_longs_through_the_wire_server():
    """The long conversions and $inc work through mongoeco's wire server too (the fixes run server-side)."""
    from bson import Int64

    def steps(db):
        found = []
        for update in ([{"$set": {"v": {"$toLong": "$v"}}}], {"$inc": {"v": Int64(0)}}):
            db.nums.drop()
            db.nums.insert_many([{"_id": 1, "v": 5}, {"_id": 2, "v": Int64(4)}])
            db.nums.update_many({}, update)
            found.append([type(d["v"]).__name__ for d in db.nums.find().sort("_id", 1)])
        db.nums.drop()
        db.nums.insert_many([{"_id": 1, "v": 5}, {"_id": 2, "v": 6.0}])
        db.nums.aggregate([{"$set": {"v": {"$convert": {"input": "$v", "to": "long"}}}},
                           {"$merge": {"into": "nums", "whenMatched": "replace"}}])
        found.append([type(d["v"]).__name__ for d in db.nums.find().sort("_id", 1)])
        return found

    assert _through_the_wire("course_quirk_wire_longs", steps) == [["Int64", "Int64"]] * 3


def _insert_outcomes(db) -> list:
    """What the wire server answers to inserts that succeed, fail ordered, fail unordered, and go unacknowledged."""
    from pymongo import WriteConcern
    from pymongo.errors import BulkWriteError

    def attempt(collection, documents, ordered=True):
        try:
            result = collection.insert_many(documents, ordered=ordered)
            outcome = ("inserted", len(result.inserted_ids) if result.acknowledged else None)
        except BulkWriteError as error:
            outcome = ("refused", error.details["nInserted"],
                       [(e["index"], e["code"], e["errmsg"]) for e in error.details["writeErrors"]])
        return outcome, sorted(d["_id"] for d in collection.find({}, {"_id": 1}))

    db.create_collection("checked", validator={"$jsonSchema": {"required": ["price"],
                                                               "properties": {"price": {"minimum": 0}}}})
    db.unique.create_index("sku", unique=True)
    db.unique.insert_one({"_id": 0, "sku": "A"})
    db.kept.insert_one({"_id": 2})
    return [
        attempt(db.fresh, [{"_id": i, "n": i} for i in range(300)]),
        attempt(db.kept, [{"_id": i} for i in range(5)]),  # the third exists already
        attempt(db.twice, [{"_id": 1}, {"_id": 2}, {"_id": 2}, {"_id": 3}]),
        attempt(db.twice_unordered, [{"_id": 1}, {"_id": 1}, {"_id": 2}, {"_id": 2}, {"_id": 3}], ordered=False),
        attempt(db.checked, [{"_id": 1, "price": 3}, {"_id": 2}, {"_id": 3, "price": -1}, {"_id": 4, "price": 1}]),
        attempt(db.checked, [{"_id": 5, "price": -2}, {"_id": 6, "price": 2}, {"_id": 7}], ordered=False),
        attempt(db.unique, [{"_id": 1, "sku": "B"}, {"_id": 2, "sku": "A"}, {"_id": 3, "sku": "C"}]),
        attempt(db.get_collection("quiet", write_concern=WriteConcern(w=0)), [{"_id": i} for i in range(4)]),
    ]


def test_wire_inserts_in_one_batch_answer_as_the_server_does(monkeypatch):
    """The batched insert command gives every count, error index, code and message of mongoeco's own."""
    batched = _through_the_wire("course_quirk_inserts", _insert_outcomes)
    from mongoeco.api._async._database_admin_write_commands import DatabaseAdminWriteCommandService

    patched = DatabaseAdminWriteCommandService.command_insert
    assert patched.__wrapped__ is not patched
    monkeypatch.setattr(DatabaseAdminWriteCommandService, "command_insert", patched.__wrapped__)
    own = _through_the_wire("course_quirk_inserts", _insert_outcomes)
    assert batched == own
    assert batched[1][0] == ("refused", 2, [(2, 11000, batched[1][0][2][0][2])])
    assert batched[3][0][:2] == ("refused", 3) and [e[0] for e in batched[3][0][2]] == [1, 3]


def test_wire_inserts_are_batched(monkeypatch):
    """A batch goes through the engine's insert_many: not one document at a time, each against every stored one."""
    from course.store.backends import mongoeco_available

    if not mongoeco_available():
        pytest.skip("mongoeco needs Python >= 3.13")
    from mongoeco.api._async.collection import AsyncCollection

    singles = []
    one = AsyncCollection.insert_one

    async def counted(self, *args, **kwargs):
        singles.append(1)
        return await one(self, *args, **kwargs)

    monkeypatch.setattr(AsyncCollection, "insert_one", counted)

    def steps(db):
        db.products.insert_many([{"_id": i, "name": f"p{i}"} for i in range(300)])
        db.products.insert_one({"_id": 300})
        return db.products.count_documents({})

    assert _through_the_wire("course_quirk_batch", steps) == 301
    assert len(singles) == 1  # only the insert_one


def test_insert_one_refuses_every_duplicate_id(db, backend):
    """Whatever the _id's type, a second document with an equal _id is refused (a lookup or the pass finds it)."""
    import datetime

    if backend.name != "mongoeco":
        pytest.skip("what the course's lookup for mongoeco's insert_one must keep (mongomock: no Decimal128 _id)")

    from bson import Binary, Decimal128, Int64, ObjectId
    from pymongo.errors import DuplicateKeyError

    oid = ObjectId()
    pairs = [(oid, ObjectId(str(oid))), ("sku-1", "sku-1"), (1, 1.0), (2, Int64(2)), (3, Decimal128("3")),
             (datetime.datetime(2024, 1, 1), datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)),
             (b"ab", Binary(b"ab")), ({"a": "x"}, {"a": "x"}), ({"n": 1}, {"n": 1.0})]
    for k, (first, second) in enumerate(pairs):
        collection = db[f"ids_{k}"]
        collection.insert_one({"_id": first})
        with pytest.raises(DuplicateKeyError):
            collection.insert_one({"_id": second})
        collection.insert_one({"_id": ObjectId()})  # a new one still goes in
        assert collection.count_documents({}) == 2


def test_insert_one_of_an_object_id_looks_the_key_up(backend, make_lab, monkeypatch):
    """mongoeco: an ObjectId or string _id is not compared with every stored _id; a number still is."""
    if backend.name != "mongoeco":
        pytest.skip("a quirk of mongoeco's engine")
    from mongoeco.engines import memory

    compared = []
    equality_key = memory.bson_equality_key
    monkeypatch.setattr(memory, "bson_equality_key", lambda value: compared.append(1) or equality_key(value))
    db = make_lab("01").scratch()
    for k in range(200):
        db.by_object_id.insert_one({"k": k})
        db.by_string.insert_one({"_id": f"s{k}"})
    plain = len(compared)
    for k in range(200):
        db.by_number.insert_one({"_id": k})
    assert db.by_object_id.count_documents({}) == db.by_number.count_documents({}) == 200
    assert plain < 50, "ObjectId and string _ids are looked up, not compared with each stored one"
    assert len(compared) - plain > 200 * 100 / 2, "numeric _ids are still compared by value (1 equals 1.0)"


def _encoding_cases() -> list:
    """Values a document may hold, with every way the encoder refuses one, nested at several depths."""
    import datetime
    import decimal
    import uuid

    from bson import Binary, Code, Decimal128, Int64, ObjectId, Regex, Timestamp
    from bson.son import SON

    scalars = ["text", "", 0, -1, 2 ** 31, 2 ** 63 - 1, -(2 ** 63), 1.5, float("nan"), float("inf"), True, False,
               None, Int64(7), Decimal128("1.10"), decimal.Decimal("2.5"), datetime.datetime(2026, 1, 2, 3, 4, 5),
               datetime.datetime(2026, 1, 2, tzinfo=datetime.timezone.utc), ObjectId("0123456789ab0123456789ab"),
               "0123456789ab0123456789ab", b"raw", bytearray(b"ba"), Binary(b"\x01", 4), Regex("^a", "i"),
               Timestamp(5, 1), Code("x"), uuid.UUID(int=3)]
    refused = [2 ** 63, -(2 ** 63) - 1, {1: "a"}, {"s": {1, 2}}, frozenset({1}), decimal.Decimal("1e7000"),
               object()]
    tagged_like = {"$$course_codec": {"type": "x", "value": 1}}
    cases = []
    for value in scalars + refused:
        cases += [value, {"v": value}, {"a": [{"b": value}, 1]}, [value, {"c": value}], (value,),
                  SON([("z", 1), ("v", value)]), {"deep": {"er": {"still": [[value]]}}}]
    cases += [tagged_like, {"t": tagged_like}, {"first": {1: 2}, "then": 2 ** 70}, {"first": 2 ** 70, "then": {2: 1}},
              [{1: "a"}, {"b": 2 ** 70}], {"many": [{"stars": k, "text": "ok" * k} for k in range(50)]}]
    return cases


def _encoded(encode, value) -> tuple:
    try:
        return "encoded", repr(encode(value))
    except Exception as error:  # noqa: BLE001 - the refusal itself is what is compared
        return "refused", type(error).__name__, str(error)


def test_documents_encode_as_mongoeco_encodes_them():
    """The encoder that validates once gives mongoeco's own encoding and its own first error, value by value."""
    from course.store.backends import mongoeco_available

    if not mongoeco_available():
        pytest.skip("mongoeco needs Python >= 3.13")
    import unittest.mock

    from mongoeco.core import codec

    from course.store.quirks import absorb

    absorb("mongoeco")
    cases = _encoding_cases()
    patched = [_encoded(codec.DocumentCodec.encode, value) for value in cases]
    plain_encode = codec.DocumentCodec.encode.__wrapped_original__  # kept by course.store.mongoeco.codec_speed
    with unittest.mock.patch.object(codec, "validate_bson_value", codec.validate_bson_value.__wrapped_original__), \
            unittest.mock.patch.object(codec.DocumentCodec, "encode", staticmethod(plain_encode)):
        own = [_encoded(codec.DocumentCodec.encode, value) for value in cases]
    assert patched == own
    assert sum(outcome[0] == "refused" for outcome in own) > 40


def test_encoding_validates_each_document_once(backend, make_lab, monkeypatch):
    """mongoeco: a product with 2,000 reviews is validated once per encoding, not once per level and value."""
    if backend.name != "mongoeco":
        pytest.skip("a quirk of mongoeco's encoder")
    from mongoeco.core import bson_scalars, codec

    checked = []
    monkeypatch.setattr(bson_scalars, "wrap_bson_numeric",
                        lambda value, wrap=bson_scalars.wrap_bson_numeric: checked.append(1) or wrap(value))
    db = make_lab("01").scratch()
    db.products.insert_one({"_id": 1, "reviews": [{"stars": k % 5, "text": "fine", "n": 2.5} for k in range(2000)]})
    assert db.products.find_one({"_id": 1})["reviews"][1999] == {"stars": 4, "text": "fine", "n": 2.5}
    assert len(checked) < 100, f"{len(checked)} values went through the validator's numeric test"


def _unique_builds(db) -> list:
    """What building unique indexes answers, over collections with and without duplicates of every kind."""
    from pymongo.errors import DuplicateKeyError, OperationFailure

    cases = [
        ("clean", [{"_id": k, "email": f"c{k}@x"} for k in range(120)], ["email"], {}),
        ("late duplicate", [{"_id": k, "email": f"c{k % 97}@x"} for k in range(120)], ["email"], {}),
        ("numbers by value", [{"_id": 1, "n": 1}, {"_id": 2, "n": 2}, {"_id": 3, "n": 1.0}], ["n"], {}),
        ("array elements", [{"_id": 1, "tags": ["a", "b"]}, {"_id": 2, "tags": ["c"]}, {"_id": 3, "tags": ["d", "b"]}],
         ["tags"], {}),
        ("one document's own array", [{"_id": 1, "tags": ["a", "a"]}, {"_id": 2, "tags": ["b"]}], ["tags"], {}),
        ("missing fields", [{"_id": 1}, {"_id": 2, "x": None}, {"_id": 3}], ["x"], {}),
        ("sparse", [{"_id": 1}, {"_id": 2}, {"_id": 3, "x": 1}], ["x"], {"sparse": True}),
        ("compound", [{"_id": k, "a": k % 3, "b": k % 5} for k in range(20)], ["a", "b"], {}),
        ("compound clean", [{"_id": k, "a": k % 3, "b": k} for k in range(20)], ["a", "b"], {}),
        ("partial", [{"_id": k, "e": "same", "on": k == 3} for k in range(6)], ["e"],
         {"partialFilterExpression": {"on": True}}),
        ("documents", [{"_id": 1, "d": {"x": 1}}, {"_id": 2, "d": {"x": 2}}, {"_id": 3, "d": {"x": 1.0}}], ["d"], {}),
        ("collation", [{"_id": 1, "s": "A"}, {"_id": 2, "s": "a"}], ["s"], {"collation": {"locale": "en", "strength": 2}}),
    ]
    outcomes = []
    for name, documents, fields, options in cases:
        collection = db[f"unique_{len(outcomes)}"]
        collection.insert_many(documents)
        try:
            made = collection.create_index([(f, 1) for f in fields], unique=True, **options)
            outcome = ("built", made, collection.index_information()[made].get("unique"))
        except (DuplicateKeyError, OperationFailure) as error:
            outcome = ("refused", type(error).__name__, error.code, str(error))
        outcomes.append((name, outcome))
    return outcomes


def test_unique_index_builds_answer_as_mongoeco_does(backend, make_lab, monkeypatch):
    """Building a unique index refuses the same document with the same duplicate key, or builds the same index."""
    if backend.name != "mongoeco":
        pytest.skip("a quirk of mongoeco's engine")
    from mongoeco.engines import memory

    remembered = _unique_builds(make_lab("01").scratch())
    for name in ("create_index", "_unique_index_keys"):
        monkeypatch.setattr(memory.MemoryEngine, name, getattr(memory.MemoryEngine, name).__wrapped__)
    own = _unique_builds(make_lab("01").scratch())
    assert remembered == own
    verdicts = dict(own)
    assert verdicts["clean"][0] == verdicts["compound clean"][0] == verdicts["sparse"][0] == "built"
    assert verdicts["late duplicate"][0] == verdicts["numbers by value"][0] == verdicts["compound"][0] == "refused"


def test_a_unique_index_build_works_each_documents_keys_out_once(backend, make_lab, monkeypatch):
    """mongoeco: building a unique index on 300 documents computes about 300 keys, not 90,000."""
    if backend.name != "mongoeco":
        pytest.skip("a quirk of mongoeco's engine")
    from mongoeco.engines import memory

    computed = []
    keys = memory.MemoryEngine._index_keys
    monkeypatch.setattr(memory.MemoryEngine, "_index_keys",
                        lambda self, *args: computed.append(1) or keys(self, *args))
    db = make_lab("01").scratch()
    db.customers.insert_many([{"_id": k, "email": f"c{k}@x"} for k in range(300)])
    db.customers.create_index("email", unique=True)
    db.customers.insert_one({"_id": 300, "email": "new@x"})
    assert db.customers.count_documents({}) == 301
    assert len(computed) < 1000, f"{len(computed)} key computations for one index over 300 documents"


def _by_id_scenarios(db) -> list:
    """Reads and writes by _id, of stored and missing ids of each type, and what each returned."""
    import datetime

    from bson import Decimal128, Int64, ObjectId
    from mongoeco.types import ObjectId as EngineObjectId
    from pymongo import ReturnDocument

    oid, other = ObjectId("0123456789ab0123456789ab"), ObjectId("ba9876543210ba9876543210")
    stored = [{"_id": oid, "n": 1}, {"_id": "sku-1", "n": 2}, {"_id": "SKU-2", "n": 3}, {"_id": 1.0, "n": 4},
              {"_id": Int64(2), "n": 5}, {"_id": Decimal128("3.0"), "n": 6},
              {"_id": datetime.datetime(2024, 1, 1), "n": 7}, {"_id": {"a": 1}, "n": 8}]
    db.things.insert_many(stored)
    seen = []
    lookups = [oid, ObjectId(str(oid)), EngineObjectId(str(oid)), other, "sku-1", "sku-2", "SKU-2", "missing", 1, 1.0,
               2, 3, Int64(3), 4, datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc), {"a": 1.0}, {"a": 2}]
    for value in lookups:
        seen.append(("find_one", repr(value), db.things.find_one({"_id": value})))
        seen.append(("count and", repr(value), db.things.count_documents({"_id": value, "n": {"$gte": 0}})))
        seen.append(("count $eq", repr(value), db.things.count_documents({"$and": [{"_id": {"$eq": value}}]})))
        seen.append(("collation", repr(value), list(db.things.find({"_id": value},
                                                                   collation={"locale": "en", "strength": 2}))))
    for k, value in enumerate([other, "sku-1", "new-sku", 1, 9, oid]):
        result = db.things.update_one({"_id": value}, {"$inc": {"n": 10}, "$set": {"k": k}}, upsert=True)
        seen.append(("upsert", repr(value), result.matched_count, result.modified_count, repr(result.upserted_id)))
        seen.append(("replace", repr(value), db.things.replace_one({"_id": value}, {"k": -k}).matched_count))
        seen.append(("f&m", repr(value), db.things.find_one_and_update(
            {"_id": value}, {"$set": {"m": k}}, return_document=ReturnDocument.AFTER)))
    seen.append(("delete", db.things.delete_one({"_id": "missing"}).deleted_count,
                 db.things.delete_one({"_id": "sku-1"}).deleted_count, db.things.delete_many({"_id": other}).deleted_count))
    seen.append(("left", sorted(repr(d) for d in db.things.find({}))))
    return seen


def test_queries_by_a_missing_id_answer_as_the_engine_does(backend, make_lab, monkeypatch):
    """mongoeco: by key or by the engine's pass over the collection, every by-_id call gives the same answer."""
    if backend.name != "mongoeco":
        pytest.skip("a quirk of mongoeco's engine")
    from mongoeco.engines import memory

    with_lookup = _by_id_scenarios(make_lab("01").scratch())
    patched = memory.MemoryEngine._candidate_items_for_plan_locked
    monkeypatch.setattr(memory.MemoryEngine, "_candidate_items_for_plan_locked", patched.__wrapped__)
    assert with_lookup == _by_id_scenarios(make_lab("01").scratch())


def _matches_counted(backend, monkeypatch) -> list:
    """A list that grows by one for each document mongoeco matches against a filter (skips on other backends)."""
    if backend.name != "mongoeco":
        pytest.skip("a quirk of mongoeco's engine")
    from mongoeco.core.filtering import QueryEngine

    matched = []
    match_plan = QueryEngine.match_plan
    monkeypatch.setattr(QueryEngine, "match_plan", staticmethod(
        lambda *args, **kwargs: matched.append(1) or match_plan(*args, **kwargs)))
    return matched


def test_upserts_of_new_string_ids_do_not_read_the_collection(backend, make_lab, monkeypatch):
    """mongoeco: an upsert of a new string or ObjectId _id reads no stored document; a number's still does."""
    from bson import ObjectId

    matched = _matches_counted(backend, monkeypatch)
    db = make_lab("01").scratch()
    for k in range(200):
        db.by_string.update_one({"_id": f"s{k}"}, {"$set": {"k": k}}, upsert=True)
        db.by_object_id.update_one({"_id": ObjectId()}, {"$set": {"k": k}}, upsert=True)
    keyed = len(matched)
    for k in range(200):
        db.by_number.update_one({"_id": k}, {"$set": {"k": k}}, upsert=True)
    assert db.by_string.count_documents({}) == db.by_object_id.count_documents({}) == 200
    assert keyed < 50, f"string and ObjectId _ids are looked up by key ({keyed} documents matched)"
    assert len(matched) - keyed > 200 * 100 / 2, "numeric _ids are still matched by value (1 equals 1.0)"


def _document_id_scenarios(db) -> list:
    """Reads, upserts and inserts by document _ids equal by value, by field order, by type, and what each gave."""
    from bson import Decimal128, Int64
    from pymongo.errors import DuplicateKeyError

    db.orders.insert_many([{"_id": {"a": 1}, "n": 1}, {"_id": {"a": 1.0, "b": "x"}, "n": 2},
                           {"_id": {"b": "x", "a": 1}, "n": 3}, {"_id": {"a": Int64(2)}, "n": 4},
                           {"_id": {"a": [1, 2]}, "n": 5}, {"_id": {"a": {"c": "z"}}, "n": 6},
                           {"_id": {"a": Decimal128("3")}, "n": 7}, {"_id": {"a": None}, "n": 8},
                           {"_id": {"a": True}, "n": 9}])
    seen = []
    lookups = [{"a": 1.0}, {"a": 1, "b": "x"}, {"b": "x", "a": 1.0}, {"a": 2}, {"a": 2.0}, {"a": [1, 2]}, {"a": [1]},
               {"a": [1.0, 2]}, {"a": {"c": "z"}}, {"a": {"c": "Z"}}, {"a": 3}, {"a": None}, {"a": True}, {"a": 1},
               {"a": "1"}, {"a": 5}, {}]
    for value in lookups:
        seen.append(("find_one", repr(value), db.orders.find_one({"_id": value})))
        seen.append(("count and", repr(value), db.orders.count_documents({"_id": value, "n": {"$gte": 0}})))
    for k, value in enumerate(lookups):
        result = db.orders.replace_one({"_id": value}, {"k": k}, upsert=True)
        seen.append(("upsert", repr(value), result.matched_count, repr(result.upserted_id)))
    for value in ({"a": 1}, {"a": 2.0}, {"a": Decimal128("3.0")}, {"a": 6}, {"a": 6.0}, {"b": "x", "a": 1.0}):
        try:
            db.orders.insert_one({"_id": value})
            seen.append(("insert", repr(value), "inserted"))
        except DuplicateKeyError:
            seen.append(("insert", repr(value), "duplicate"))
    seen.append(("left", sorted(repr(d) for d in db.orders.find({}))))
    return seen


def test_document_ids_answer_as_the_engine_does(backend, make_lab, monkeypatch):
    """mongoeco: a document _id found, upserted and refused as a duplicate as by the engine's own passes (a server:
    embedded documents equal field by field, in order, numbers by value)."""
    if backend.name != "mongoeco":
        pytest.skip("a quirk of mongoeco's engine")
    from mongoeco.engines import memory

    db = make_lab("01").scratch()
    with_lookup = _document_id_scenarios(db)
    assert ("upsert", "{'a': 1.0}", 1, "None") in with_lookup  # {a: 1.0} equals the stored {a: 1}
    assert ("upsert", "{'a': [1.0, 2]}", 1, "None") in with_lookup
    assert ("upsert", "{'b': 'x', 'a': 1.0}", 1, "None") in with_lookup  # {b: 'x', a: 1}: the same field order
    assert ("upsert", "{'a': 5}", 0, "{'a': 5}") in with_lookup
    assert db.orders.count_documents({"_id": {"a": 6}}) == 1  # {a: 6.0} was refused as a duplicate of {a: 6}
    for name in ("_candidate_items_for_plan_locked", "_ensure_unique_indexes"):
        monkeypatch.setattr(memory.MemoryEngine, name, getattr(memory.MemoryEngine, name).__wrapped__)
    assert with_lookup == _document_id_scenarios(make_lab("01").scratch())


def test_upserts_of_new_document_ids_do_not_read_the_collection(backend, make_lab, monkeypatch):
    """mongoeco: an upsert of a new document _id (lesson 06's order keys) matches no stored document."""
    matched = _matches_counted(backend, monkeypatch)
    db = make_lab("01").scratch()
    for k in range(200):
        db.history.replace_one({"_id": {"customer_id": k % 7, "order_no": k}}, {"k": k}, upsert=True)
    db.history.replace_one({"_id": {"customer_id": 3, "order_no": 3.0}}, {"k": -1}, upsert=True)  # equals order 3
    assert db.history.count_documents({}) == 200 and db.history.find_one({"_id": {"customer_id": 3, "order_no": 3}})
    assert len(matched) < 50, f"document _ids are compared by key ({len(matched)} documents matched)"


@pytest.mark.parametrize("keyword, value", [("format", "email"), ("default", 1), ("$schema", "x"), ("id", "a"),
                                            ("definitions", {}), ("$ref", "#/definitions/a")])
def test_json_schema_keywords_a_server_refuses_are_refused(db, backend, keyword, value):
    from pymongo.errors import OperationFailure

    from course.store.capabilities import Capability

    if not backend.supports(Capability.VALIDATORS):
        pytest.skip(f"{backend.name} has no validators: exercises that need them report 'needs ...'")
    with pytest.raises(OperationFailure, match=re.escape(f"keyword '{keyword}' is not currently supported")):
        db.create_collection("strict", validator={"$jsonSchema": {"properties": {"a": {keyword: value}}}})
    db.create_collection("fine", validator={"$jsonSchema": {"properties": {"a": {"bsonType": "string"}}}})


@pytest.mark.parametrize("name", [None, 5])
def test_a_collection_name_that_is_not_a_str_is_refused_as_pymongo_does(db, name):
    with pytest.raises(TypeError, match="name must be an instance of str"):
        db[name].insert_one({"_id": 1})  # a learner's db[KIND_COLLECTIONS.get(kind)]: pymongo refuses it
    with pytest.raises(TypeError, match="name must be an instance of str"):
        db.get_collection(name)
    assert None not in db.list_collection_names() and db.items.count_documents({}) == 6
    db.client.drop_database(db.name)  # the engine is left usable: nothing was written under that name
    assert db.items.count_documents({}) == 0
