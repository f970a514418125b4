"""The $type census: exact on every backend, the long counter included, and honest about its method."""

import datetime
import re

import pytest
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.objectid import ObjectId

from course.store.capabilities import Capability
from course.toolkit.census import (DECODED, INT32_MAX, QUERIES, Census, bson_type_of, document_types, encoded_type,
                           ids_of_type, shape_census, type_census)


@pytest.fixture
def collection(backend):
    db = backend.client["course_census_scratch"]
    backend.client.drop_database(db.name)
    db.t.insert_many([
        {"_id": 1, "views": 5, "v": 2, "tags": ["a", 1]},
        {"_id": 2, "views": Int64(40), "v": 2},  # small long: mongoeco's $group calls it "int"
        {"_id": 3, "views": INT32_MAX, "v": 2, "doc": {"n": 1}},
        {"_id": 4, "views": 1.5, "doc": {"n": "x"}},
        {"_id": 5, "views": "1,204"},
        {"_id": 6, "views": None},
        {"_id": 7},
        {"_id": 8, "views": True},
    ])
    db.t.update_one({"_id": 3}, {"$inc": {"views": 1}})  # past the int32 maximum: a long now
    yield db.t
    backend.client.drop_database(db.name)


def test_census_counts_every_type_and_finds_the_long_counter(collection, backend):
    census = type_census(collection, "views", backend)
    assert census.counts == {"int": 1, "long": 2, "double": 1, "string": 1, "bool": 1, "null": 1, "missing": 1}
    assert census.total == 8 and census.count("long") == 2 and census.count("decimal") == 0
    assert ids_of_type(collection, "views", "long", backend) == [2, 3]


def test_census_says_how_it_counted(collection, backend):
    census = type_census(collection, "views", backend)
    if backend.supports(Capability.TYPE_QUERIES):
        assert census.method == QUERIES and census.note == ""
    else:  # mongomock: $type cannot tell int from long, so the documents are decoded instead
        assert census.method == DECODED and "cannot tell int from long" in census.note
        assert collection.count_documents({"views": {"$type": "long"}}) < 2  # why: the query census would be wrong
    assert "long" in str(census) and "views: 8 documents" in str(census)


def test_arrays_count_once_and_paths_go_through_objects(collection, backend):
    assert type_census(collection, "tags", backend).counts == {"array": 1, "missing": 7}
    assert type_census(collection, "doc.n", backend).counts == {"int": 1, "string": 1, "missing": 6}
    assert type_census(collection, "views", backend, filter={"v": 2}).counts == {"int": 1, "long": 2}


def test_shape_census_combines_fields(collection, backend):
    shapes = shape_census(collection, ["v", "views"], backend)
    assert sum(s.documents for s in shapes) == 8
    as_pairs = {tuple(s.types.values()): s.documents for s in shapes}
    assert as_pairs[("int", "long")] == 2 and as_pairs[("int", "int")] == 1 and as_pairs[("missing", "missing")] == 1
    assert document_types(collection, ["views"], backend)[3] == {"views": "long"}


@pytest.mark.parametrize("value", [1, -5, INT32_MAX, INT32_MAX + 1, -(2 ** 31) - 1, Int64(3), 2.5, "s", True, None,
                                   {"a": 1}, [1], ObjectId(), datetime.datetime(2026, 1, 1), Decimal128("1.5"),
                                   b"x", re.compile("a")])
def test_python_types_match_what_the_driver_stores(value):
    assert bson_type_of(value) == encoded_type(value)


def test_census_is_a_plain_record():
    census = Census("f", {"int": 2}, 2, QUERIES)
    assert census.types == ("int",) and census.count("long") == 0
