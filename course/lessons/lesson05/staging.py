"""Lab 05, exercise 05.6: stage the validator (warn, then error, then strict).

The validator is judged by inserting documents against it; the stages by
applying them, with the reference validator (so a validator mistake costs only
the validator's requirements), to a collection of legacy orders and trying the
writes each stage must let through or stop.  ``errorAndLog`` (MongoDB 8.1) is
applied as ``error`` on an engine without it (the same writes refused:
:func:`course.toolkit.validation_settings.action_as_run`).
"""

from __future__ import annotations

import copy

from pymongo.errors import OperationFailure

from course.store.capabilities import Capability
from course.datasets.migration import NO_PHONE_IDS, OVERFLOW_ID, SMALL_LONG_ID, VERSION_FIELD, phone_of, seed_orders
from course.engine.exercise import Exercise, Incorrect, hidden, visible
from course.lessons.lesson04.common import error_text
from course.lessons.lesson05.data import expected_v2, orders_of
from course.toolkit.migration_sim import NOT_MIGRATED, migrate_ids
from course.toolkit.validation_settings import ACTIONS, LEVELS, ValidationChangeError, action_as_run, change_validation

_V1_ORDER = {"_id": 7001, "tenantId": "t1", "customer": {"_id": 1, "name": "Customer 1", "phone": phone_of(1)},
             "views": 0}
#: the form of ``stages``, with no setting in it (the settings are the exercise)
_FORM = "such as [(level, action), (level, action), (level, action)], each a string"
REFERENCE_VALIDATOR = {"$jsonSchema": {
    "bsonType": "object",
    "required": ["schema_version", "customer"],
    "properties": {
        "schema_version": {"enum": [2]},
        "customer": {"bsonType": "object", "required": ["phones"], "properties": {"phones": {"bsonType": "array"}}},
    },
}}


