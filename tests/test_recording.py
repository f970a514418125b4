"""The recording wrappers: the ordered log, normalised writes, read-modify-write, and the race injector."""

from pymongo import InsertOne, UpdateOne

from course.engine.recording import RecordingCollection, RecordingDatabase

MAX = 3


def _customers(make_lab):
    db = make_lab("01").scratch()
    db.customers.insert_one({"_id": 1, "addresses": ["a", "b"]})
    return db


def _guarded_add(customers, address):
    """One update whose filter keeps the bound: safe under concurrency."""
    return customers.update_one({"_id": 1, f"addresses.{MAX - 1}": {"$exists": False}},
                                {"$push": {"addresses": address}}).modified_count == 1


def _read_then_push(customers, address):
    """Reads, decides, then writes unguarded: a competing write in between overshoots the bound."""
    if len(customers.find_one({"_id": 1})["addresses"]) >= MAX:
        return False
    customers.update_one({"_id": 1}, {"$push": {"addresses": address}})
    return True


def _race(db):
    return lambda: db.customers.update_one({"_id": 1}, {"$push": {"addresses": "competitor"}})


def test_race_breaks_a_read_modify_write_only(make_lab):
    db = _customers(make_lab)
    unsafe = RecordingCollection(db.customers, race=_race(db))
    _read_then_push(unsafe, "c")
    assert unsafe.raced and unsafe.read_then_write()
    assert len(db.customers.find_one({"_id": 1})["addresses"]) == MAX + 1  # overshot

    db = _customers(make_lab)
    safe = RecordingCollection(db.customers, race=_race(db))
    assert _guarded_add(safe, "c")
    assert not safe.raced and not safe.read_then_write()  # nothing to race: a single guarded update
    assert len(db.customers.find_one({"_id": 1})["addresses"]) == MAX


def test_writes_normalised_across_spellings(make_lab):
    db = _customers(make_lab)
    recorded = RecordingDatabase(db)
    recorded.customers.bulk_write([UpdateOne({"_id": 1}, {"$set": {"x": 1}}), InsertOne({"_id": 2})])
    recorded.customers.find_one_and_update({"_id": 1}, {"$set": {"y": 2}})
    recorded["customers"].update_one(filter={"_id": 1}, update={"$set": {"z": 3}}, upsert=False)
    updates = recorded.updates()
    assert [(w.method, w.via) for w in updates] == [
        ("update_one", "bulk_write"), ("insert_one", "bulk_write"),
        ("update_one", "find_one_and_update"), ("update_one", "")]
    assert updates[0].filter == {"_id": 1} and updates[0].update == {"$set": {"x": 1}}
    assert updates[3].update == {"$set": {"z": 3}} and updates[3].upsert is False
    assert [o.kind for o in recorded.ops()] == ["write", "write", "write"]
    assert recorded.collection("customers").reads() == []
    assert len(recorded.writes()) == 3 and not recorded.read_then_write()


def test_reads_of_another_collection_are_not_a_read_modify_write(make_lab):
    db = _customers(make_lab)
    recorded = RecordingDatabase(db)
    list(recorded.orders.find({}))
    recorded.customers.update_one({"_id": 1}, {"$set": {"seen": True}})
    assert not recorded.read_then_write()
    recorded.customers.find_one({"_id": 1})
    recorded.customers.update_one({"_id": 1}, {"$set": {"seen": False}})
    assert recorded.read_then_write()


def test_an_aggregate_that_writes_is_a_write(make_lab):
    db = _customers(make_lab)
    recorded = RecordingDatabase(db)
    list(recorded.customers.aggregate([{"$match": {}}]))
    assert [o.kind for o in recorded.ops()] == ["read"]
    try:
        recorded.customers.aggregate([{"$match": {}}, {"$merge": {"into": "copy"}}])
    except NotImplementedError:  # mongomock has no $merge; the call was still recorded first
        pass
    assert [o.kind for o in recorded.ops()] == ["read", "write"]
