"""The sharding model against MongoDB's documented routing rules and the server's own hash test vectors."""

import datetime

import pytest
from bson import Int64, ObjectId

from course.toolkit.sharding_sim import MAX_KEY, MIN_KEY, ShardKey, hash64, shard

# src/mongo/db/hasher_test.cpp (BSONElementHasher, seed 0): "test vectors for hashed indexes"
SERVER_VECTORS = [
    (42, -944302157085130861), (42.123, -944302157085130861), (Int64(42), -944302157085130861),
    (0, 4854801880128277513), (0.456, 4854801880128277513), (float("nan"), 4854801880128277513),
    (1, 5902408780260971510), (1.987, 5902408780260971510), (-1, 1140205862565771219),
    (-1.789, 1140205862565771219), (-2**31, 6165898260261354870), (float(-2**31), 6165898260261354870),
    (2**31 - 1, 1143184177162245883), (1.7976931348623157e308, 921523596458303250),
    (Int64(2**63 - 1), 921523596458303250), (-1.7976931348623157e308, 4532067210535695462),
    (Int64(-2**63), 4532067210535695462), ("abc", 8478485326885698097), ("", 2049396243249673340),
    (ObjectId("010203040506070809101112"), -5588663249627035708),
    (ObjectId("000000000000000000000000"), -4293118519463489418),
    (True, 6405873908747105701), (False, 6289544573401934092),
    (datetime.datetime(1970, 1, 1), -1178696894582842035),
]


@pytest.mark.parametrize("value, expected", SERVER_VECTORS, ids=lambda v: repr(v)[:30])
def test_hash_matches_the_servers_vectors(value, expected):
    assert hash64(value) == expected


def test_hash_refuses_types_it_does_not_model():
    with pytest.raises(TypeError, match="not list"):
        hash64([1, 2])


def _docs(n, **fields):
    return [{"_id": i, "a": i % 7, "b": i, **{k: f(i) for k, f in fields.items()}} for i in range(n)]


def test_chunks_cover_min_to_max_and_split_only_between_values():
    cluster = shard(_docs(700), {"a": 1}, shards=3, chunk_docs=100)
    assert cluster.chunks[0].lower == (MIN_KEY,) and cluster.chunks[-1].upper == (MAX_KEY,)
    for left, right in zip(cluster.chunks, cluster.chunks[1:]):
        assert left.upper == right.lower
    # 7 values of 100 documents: one chunk each, none over the size, none jumbo
    assert [c.documents for c in cluster.chunks] == [100] * 7 and not cluster.jumbo_chunks()


def test_a_value_with_more_documents_than_a_chunk_makes_a_jumbo_chunk():
    docs = _docs(50) + [{"_id": 1000 + i, "a": 99, "b": i} for i in range(250)]
    cluster = shard(docs, {"a": 1}, shards=2, chunk_docs=100)
    jumbo = cluster.jumbo_chunks()
    assert len(jumbo) == 1 and jumbo[0].documents == 250 and jumbo[0].lower == (99,)
    refined = shard(docs, {"a": 1, "b": 1}, shards=2, chunk_docs=100)  # a suffix adds cardinality
    assert not refined.jumbo_chunks()


def test_a_monotonic_key_sends_every_insert_to_the_last_chunk():
    cluster = shard(_docs(600), {"b": 1}, shards=3, chunk_docs=100)
    went = cluster.insert({"b": 600 + i} for i in range(90))
    assert set(went) == {cluster.chunks[-1].shard} and cluster.inserts_per_shard() == [0, 0, 90]


def test_a_hashed_key_spreads_monotonic_inserts():
    cluster = shard(_docs(600), {"b": "hashed"}, shards=3, chunk_docs=100)
    cluster.insert({"b": 600 + i} for i in range(300))
    assert max(cluster.inserts_per_shard()) < 0.5 * 300


def test_equality_on_the_whole_key_reaches_one_chunk():
    cluster = shard(_docs(600), {"b": 1}, shards=3, chunk_docs=100)
    route = cluster.route({"b": 250})
    assert not route.broadcast and route.shards == (cluster.chunk_of((250,)).shard,)


def test_a_range_on_a_ranged_key_is_targeted_to_the_chunks_it_overlaps():
    cluster = shard(_docs(600), {"b": 1}, shards=3, chunk_docs=100)
    assert cluster.route({"b": {"$gte": 10, "$lt": 20}}).shards == (0,)
    assert cluster.route({"b": {"$gte": 150, "$lt": 450}}).shards == (0, 1, 2)
    assert not cluster.route({"b": {"$gte": 150, "$lt": 450}}).broadcast


def test_a_filter_without_the_prefix_is_broadcast():
    cluster = shard(_docs(600, c=lambda i: i % 3), {"a": 1, "b": 1}, shards=3, chunk_docs=100)
    assert cluster.route({"b": 5}).broadcast  # the second field alone is not a prefix
    assert cluster.route({"c": 1}).broadcast
    assert cluster.route({"a": {"$ne": 3}}).broadcast
    assert not cluster.route({"a": 3}).broadcast  # the prefix: targeted
    assert not cluster.route({"a": 3, "b": {"$gt": 100}}).broadcast


def test_in_and_or_on_the_key_are_targeted_each_value():
    cluster = shard(_docs(600), {"b": 1}, shards=3, chunk_docs=100)
    assert cluster.route({"b": {"$in": [5, 15]}}).shards == (0,)
    assert cluster.route({"$or": [{"b": 5}, {"b": 590}]}).shards == (0, 2)
    assert cluster.route({"$or": [{"b": 5}, {"a": 1}]}).broadcast


def test_a_hashed_key_routes_equalities_but_broadcasts_ranges():
    cluster = shard(_docs(600), {"b": "hashed"}, shards=3, chunk_docs=100)
    one = cluster.route({"b": 42})
    assert not one.broadcast and one.shards == (cluster.chunk_of((hash64(42),)).shard,)
    assert cluster.route({"b": {"$gte": 10, "$lt": 20}}).broadcast


def test_compound_hashed_key_routes_on_the_hashed_prefix():
    cluster = shard(_docs(600), {"a": "hashed", "b": 1}, shards=3, chunk_docs=100)
    assert not cluster.route({"a": 3, "b": {"$gt": 10}}).broadcast
    assert cluster.route({"a": {"$gt": 3}}).broadcast


def test_missing_key_fields_count_as_null():
    cluster = shard([{"_id": i} for i in range(150)], {"tenant": 1}, shards=2, chunk_docs=100)
    assert len(cluster.chunks) == 1 and cluster.chunks[0].jumbo(100)


@pytest.mark.parametrize("spec, message", [
    ({"a": -1}, "descending"), ({"a": "hashed", "b": "hashed"}, "at most one hashed"), ({}, "a dict"),
    ([("a", 1), ("a", 1)], "twice"), ({"a": True}, "ranged"),
])
def test_keys_mongodb_refuses(spec, message):
    with pytest.raises(ValueError, match=message):
        ShardKey.of(spec)


def test_the_model_is_deterministic():
    first = shard(_docs(500), {"b": "hashed"}, shards=3, chunk_docs=50).table()
    assert first == shard(_docs(500), {"b": "hashed"}, shards=3, chunk_docs=50).table()
