"""Lesson 06, exercise 06.1: drop the index that is a prefix of another.

The checks seed a smaller copy of the shop's orders, products and payments, call ``drop_redundant_index(db)``
and rerun the audit's ``redundant_index``.  The rule is the audit's own (:func:`course.audit.redundant_index.covering`):
a prefix index stays when it does something the longer one cannot, so both shops hold such prefixes: a TTL
index (dropping it stops the expiry), a partial and a sparse one, one whose longer index is partial, and, on a
backend that keeps collations, one with another collation; a unique index that is a prefix of another; and a
redundant index in products with a name of its own.  The hidden check's shop has the same kinds of index in other
collections, with other names.
"""

from __future__ import annotations

from typing import Any

from course.store.capabilities import Capability
from course.engine.exercise import Incorrect, hidden, visible
from course.lessons.lesson06.shop import Repair, Variant

INDEXED = ("orders", "products", "payments")
LEGACY = Variant("legacy", (("orders", 300), ("payments", 100), ("reviews", 300)), tweak="_legacy_indexes")
ELSEWHERE = Variant("elsewhere", (("seed", 16), ("orders", 300), ("reviews", 200)), tweak="_more_indexes")
#: seven years, in seconds: a retention period (no seeded document is old enough to expire, on a server either)
RETENTION = 7 * 365 * 24 * 3600


def _keys(db: Any) -> dict[str, dict[str, list]]:
    """collection -> index name -> its keys, as lists of [field, direction]."""
    return {name: {index: [list(p) for p in info["key"]] for index, info in db[name].index_information().items()}
            for name in sorted(db.list_collection_names())}


