"""Exercise 02.4, one kind of entity per collection: split a mixed collection, safely and repeatably.

split_records is run on seeded mixed records (every kind, documents without a kind, kinds that name no
collection), once or several times, and judged on what each collection holds afterwards.
"""

from __future__ import annotations

from typing import Any

from course.datasets.orders import KIND_COLLECTIONS, UNCLASSIFIED
from course.engine.exercise import Exercise, Incorrect, LearnerCodeError, Unsupported, hidden, visible
from course.lessons.lesson02.checks import (SPLIT_COLLECTIONS, field_difference, raised_by, seed_records, shown,
                                            snapshot, snapshot_difference)


#: how mongoeco refuses a $merge whose "on" is a list or another field than _id (a server runs it)
MERGE_ON_REFUSED = "$merge currently supports only omitted on or on: '_id'"


class SplitByKind(Exercise):
    id = "02.4"
    title = "One kind of entity per collection"
    answers = ("split_records",)
    requirements = {
        "split": "each document whose kind is customer, order or product is copied, exactly once, into "
                 "customers, orders or products, its other fields unchanged",
        "no_kind": "the copies in customers, orders and products have no kind field",
        "unclassified": "a document with no known kind (no kind field, or a kind such as 'supplier' or None) "
                        "is copied into unclassified unchanged, kind and all",
        "source": "db.records is left as it is",
        "rerun": "running split_records twice gives the same collections as running it once",
    }
    hints = (
        f"Each document goes to the collection its kind names: {KIND_COLLECTIONS}; "
        f"a document without a known kind goes to {UNCLASSIFIED!r} unchanged, so nothing is lost.",
        "In customers, orders and products the collection says the kind: drop the kind field there.",
        "Make it safe to run again: replace_one({'_id': ...}, doc, upsert=True) writes each document once "
        "however often the split runs. Leave db.records as it is.",
    )
    solution_code = """
KIND_COLLECTIONS = {"customer": "customers", "order": "orders", "product": "products"}

def split_records(db):
    \"\"\"Copy each document of db.records into the collection of its kind; safe to run again.\"\"\"
    for doc in db.records.find():
        target = KIND_COLLECTIONS.get(doc.get("kind"))
        if target is None:
            db.unclassified.replace_one({"_id": doc["_id"]}, doc, upsert=True)
        else:
            doc.pop("kind")
            db[target].replace_one({"_id": doc["_id"]}, doc, upsert=True)
"""

    VISIBLE = {"customers_n": 3, "orders_n": 4, "products_n": 2, "strays": 2, "odd_kinds": 5, "seed": 1}
    OTHER = {"customers_n": 6, "orders_n": 10, "products_n": 4, "strays": 2, "odd_kinds": 3, "seed": 31}

    def _split(self, answer, sizes: dict, runs: int = 1):
        db = self.lab.scratch()
        records = seed_records(**sizes)
        db.records.insert_many([dict(r) for r in records])
        for _ in range(runs):
            self._split_once(answer, db)
        return db, records

    def _split_once(self, answer, db, **how) -> object:
        """Call split_records; a $merge the engine refuses for its form (not its meaning) is "needs ..."."""
        try:
            return self.call("split_records", answer.split_records, db, **how)
        except LearnerCodeError as error:
            if error.raised is not None and error.raised.message.startswith(MERGE_ON_REFUSED):
                raise Unsupported(reason=f"needs $merge with that on (a list, or a field other than _id), which "
                                         f"{self.lab.backend.name} refuses (\"{MERGE_ON_REFUSED}\"): a MongoDB "
                                         "server runs it") from error
            raise

    def _where(self, db) -> dict[Any, list[str]]:
        where: dict[Any, list[str]] = {}
        for name in SPLIT_COLLECTIONS:
            for doc in db[name].find({}, {"_id": 1}):
                where.setdefault(doc["_id"], []).append(name)
        return where

    @staticmethod
    def _elsewhere(db, name: str, want: dict, records) -> str | None:
        """Where ``name`` holds ``want`` under an _id no document of records has, as a phrase, or None.

        The copy of ``want`` (its fields but _id, and kind, which another requirement judges) names it; failing
        that, any document of another _id.  So a copy written under a new _id is named as such, not as lost.
        """
        strays = list(db[name].find({"_id": {"$nin": [r["_id"] for r in records]}}))
        if not strays:
            return None
        rest = {k: v for k, v in want.items() if k not in ("_id", "kind")}
        for doc in strays:
            if field_difference(rest, {k: v for k, v in doc.items() if k not in ("_id", "kind")},
                                extra_allowed=False) is None:
                return (f"{name} holds it under _id {shown(doc['_id'])} instead: each copy keeps the _id of its "
                        "document")
        return (f"{name} holds {shown(strays[0]['_id'])}, which is not a document of records: copy each document "
                "with its own _id")

    def _expect_split(self, db, records) -> None:
        where = self._where(db)
        for record in records:
            target = KIND_COLLECTIONS.get(record.get("kind"))
            if target is None:
                continue
            found = where.get(record["_id"], [])
            elsewhere = None if found else self._elsewhere(db, target, record, records)
            if elsewhere:
                raise Incorrect(f"{record['kind']} {record['_id']} should be in {target} exactly once, under its "
                                f"own _id; {elsewhere}")
            if found != [target]:
                place = ", ".join(found) if found else "no collection"
                raise Incorrect(f"{record['kind']} {record['_id']} should be in {target} exactly once; it is in "
                                f"{place}")
            copy = db[target].find_one({"_id": record["_id"]})
            want = {k: v for k, v in record.items() if k != "kind"}
            difference = field_difference(want, {k: v for k, v in copy.items() if k != "kind"}, extra_allowed=False)
            if difference:
                raise Incorrect(f"{record['_id']} in {target} {difference}")
        known = {r["_id"] for r in records}
        for name in KIND_COLLECTIONS.values():
            for doc in db[name].find({"_id": {"$nin": list(known)}}, {"_id": 1}).limit(1):
                raise Incorrect(f"{name} holds {shown(doc['_id'])}, which is not a document of records: copy each "
                                "document with its own _id")

    def _expect_unclassified(self, db, records) -> None:
        where = self._where(db)
        for record in records:
            if record.get("kind") in KIND_COLLECTIONS:
                continue
            what = "without a kind" if "kind" not in record else f"of kind {record['kind']!r}"
            found = where.get(record["_id"], [])
            elsewhere = None if found else self._elsewhere(db, UNCLASSIFIED, record, records)
            if elsewhere:
                raise Incorrect(f"{record['_id']} (a document {what}) should be in {UNCLASSIFIED} exactly once, "
                                f"under its own _id; {elsewhere}")
            if found != [UNCLASSIFIED]:
                place = ", ".join(found) if found else "no collection"
                raise Incorrect(f"{record['_id']} (a document {what}) should be in {UNCLASSIFIED} exactly once, "
                                f"so nothing is lost; it is in {place}")
            difference = field_difference(record, db[UNCLASSIFIED].find_one({"_id": record["_id"]}),
                                          extra_allowed=False)
            if difference:
                raise Incorrect(f"{record['_id']} (a document {what}) in {UNCLASSIFIED} {difference}: it goes "
                                "there unchanged")

    @visible(points=2, checks="split")
    def each_kind_in_its_collection(self, answer):
        """Customers, orders and products each land in their own collection, once, unchanged"""
        self._expect_split(*self._split(answer, self.VISIBLE))

    @hidden(points=1, checks="split")
    def each_kind_on_other_data(self, answer):
        """More documents of every kind"""
        self._expect_split(*self._split(answer, self.OTHER))

    @visible(points=1, checks="no_kind")
    def copies_have_no_kind(self, answer):
        """In customers, orders and products the collection says the kind: no kind field"""
        db, records = self._split(answer, self.VISIBLE)
        for name in KIND_COLLECTIONS.values():
            for doc in db[name].find({"kind": {"$exists": True}}, {"_id": 1, "kind": 1}).limit(1):
                raise Incorrect(f"{doc['_id']} in {name} still has its kind field ({shown(doc['kind'])}): the "
                                "collection says the kind, drop the field")

    @visible(points=2, checks="unclassified")
    def unknown_kinds_kept(self, answer):
        """Documents with no kind, kind 'supplier', None, or a known kind spelt otherwise ('Customer', 'orders') land in
        unclassified, unchanged"""
        self._expect_unclassified(*self._split(answer, self.VISIBLE))

    @hidden(points=1, checks="unclassified")
    def unknown_kinds_on_other_data(self, answer):
        """More documents of no known kind"""
        self._expect_unclassified(*self._split(answer, self.OTHER))

    @visible(points=1, checks="source")
    def records_left_alone(self, answer):
        """db.records is left as it is"""
        db, records = self._split(answer, self.VISIBLE)
        difference = snapshot_difference({"records": {r["_id"]: r for r in records}}, snapshot(db, ("records",)))
        if difference:
            raise Incorrect(f"split_records changed db.records ({difference}): leave the source as it is until "
                            "the copy is verified")

    def _expect_rerun(self, answer, sizes: dict, runs: int) -> None:
        db, _ = self._split(answer, sizes)
        once = snapshot(db, ("records", *SPLIT_COLLECTIONS))
        for run in range(2, runs + 1):
            raised = raised_by(self._split_once(answer, db, expect_raise=True))
            if raised is not None:
                raise Incorrect(f"running split_records a second time raised {raised.type_name}: a second run "
                                "must give the same collections as one, so write each document in a way that can "
                                "be repeated")
            difference = snapshot_difference(once, snapshot(db, ("records", *SPLIT_COLLECTIONS)))
            if difference:
                raise Incorrect(f"running split_records {'twice' if run == 2 else f'{run} times'} gave other "
                                f"collections than running it once: {difference}")

    @visible(points=2, checks="rerun")
    def safe_to_run_twice(self, answer):
        """Running the split twice gives the same collections as once"""
        self._expect_rerun(answer, self.VISIBLE, 2)

    @hidden(points=1, checks="rerun")
    def safe_to_run_three_times(self, answer):
        """Three runs on other data"""
        self._expect_rerun(answer, self.OTHER, 3)
