"""Lesson 06, exercise 06.2: the counter that turned long, made a long everywhere.

The checks seed the shop's products (with fewer embedded reviews than the
notebook's shop: the reviews are another finding, and seeding 20,000 of them
per check is slow on the embedded engines), call ``widen_counters(db)`` and
rerun the audit's ``mixed_types``; the hidden check has several overflowed
counters and counters that already are small longs.  The shop keeps counting
views while the repair runs: one check of each shop counts a view of every
product (an ``$inc``) between the repair's first read and its first write,
with the course's race injector (:class:`course.engine.recording.RecordingDatabase`).
"""

from __future__ import annotations

from typing import Any

from bson.int64 import Int64

from course.store.capabilities import Capability
from course.toolkit.census import bson_type_of
from course.datasets.legacy_shop import INT32_MAX
from course.engine.exercise import Incorrect, Unsupported, hidden, visible
from course.lessons.lesson06.shop import Repair, Variant, first_change
from course.lessons.lesson06.text import clipped
from course.engine.recording import RecordingDatabase

LEGACY = Variant("legacy", (("reviews", 300),))
MANY = Variant("many longs", (("reviews", 120), ("seed", 17), ("products", 160)), tweak="_more_longs")


#: (backend name, id) -> whether its $toLong/$convert and its $inc of an Int64 store a long, as a server does
_PROBED: dict[tuple, dict[str, bool]] = {}


def _probe(backend: Any, db: Any) -> dict[str, bool]:
    """Whether ``backend`` stores a long for an update pipeline's $toLong and for an $inc of Int64(0) on an int."""
    key = (backend.name, id(backend))
    if key not in _PROBED:
        probe = db["probe_longs"]
        found = {"convert": True, "inc": True}
        try:
            probe.insert_many([{"_id": 1, "v": 5}, {"_id": 2, "v": 5}])
            probe.update_one({"_id": 2}, {"$inc": {"v": Int64(0)}})
            found["inc"] = bson_type_of(probe.find_one({"_id": 2})["v"]) == "long"
            if backend.supports(Capability.PIPELINE_UPDATES):
                probe.update_one({"_id": 1}, [{"$set": {"v": {"$toLong": "$v"}}}])
                found["convert"] = bson_type_of(probe.find_one({"_id": 1})["v"]) == "long"
        finally:
            probe.drop()
        _PROBED[key] = found
    return _PROBED[key]