class DropRedundantIndex(Repair):
    id = "06.1"
    title = "Drop the index that is a prefix of another"
    answers = ("drop_redundant_index",)
    function = "drop_redundant_index"
    kind = "redundant_index"
    collections = INDEXED
    requirements = {
        "dropped": "every plain index whose keys are a prefix of another plain index's keys (same fields, same "
                   "directions, in the same collection, the same collation) is dropped: the audit no longer "
                   "reports redundant_index",
        "kept": "every other index stays: the longer index that covers the dropped one, every index that is no "
                "prefix, and a prefix that does what the longer one cannot: a unique or TTL index, a sparse or "
                "partial one, one whose longer index is sparse or partial, one with another collation; the reads "
                "give the same answers",
    }
    hints = (
        "For each collection, index_information() maps each index name to {'key': [(field, direction), ...], ...} "
        "plus its options: unique, expireAfterSeconds (a TTL index), sparse, partialFilterExpression, collation. "
        "Compare every pair of indexes of the collection.",
        "Index A is redundant when another index B has more keys and B's first len(A) keys are exactly A's keys. "
        "A is never redundant when it is _id_, unique or a TTL index; neither A nor B may be sparse or partial "
        "(a sparse or partial index holds only some documents); and both must have the same collation.",
        "Collect the names first, then call db[collection].drop_index(name) for each.",
    )
    solution_code = """
def drop_redundant_index(db):
    \"\"\"Drop every index whose keys are a prefix of another index of its collection, as the audit judges it.\"\"\"
    def plain(info):  # holds every document: neither sparse nor partial
        return not info.get("sparse") and "partialFilterExpression" not in info

    for name in db.list_collection_names():
        indexes = db[name].index_information()
        redundant = []
        for index, info in indexes.items():
            keys = list(info["key"])
            if index == "_id_" or info.get("unique") or "expireAfterSeconds" in info or not plain(info):
                continue  # it enforces a rule, expires documents or holds only some: the longer index cannot
            for other, other_info in indexes.items():
                longer = list(other_info["key"])
                if (other != index and len(longer) > len(keys) and longer[:len(keys)] == keys
                        and plain(other_info) and other_info.get("collation") == info.get("collation")):
                    redundant.append(index)
                    break
        for index in redundant:
            db[name].drop_index(index)
"""

    def _legacy_indexes(self, shop) -> None:
        """Near prefixes, prefixes that do what their longer index cannot (they stay), and a redundant index
        with a name of its own in products (another collection than orders' redundant customer_id_1)."""
        self._near_prefixes(shop)
        shop.indexes["products"] = [*shop.indexes["products"], ([("category", 1)], {"name": "category_lookup"})]
        shop.indexes["payments"] += [([("paid_at", 1)], {"name": "payments_expire", "expireAfterSeconds": RETENTION}),
                                     ([("paid_at", 1), ("amount_pence", 1)], {})]
        shop.indexes["orders"] += [([("status", 1)], {"name": "delivered_orders",
                                                       "partialFilterExpression": {"status": "DELIVERED"}})]
        shop.indexes["products"] += [([("price_pence", 1)], {"name": "priced", "sparse": True}),
                                     ([("price_pence", 1), ("views", -1)], {}),
                                     ([("supplier_id", 1), ("views", -1)],
                                      {"partialFilterExpression": {"views": {"$gt": 1000}}})]
        if self.lab.backend.supports(Capability.COLLATION):
            shop.indexes["products"] += [([("name", 1)], {"name": "name_any_case",
                                                         "collation": {"locale": "en", "strength": 2}}),
                                         ([("name", 1), ("price_pence", 1)], {})]

    def _more_indexes(self, shop) -> None:
        """A redundant index with a name of its own, a unique prefix that must stay, two indexes that share
        a longer one's fields but not its directions or its order (no prefix: they stay), and the prefixes
        that stay for their options in other collections than the legacy shop's."""
        shop.indexes["products"].append(([("category", 1)], {"name": "by_category"}))
        self._near_prefixes(shop)
        shop.indexes["orders"] += [([("placed_at", -1)], {"name": "orders_expire", "expireAfterSeconds": RETENTION}),
                                   ([("placed_at", -1), ("customer_id", 1)], {})]
        shop.indexes["payments"] += [([("amount_pence", 1)], {"name": "large_payments",
                                                             "partialFilterExpression": {"amount_pence": {"$gt": 5000}}}),
                                     ([("amount_pence", 1), ("paid_at", -1)], {}),
                                     ([("currency", 1)], {"sparse": True}),
                                     ([("currency", 1), ("paid_at", 1)], {})]
        shop.indexes["orders"] += [([("status", 1), ("customer_id", 1), ("placed_at", 1)],
                                    {"partialFilterExpression": {"status": "PAID"}})]
        if self.lab.backend.supports(Capability.COLLATION):
            shop.indexes["orders"] += [([("customer_copy.name", 1)], {"name": "customer_any_case",
                                                                      "collation": {"locale": "en", "strength": 1}}),
                                       ([("customer_copy.name", 1), ("placed_at", -1)], {})]

    @staticmethod
    def _near_prefixes(shop) -> None:
        """Two indexes with a longer one's first fields in another direction or order: no prefix, they stay."""
        shop.indexes["orders"] = [*shop.indexes["orders"],
                                  ([("status", 1), ("placed_at", -1), ("total_pence", 1)], {}),
                                  ([("status", 1), ("placed_at", 1)], {"name": "by_status_oldest"}),
                                  ([("customer_id", 1), ("status", 1), ("total_pence", 1)], {}),
                                  ([("status", 1), ("customer_id", 1)], {"name": "by_status_and_customer"})]
        shop.indexes["payments"] = [([("order_id", 1)], {"unique": True}),
                                    ([("order_id", 1), ("paid_at", -1)], {})]

    def reads_before(self, db: Any) -> dict:
        """The shop's reads of the indexed collections."""
        return {
            "orders_of_customer": [d["_id"] for d in db.orders.find({"customer_id": 11}, {"_id": 1})
                                   .sort("placed_at", -1).limit(5)],
            "category_page": [d["_id"] for d in db.products.find({"category": "kitchen"}, {"_id": 1})
                              .sort("price_pence", 1).limit(10)],
            "payments_of_order": [d["_id"] for d in db.payments.find({"order_id": 5}, {"_id": 1}).sort("_id", 1)],
        }

    reads_after = reads_before

    def _expected(self, run) -> dict[str, set[str]]:
        """collection -> the index names that must remain."""
        from course.audit.indexes import indexes_of
        from course.audit.redundant_index import covering
        from course.audit.snapshot import CollectionSnapshot

        keep = {}
        for name, specs in sorted(run.seeded.indexes.items()):
            infos = {}
            for keys, options in [([("_id", 1)], {"name": "_id_"})] + list(specs):
                index = options.get("name") or "_".join(f"{f}_{d}" for f, d in keys)
                infos[index] = {"key": list(keys), **{k: v for k, v in options.items() if k != "name"}}
            parsed = indexes_of(CollectionSnapshot(name, 0, [], "all", infos))
            keep[name] = {i for i, info in parsed.items()
                          if not any(covering(info, other) for other in parsed.values()
                                     if len(other.keys) > len(info.keys))}
        return keep

    def _dropped(self, answer, variant):
        run = self.run(answer, variant)
        self.check_audit(run, ": drop every index whose keys begin another index of the same collection")

    def _kept(self, answer, variant):
        run = self.run(answer, variant)
        now = _keys(run.db)
        for name, wanted in self._expected(run).items():
            missing = sorted(wanted - set(now.get(name, {})))
            if missing:
                raise Incorrect(f"{name} lost index {missing[0]} ({self._what(run, name, missing[0])}), which is not "
                                "redundant: drop only a plain index whose keys are a prefix of a longer plain "
                                "index's with the same collation, and keep the longer one (a unique, TTL, sparse "
                                "or partial index is not plain, and neither is a prefix of a sparse or partial one)")
        self.check_reads(run)

    @staticmethod
    def _what(run, collection: str, index: str) -> str:
        """The seeded index ``index`` of ``collection`` in words: its keys and the options it was created with."""
        for keys, options in run.seeded.indexes.get(collection, []):
            if (options.get("name") or "_".join(f"{f}_{d}" for f, d in keys)) == index:
                extra = ", ".join(f"{k}" for k in options if k != "name")
                return f"keys {[list(k) for k in keys]}" + (f", {extra}" if extra else "")
        return "keys [['_id', 1]]"

    @visible(points=2, checks="dropped")
    def audit_reports_no_redundant_index(self, answer):
        """The legacy shop: no redundant index is reported (one in orders, one in products with a name of its own)"""
        self._dropped(answer, LEGACY)

    @visible(points=2, checks="kept")
    def keeps_every_other_index(self, answer):
        """The legacy shop: the covering index, every other index and the prefixes a TTL, sparse, partial or
        collation option sets apart stay; the reads give the same answers"""
        self._kept(answer, LEGACY)

    @hidden(points=1, checks="dropped")
    def drops_one_with_its_own_name(self, answer):
        """Another shop: a redundant index named by_category in products is dropped too"""
        self._dropped(answer, ELSEWHERE)

    @hidden(points=1, checks="kept")
    def keeps_a_unique_prefix(self, answer):
        """Another shop: a unique index that is a prefix of another stays, and so do indexes with the same
        fields as a longer one's first ones in another order or direction, and prefixes set apart by an option"""
        self._kept(answer, ELSEWHERE)