class Staging(Exercise):
    id = "05.6"
    title = "Stage the validator: warn, then error, then strict"
    answers = ("v2_validator", "stages")
    requires = frozenset({Capability.VALIDATORS})
    requirements = {
        "accepts_v2": "v2_validator (a dict such as {\"$jsonSchema\": {...}}) accepts version 2 orders: an empty "
                      "phones list, a long views, a dual-written customer.phone beside the list",
        "refuses_v1": "it refuses an order without schema_version 2",
        "requires_phones": "it refuses an order whose customer has no phones list",
        "form": "stages is three (validationLevel, validationAction) pairs of valid settings, in the order applied",
        "stage1": "the first stage refuses no write yet, so the old application keeps working, and still checks "
                  "every write, so that the log names each one that breaks the rule (a level that validates, "
                  "action warn)",
        "stage2": "the second refuses new version 1 orders and breaking a valid order, but lets legacy orders be "
                  "updated (moderate, error)",
        "stage3": "the last, applied after the batch job, holds every write on every order to the rule (strict, "
                  "error)",
    }
    hints = (
        'v2_validator is {"$jsonSchema": {...}}: require schema_version (enum [2]) and customer, and in customer '
        "require phones with bsonType array. Leave views alone: the audit found longs there.",
        'stages is a list of three (validationLevel, validationAction) pairs: first ("moderate", "warn"), '
        "then make new bad writes fail, and only after the batch has migrated the tail, check every document.",
    )
    solution_code = """
v2_validator = {"$jsonSchema": {
    "bsonType": "object",
    "required": ["schema_version", "customer"],
    "properties": {
        "schema_version": {"enum": [2]},
        "customer": {"bsonType": "object", "required": ["phones"],
                     "properties": {"phones": {"bsonType": "array"}}},
    },
}}
stages = [("moderate", "warn"), ("moderate", "error"), ("strict", "error")]
"""

    # ---- the validator, judged by inserting documents against it ----
    def _strict_collection(self, answer):
        validator = self.expect_type("v2_validator", answer.v2_validator, dict, '{"$jsonSchema": {...}}')
        db = self.lab.scratch()
        try:
            db.create_collection("orders", validator=copy.deepcopy(validator))
        except OperationFailure as error:
            raise Incorrect(f"the database refused v2_validator: {error_text(error)}") from None
        return db.orders

    @staticmethod
    def _accepted(write) -> bool:
        try:
            write()
        except OperationFailure as failure:
            if failure.code == 121:
                return False
            raise Incorrect(f"the write failed for another reason than validation: {error_text(failure)}") from None
        return True

    def _accepts(self, answer, docs):
        orders = self._strict_collection(answer)
        for what, doc in docs:
            if not self._accepted(lambda: orders.insert_one(copy.deepcopy(doc))):
                raise Incorrect(f"v2_validator rejects a valid version 2 order ({what}): {doc!r:.160}")

    def _v2_examples(self, n, seed):
        docs = {d["_id"]: expected_v2(d) for d in orders_of(n, seed)}
        dual = copy.deepcopy(docs[16] if 16 in docs else next(d for d in docs.values() if d["customer"]["phones"]))
        dual["customer"]["phone"] = dual["customer"]["phones"][0]
        dual["_id"] = 8001
        return [("a migrated order", docs[1]), ("no phone: phones is []", docs[NO_PHONE_IDS[0]]),
                ("views is a long", {**docs[OVERFLOW_ID], "views": 2**31}),
                ("views is a small Int64", docs[SMALL_LONG_ID]), ("dual-written: phone beside phones", dual)]

    @visible(points=2, checks="accepts_v2")
    def accepts_v2_orders(self, answer):
        """The validator accepts version 2 orders: no phones, a long counter, a dual-written phone"""
        self._accepts(answer, self._v2_examples(60, 5))

    @hidden(points=1, checks="accepts_v2")
    def accepts_other_v2_orders(self, answer):
        """Other version 2 orders, with more fields"""
        docs = self._v2_examples(45, 8) + [("more fields", {"_id": 8002, VERSION_FIELD: 2, "tenantId": "t3",
                                                             "customer": {"name": "C", "phones": ["0901", "0902"],
                                                                          "email": "c@example"},
                                                             "items": [{"sku": "x"}], "views": 0})]
        self._accepts(answer, docs)

    def _refuses(self, answer, docs, advice):
        orders = self._strict_collection(answer)
        for what, doc in docs:
            if self._accepted(lambda: orders.insert_one(copy.deepcopy(doc))):
                raise Incorrect(f"v2_validator accepts {what}: {doc!r:.120}: {advice}")

    _V1_ADVICE = "require schema_version, with the value 2"

    @visible(points=2, checks="refuses_v1")
    def refuses_v1_orders(self, answer):
        """The validator refuses a version 1 order, one with phones but no schema_version, and orders saying
        schema_version 1 or 3"""
        no_version = {"_id": 7101, "customer": {"name": "N", "phone": "0901", "phones": ["0901"]}, "views": 0}
        self._refuses(answer, [("a version 1 order (no schema_version)", _V1_ORDER),
                               ("an order with phones but no schema_version", no_version),
                               ("an order with schema_version: 1",
                                {"_id": 7102, VERSION_FIELD: 1, "customer": {"name": "O", "phones": ["0903"]}}),
                               ("an order with schema_version: 3",
                                {"_id": 7103, VERSION_FIELD: 3, "customer": {"name": "R", "phones": ["0906"]}})],
                      self._V1_ADVICE)

    @hidden(points=1, checks="refuses_v1")
    def refuses_other_v1_orders(self, answer):
        """Other orders without schema_version 2: a version 1 order without a phone, schema_version 0 and 4"""
        docs = {d["_id"]: d for d in orders_of(45, 8)}
        self._refuses(answer, [("a version 1 order without a phone", docs[NO_PHONE_IDS[1]]),
                               ("an order with schema_version: 0",
                                {"_id": 7104, VERSION_FIELD: 0, "customer": {"name": "S", "phones": ["0907"]}}),
                               ("an order with schema_version: 4",
                                {"_id": 7105, VERSION_FIELD: 4, "customer": {"name": "T", "phones": ["0908"]}})],
                      self._V1_ADVICE)

    _PHONES_ADVICE = "require customer.phones, an array"

    @visible(points=1, checks="requires_phones")
    def refuses_v2_without_phones(self, answer):
        """The validator refuses a version 2 order without a phones list"""
        self._refuses(answer, [("schema_version 2 without customer.phones",
                                {"_id": 7201, VERSION_FIELD: 2, "customer": {"name": "P", "phone": "0904"}})],
                      self._PHONES_ADVICE)

    @hidden(points=1, checks="requires_phones")
    def refuses_other_broken_v2(self, answer):
        """Phones as a string, and no customer at all, are refused"""
        self._refuses(answer, [("customer.phones as a string",
                                {"_id": 7202, VERSION_FIELD: 2, "customer": {"name": "Q", "phones": "0905"}}),
                               ("no customer at all", {"_id": 7203, VERSION_FIELD: 2, "views": 0})],
                      self._PHONES_ADVICE)

    # ---- the stages, applied with the reference validator ----
    @staticmethod
    def _pairs(stages) -> list[tuple]:
        if isinstance(stages, (list, tuple)) and stages:
            pairs = []
            for stage in stages:
                if isinstance(stage, dict) and {"validationLevel", "validationAction"} <= set(stage):
                    pairs.append((stage["validationLevel"], stage["validationAction"]))
                elif isinstance(stage, (list, tuple)) and len(stage) == 2:
                    pairs.append(tuple(stage))
                else:
                    break
            else:
                return pairs
        raise Incorrect(f"stages should be three (validationLevel, validationAction) pairs, {_FORM}; the stages "
                        "could not be read")

    @visible(points=1, checks="form")
    def three_valid_stages(self, answer):
        """Three stages, each a (level, action) pair of valid settings"""
        stages = answer.stages
        if not isinstance(stages, (list, tuple)) or len(stages) != 3 or not all(
                isinstance(s, (list, tuple)) and len(s) == 2 for s in stages):
            raise Incorrect(f"stages should be three (validationLevel, validationAction) pairs, {_FORM}; got "
                            f"{stages!r:.80}")
        for level, action in stages:
            if level not in LEVELS or action not in ACTIONS:
                raise Incorrect(f"({level!r}, {action!r}) is not a stage: validationLevel is one of "
                                f"{', '.join(LEVELS)}; validationAction one of {', '.join(ACTIONS)}")

    def _legacy(self, n, seed):
        db = self.lab.scratch()
        orders = db.orders
        seed_orders(orders, list(orders_of(n, seed)))
        return db

    def _apply(self, db, number, stage):
        level, action = stage[0], action_as_run(stage[1], self.lab.backend)
        try:
            change_validation(db, "orders", self.lab.backend, validator=copy.deepcopy(REFERENCE_VALIDATOR),
                              level=level, action=action)
        except (ValidationChangeError, OperationFailure, ValueError) as error:
            raise Incorrect(f"stage {number} {stage!r} could not be applied: {error_text(error)}") from None
        return db.orders

    def _stages(self, answer, up_to: int, db):
        pairs = self._pairs(answer.stages)
        chosen = [pairs[0], pairs[1] if len(pairs) > 1 else pairs[-1], pairs[-1]][:up_to]
        orders = db.orders
        for number, stage in enumerate(chosen, start=1):
            if number == 3:
                ids = [d["_id"] for d in orders.find(NOT_MIGRATED, {"_id": 1})]
                migrate_ids(orders, self.lab.backend, ids)
                orders.update_many({"customer.phones": {"$exists": False}}, {"$set": {"customer.phones": []}})
            orders = self._apply(db, number, stage)
        return orders, chosen[-1]

    def _stage1(self, answer, n, seed):
        db = self._legacy(n, seed)
        orders, stage = self._stages(answer, 1, db)
        v1_id = orders.find_one(NOT_MIGRATED)["_id"]
        v2_id = orders.find_one({VERSION_FIELD: 2})["_id"]
        for what, write in (("an update of a legacy order", lambda: orders.update_one({"_id": v1_id},
                                                                                      {"$inc": {"views": 1}})),
                            ("a new version 1 order", lambda: orders.insert_one(dict(_V1_ORDER))),
                            ("a write that breaks a version 2 order",
                             lambda: orders.update_one({"_id": v2_id}, {"$unset": {"customer.phones": ""}}))):
            if not self._accepted(write):
                raise Incorrect(f"the first stage {stage!r} refuses {what}: the old application still runs, and "
                                "the first stage must refuse nothing yet")
        if stage[0] == "off":
            raise Incorrect(f"the first stage {stage!r} validates no write at all, so nothing is logged: the first "
                            "stage must still check every write, so that the log shows which code paths write "
                            "version 1")

    @visible(points=1, checks="stage1")
    def first_stage_only_warns(self, answer):
        """The first stage lets every write through (and logs the bad ones)"""
        self._stage1(answer, 36, 5)

    @hidden(points=1, checks="stage1")
    def first_stage_only_warns_elsewhere(self, answer):
        """The same on another collection"""
        self._stage1(answer, 40, 8)

    def _stage2(self, answer, n, seed):
        db = self._legacy(n, seed)
        orders, stage = self._stages(answer, 2, db)
        v1_id = orders.find_one(NOT_MIGRATED)["_id"]
        v2_id = orders.find_one({VERSION_FIELD: 2})["_id"]
        if self._accepted(lambda: orders.insert_one({**_V1_ORDER, "_id": 7002})):
            raise Incorrect(f"the second stage {stage!r} accepts a new version 1 order: once the old application is "
                            "gone, the second stage must refuse it")
        if not self._accepted(lambda: orders.update_one({"_id": v1_id}, {"$inc": {"views": 1}})):
            raise Incorrect(f"the second stage {stage!r} refuses an update of a legacy version 1 order: until the "
                            "batch job has migrated them, legacy orders must stay updatable")
        if self._accepted(lambda: orders.update_one({"_id": v2_id}, {"$unset": {"customer.phones": ""}})):
            raise Incorrect(f"the second stage {stage!r} lets an update remove the phones of a valid version 2 "
                            "order: the second stage must refuse a write that breaks a valid order")

    @visible(points=2, checks="stage2")
    def second_stage_errors_moderately(self, answer):
        """The second stage stops new version 1 orders but lets legacy ones be updated"""
        self._stage2(answer, 36, 5)

    @hidden(points=1, checks="stage2")
    def second_stage_errors_moderately_elsewhere(self, answer):
        """The same on another collection"""
        self._stage2(answer, 40, 8)

    def _stage3(self, answer, n, seed):
        db = self._legacy(n, seed)
        orders, stage = self._stages(answer, 3, db)
        if not self._accepted(lambda: orders.update_one({"_id": OVERFLOW_ID}, {"$inc": {"views": 1}})):
            raise Incorrect(f"the last stage {stage!r} refuses a counter update on a valid order")
        orders.insert_one({**_V1_ORDER, "_id": 7003}, bypass_document_validation=True)
        if self._accepted(lambda: orders.update_one({"_id": 7003}, {"$inc": {"views": 1}})):
            raise Incorrect(f"the last stage {stage!r} lets an update of a version 1 order through (order 7003, "
                            "inserted bypassing validation): the last stage must hold every write on every order "
                            "to the rule")
        if self._accepted(lambda: orders.insert_one({**_V1_ORDER, "_id": 7004})):
            raise Incorrect(f"the last stage {stage!r} accepts the insert of a version 1 order: the last stage must "
                            "refuse it")

    @visible(points=2, checks="stage3")
    def last_stage_is_strict(self, answer):
        """After the batch job, the last stage holds every write on every order to the rule"""
        self._stage3(answer, 36, 5)

    @hidden(points=1, checks="stage3")
    def last_stage_is_strict_elsewhere(self, answer):
        """The same on another collection"""
        self._stage3(answer, 40, 8)
