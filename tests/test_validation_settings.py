"""change_validation: collMod where the backend has it, a checked rebuild where it does not."""

import pytest
from pymongo import IndexModel
from pymongo.errors import WriteError

from course.store.capabilities import Capability
from course.toolkit.validation_settings import ValidationChangeError, change_validation, validation_options

NEEDS_NAME = {"$jsonSchema": {"bsonType": "object", "required": ["name"]}}


@pytest.fixture
def lab(make_lab):
    return make_lab("01")


def _seed(db):
    db.create_collection("things", validator=NEEDS_NAME, validationLevel="strict", validationAction="error")
    db.things.insert_many([{"_id": i, "name": f"thing {i}", "size": i} for i in range(1, 1201)])
    db.things.insert_one({"_id": 0, "legacy": True}, bypass_document_validation=True)
    db.things.create_index([("name", 1)])
    db.things.create_indexes([IndexModel([("size", -1)], name="big_first",
                                         partialFilterExpression={"size": {"$gt": 100}})])


def test_without_validators_it_refuses_and_changes_nothing(lab):
    if lab.backend.supports(Capability.VALIDATORS):
        pytest.skip(f"{lab.backend.name} has validators")
    lab.db.things.insert_one({"_id": 1})
    with pytest.raises(ValidationChangeError, match="needs validators"):
        change_validation(lab.db, "things", lab.backend, action="warn")
    assert lab.db.things.count_documents({}) == 1


def test_changes_level_and_action_keeping_documents_and_indexes(lab):
    if not lab.backend.supports(Capability.VALIDATORS):
        pytest.skip(f"{lab.backend.name} has no validators")
    db = lab.db
    _seed(db)
    before = db.things.index_information()
    change = change_validation(db, "things", lab.backend, level="moderate", action="warn")
    assert change.method == ("collMod" if lab.backend.supports(Capability.COLLMOD) else "rebuild")
    assert change.documents == 1201 == db.things.count_documents({})
    assert db.things.index_information() == before
    assert validation_options(db, "things") == {"validator": NEEDS_NAME, "validationLevel": "moderate",
                                                "validationAction": "warn"}
    db.things.insert_one({"_id": -1, "no_name": True})  # warn: accepted
    change_validation(db, "things", lab.backend, action="error")
    with pytest.raises(WriteError) as raised:
        db.things.insert_one({"_id": -2, "no_name": True})
    assert raised.value.code == 121
    db.things.update_one({"_id": 0}, {"$set": {"touched": True}})  # moderate: invalid legacy doc may change
    assert "rebuilt" in str(change) or "collMod" in str(change)


def test_replacing_and_removing_the_validator(lab):
    if not lab.backend.supports(Capability.VALIDATORS):
        pytest.skip(f"{lab.backend.name} has no validators")
    db = lab.db
    _seed(db)
    needs_size = {"$jsonSchema": {"bsonType": "object", "required": ["size"]}}
    change_validation(db, "things", lab.backend, validator=needs_size)
    with pytest.raises(WriteError):
        db.things.insert_one({"_id": -3, "name": "no size"})
    change_validation(db, "things", lab.backend, validator={})
    db.things.insert_one({"_id": -4})
    assert db.things.count_documents({}) == 1202


def test_bad_settings_and_missing_collections(lab):
    if not lab.backend.supports(Capability.VALIDATORS):
        pytest.skip(f"{lab.backend.name} has no validators")
    with pytest.raises(ValidationChangeError, match="validationLevel must be one of"):
        change_validation(lab.db, "things", lab.backend, level="lenient")
    with pytest.raises(ValidationChangeError, match="does not exist"):
        change_validation(lab.db, "nothing_here", lab.backend, action="warn")


def test_a_failed_rebuild_leaves_the_original(lab, monkeypatch):
    if not lab.backend.supports(Capability.VALIDATORS) or lab.backend.supports(Capability.COLLMOD):
        pytest.skip("the rebuild path runs only on backends with validators and no collMod")
    import course.toolkit.validation_settings as module

    db = lab.db
    _seed(db)
    monkeypatch.setattr(module, "_index_models", lambda collection: [])  # the copy would lose indexes
    with pytest.raises(ValidationChangeError, match="left unchanged: the copy's indexes differ"):
        change_validation(db, "things", lab.backend, action="warn")
    assert validation_options(db, "things")["validationAction"] == "error"
    assert db.things.count_documents({}) == 1201 and "big_first" in db.things.index_information()
    assert db.list_collection_names() == ["things"]