class WidenCounters(Repair):
    id = "06.2"
    title = "The counter that turned long: a long everywhere"
    answers = ("widen_counters",)
    function = "widen_counters"
    kind = "mixed_types"
    collections = ("products",)
    requirements = {
        "long": "every product's views is stored as a long (an Int64): the audit no longer reports mixed types "
                "in products.views",
        "value": "every counter keeps its value, the overflowed one too: the reads (the most viewed products, "
                 "product 7's counter) give the same answers",
        "unchanged": "nothing else changes: every product keeps every other field as it was, none is added or "
                     "removed (a repair that loses data is not a repair)",
        "live": "the shop keeps counting views while the repair runs: a view counted (an $inc of views) between "
                "the repair's reads and its writes is never lost",
    }
    hints = (
        "Only the type changes: each views becomes a long. bson.int64.Int64 is the Python type of a long.",
        "A value read, then written back, is out of date as soon as a view is counted in between. An update "
        "pipeline computes the new value from the stored one, inside the update: update_many({}, [{'$set': "
        "{'views': {'$toLong': '$views'}}}]) ($convert with to: 'long' is the long form); each document's update "
        "is atomic.",
        "Without pipelines (mongomock): make each write conditional on the value you read, update_one({'_id': "
        "..., 'views': views}, {'$set': {'views': Int64(views)}}), and when it matches nothing (a view was "
        "counted meanwhile), read the counter again and retry.",
    )
    solution_code = """
def widen_counters(db):
    \"\"\"Store every product's views as a long, keeping its value, while views are counted.\"\"\"
    db.products.update_many({}, [{"$set": {"views": {"$toLong": "$views"}}}])
"""

    @staticmethod
    def _more_longs(shop) -> None:
        """Three overflowed counters and two that a reporting job wrote as small longs."""
        products = shop.collections["products"]
        for index, value in ((20, INT32_MAX + 5), (41, 3 * INT32_MAX), (90, INT32_MAX + 1)):
            products[index]["views"] = Int64(value)
        for index in (3, 55):
            products[index]["views"] = Int64(products[index]["views"])

    def reads_before(self, db: Any) -> dict:
        """The most viewed products, and product 7's counter."""
        return {"most_viewed": [[d["_id"], int(d["views"])] for d in
                                db.products.find({}, {"views": 1}).sort([("views", -1), ("_id", 1)]).limit(5)],
                "product_7": int((db.products.find_one({"_id": 7}, {"views": 1}) or {}).get("views", -1))}

    reads_after = reads_before

    def repair(self, answer, db, race=None):
        """Call the learner's function on a recording wrapper of ``db`` (to see whether it used a pipeline),
        with ``race`` run between its first read and the write that follows."""
        recorded = RecordingDatabase(db, race=race)
        returned = super().repair(answer, recorded)
        self._recorded = recorded
        return returned

    def _engine_limit(self, db: Any) -> str | None:
        """What this backend cannot do that the learner's writes relied on (an int left is then no verdict).

        An update pipeline on a backend without pipeline updates (mongomock leaves the value as it was); and, on
        a backend whose engine was not opened by the course (so its quirks are not absorbed, course.store.quirks), a
        $toLong/$convert or an $inc of an Int64 that the backend answers with an int where a server stores a long
        (probed here, once per backend).
        """
        recorded = getattr(self, "_recorded", None)
        for op in recorded.ops() if recorded is not None else ():
            if op.kind != "write" or op.collection != "products":
                continue
            spec = op.argument("pipeline") if op.method == "aggregate" else op.argument("update")
            if op.method == "bulk_write":
                spec = [write.update for write in recorded.updates() if write.collection == "products"]
            pipeline = isinstance(spec, (list, tuple)) and op.method != "bulk_write"
            if pipeline and op.method != "aggregate" and not self.lab.backend.supports(Capability.PIPELINE_UPDATES):
                return f"{Capability.PIPELINE_UPDATES} ({self.lab.backend.name} leaves the counter as it was)"
            text = repr(spec)
            if ("$toLong" in text or "$convert" in text) and not _probe(self.lab.backend, db)["convert"]:
                return f"a $toLong or $convert to long that stores a long ({self.lab.backend.name} stores an int)"
            if "$inc" in text and not _probe(self.lab.backend, db)["inc"]:
                return f"an $inc of an Int64 that stores a long ({self.lab.backend.name} stores an int)"
        return None

    def _long(self, answer, variant):
        run = self.run(answer, variant)
        for product in run.db.products.find({}, {"views": 1}).sort("_id", 1):
            kind = bson_type_of(product.get("views"))
            limit = self._engine_limit(run.db) if kind == "int" else None
            if limit:
                raise Unsupported(feature=limit)
            if kind != "long":
                raise Incorrect(f"product {product['_id']}'s views is stored as {kind} ({clipped(product.get('views'), 30)}):"
                                " every counter should be stored as a long")
        self.check_audit(run, ": every views must be a long")

    def _unchanged(self, answer, variant):
        run = self.run(answer, variant)
        before = {p["_id"]: p for p in run.seeded.collections["products"]}
        now = {p["_id"]: p for p in run.db.products.find({})}
        lost, added = sorted(set(before) - set(now)), sorted(set(now) - set(before), key=repr)
        if lost or added:
            raise Incorrect(f"the products are not the same ones: {len(lost)} lost {lost[:3]}, {len(added)} added "
                            f"{added[:3]}: change each product's views in place")
        for _id in sorted(before):
            old = {k: v for k, v in before[_id].items() if k != "views"}
            new = {k: v for k, v in now[_id].items() if k != "views"}
            difference = first_change(old, new)
            if difference:
                raise Incorrect(f"product {_id} changed beyond its views ({difference}): change the type of views, "
                                "touch nothing else")

    def _value(self, answer, variant):
        run = self.run(answer, variant)
        before = {p["_id"]: int(p["views"]) for p in run.seeded.collections["products"]}
        for product in run.db.products.find({}, {"views": 1}).sort("_id", 1):
            views = product.get("views")
            if not isinstance(views, (int, float)) or isinstance(views, bool) or views != before.get(product["_id"]):
                raise Incorrect(f"product {product['_id']}'s views was {before.get(product['_id'])}, it is now "
                                f"{clipped(views, 30)}: change the type only, never the count")
        self.check_reads(run, ": change the type only, never the count")

    def _live(self, answer, variant):
        """A view of every product counted between the repair's first read and its first write.

        Each counter is compared with what the same repair left without the race (plus the view counted), on
        the products whose value that run kept: a repair that changes a value breaks ``value``, not this.
        """
        quiet = self.run(answer, variant)
        seeded = {p["_id"]: int(p["views"]) for p in quiet.seeded.collections["products"]}
        kept = {p["_id"]: bson_type_of(p.get("views")) for p in quiet.db.products.find({}, {"views": 1})
                if p.get("views") == seeded.get(p["_id"])}
        self.forget()
        db, _ = self.seed(variant)
        self.repair(answer, db, race=lambda: db.products.update_many({}, {"$inc": {"views": 1}}))
        recorded = self._recorded
        for op in recorded.ops():
            stages = op.argument("pipeline") if op.method == "aggregate" and op.kind == "write" else None
            merge = stages[-1].get("$merge") if isinstance(stages, (list, tuple)) and stages else None
            into = merge.get("into") if isinstance(merge, dict) else merge
            into = into.get("coll") if isinstance(into, dict) else into
            matched = merge.get("whenMatched", "merge") if isinstance(merge, dict) else "merge"
            if into == "products" and (not isinstance(matched, list) or "$$new" in repr(matched)):
                raise Incorrect("the aggregation reads each counter, then its $merge writes the value it read back "
                                "into products: a view counted between the two is lost (the read and the write "
                                "are not one update)")
        extra = 1 if recorded.raced else 0
        for product in db.products.find({"_id": {"$in": sorted(kept)}}, {"views": 1}).sort("_id", 1):
            views = product.get("views")
            wanted = seeded[product["_id"]] + extra
            if isinstance(views, (int, float)) and not isinstance(views, bool) and views != wanted:
                raise Incorrect(f"a view of every product was counted (an $inc) after your first read and before "
                                f"your first write: product {product['_id']}'s views is {views}, it should be "
                                f"{wanted} (the view was lost: the value written was read before it)")
            if kept[product["_id"]] == "long" and bson_type_of(views) != "long":
                raise Incorrect(f"a view of every product was counted (an $inc) after your first read and before "
                                f"your first write, and product {product['_id']}'s views is still stored as "
                                f"{bson_type_of(views)}: a write that missed because the counter moved must be "
                                "made again")

    @visible(points=2, checks="long")
    def every_counter_is_a_long(self, answer):
        """The legacy products: every views is a long, and the audit no longer reports products.views"""
        self._long(answer, LEGACY)

    @visible(points=2, checks="value")
    def every_counter_keeps_its_value(self, answer):
        """The legacy products: every counter keeps its value; the reads give the same answers"""
        self._value(answer, LEGACY)

    @visible(points=1, checks="unchanged")
    def every_other_field_unchanged(self, answer):
        """The legacy products: every other field of every product is as it was"""
        self._unchanged(answer, LEGACY)

    @visible(points=2, checks="live")
    def views_counted_meanwhile_kept(self, answer):
        """The legacy products: a view counted while the repair runs is not lost"""
        self._live(answer, LEGACY)

    @hidden(points=1, checks="long")
    def several_overflowed_counters(self, answer):
        """Another shop, three overflowed counters and two small longs: every views is a long"""
        self._long(answer, MANY)

    @hidden(points=1, checks="value")
    def several_overflowed_values(self, answer):
        """Another shop, three overflowed counters: every value kept"""
        self._value(answer, MANY)

    @hidden(points=1, checks="unchanged")
    def several_products_unchanged(self, answer):
        """Another shop: every other field of every product is as it was"""
        self._unchanged(answer, MANY)

    @hidden(points=1, checks="live")
    def several_views_counted_meanwhile(self, answer):
        """Another shop: a view counted while the repair runs is not lost"""
        self._live(answer, MANY)
