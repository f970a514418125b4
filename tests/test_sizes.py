"""The 16 MiB helpers refuse oversized documents on every backend, and size arithmetic is exact."""

import bson
import pytest
from pymongo.errors import DocumentTooLarge, WriteError

from course.datasets.orders import order_event
from course.toolkit.sizes import (MAX_BSON_SIZE, array_document_size, bson_size, check_size, insert_one_checked,
                          max_array_length, update_one_checked)

MIB = 1024 * 1024


@pytest.fixture
def collection(make_lab):
    return make_lab("02").scratch().sized


def test_bson_size_is_the_encoding_length():
    doc = {"_id": 1, "name": "Kettle", "tags": ["a", "b"]}
    assert bson_size(doc) == len(bson.encode(doc))
    assert check_size(doc) == len(bson.encode(doc))


@pytest.mark.parametrize("count", [0, 1, 9, 10, 11, 99, 100, 101, 1234])
def test_array_size_is_exact(count):
    base = {"_id": 7, "status": "SHIPPED"}
    events = [order_event(0)] * count
    assert array_document_size(base, "events", order_event(0), count) == len(bson.encode({**base, "events": events}))


def test_max_array_length_is_the_last_that_fits():
    base, element = {"_id": 1}, {"x": "y" * 100}
    n = max_array_length(base, "items", element)
    assert array_document_size(base, "items", element, n) <= MAX_BSON_SIZE
    assert array_document_size(base, "items", element, n + 1) > MAX_BSON_SIZE
    assert max_array_length(base, "items", element, limit=bson_size({**base, "items": [element] * 3})) == 3


def test_insert_refused_past_the_limit(collection):
    overhead = bson_size({"_id": 1, "blob": b""})
    at_limit = {"_id": 1, "blob": b"x" * (MAX_BSON_SIZE - overhead)}
    assert bson_size(at_limit) == MAX_BSON_SIZE
    insert_one_checked(collection, at_limit)
    over = {"_id": 2, "blob": b"x" * (MAX_BSON_SIZE - overhead + 1)}
    with pytest.raises(DocumentTooLarge, match="16 MiB"):
        insert_one_checked(collection, over)
    assert collection.count_documents({"_id": 2}) == 0


def test_update_refused_and_undone(collection):
    insert_one_checked(collection, {"_id": 1, "blob": b"a" * (10 * MIB), "n": 1})
    result = update_one_checked(collection, {"_id": 1}, {"$inc": {"n": 1}})
    assert result.modified_count == 1
    with pytest.raises(WriteError, match="larger than 16777216") as refused:  # what a server answers
        update_one_checked(collection, {"_id": 1}, {"$set": {"more": b"b" * (7 * MIB)}, "$inc": {"n": 1}})
    assert refused.value.code == 17419
    after = collection.find_one({"_id": 1})
    assert after["n"] == 2 and "more" not in after and len(after["blob"]) == 10 * MIB


def test_update_with_a_guard_and_no_match(collection):
    collection.insert_one({"_id": 1, "items": [1, 2]})
    result = update_one_checked(collection, {"_id": 1, "items.2": {"$exists": False}}, {"$push": {"items": 3}})
    assert result.modified_count == 1
    result = update_one_checked(collection, {"_id": 1, "items.2": {"$exists": False}}, {"$push": {"items": 4}})
    assert result.matched_count == 0
    assert collection.find_one({"_id": 1})["items"] == [1, 2, 3]


def test_upsert_refused_leaves_nothing(collection):
    with pytest.raises(WriteError):
        update_one_checked(collection, {"_id": 9}, {"$set": {"blob": b"x" * (17 * MIB)}}, upsert=True)
    assert collection.count_documents({"_id": 9}) == 0
    update_one_checked(collection, {"_id": 9}, {"$set": {"small": 1}}, upsert=True)
    assert collection.find_one({"_id": 9}) == {"_id": 9, "small": 1}
