"""Lesson 06, exercise 06.4: one collection per tenant merged into one collection with a tenant field.

The checks seed the shop's ``carts_<tenant>`` collections, call
``merge_tenants(db)`` and rerun the audit's ``too_many_collections``; the
hidden check has other tenants, with other numbers of carts.
"""

from __future__ import annotations

from typing import Any

from course.datasets.legacy_shop import TENANT_INDEX
from course.engine.exercise import Incorrect, LearnerCodeError, hidden, visible
from course.lessons.lesson06.shop import Repair, Variant, by_id, first_change

PREFIX = "carts_"
LEGACY = Variant("legacy", tweak="_an_underscore_tenant")
#: the legacy shop's tenant whose name the visible checks give an underscore (carts_umbrella_corp)
_UNDERSCORED = ("umbrella", "umbrella_corp")
OTHERS = Variant("other tenants", (("seed", 12),), tweak="_other_tenants")
_RENAMED = {"acme": "wonka", "globex": "stark", "hooli": "tyrell", "initech": "cyberdyne_systems"}
_USERS = (1, 3, 12, 20)
_RENAME = ("merge_tenants renamed a carts_<tenant> collection (or tried to): renaming is not allowed; copy the "
           "carts into db.carts instead (a renamed collection leaves its index " + TENANT_INDEX + " on db.carts)")


def tenants_of(shop) -> list[str]:
    """The tenants the seeded shop has a carts collection for."""
    return sorted(name[len(PREFIX):] for name in shop.collections if name.startswith(PREFIX))


class MergeTenants(Repair):
    id = "06.4"
    title = "One collection per tenant: merge them, the tenant a field"
    answers = ("merge_tenants",)
    function = "merge_tenants"
    kind = "too_many_collections"
    collections = ("carts_*",)
    requirements = {
        "merged": "every cart of every carts_<tenant> collection is copied into db.carts, as it was plus a field "
                  "tenant holding the name after carts_ (copied, not renamed: no collection is renamed); none "
                  "lost, none twice; the cart reads by tenant and user give the answers they gave on the "
                  "tenant's own collection",
        "dropped": "the carts_<tenant> collections are dropped: the audit no longer reports too_many_collections",
        "index": "db.carts has an index on {tenant: 1, user_id: 1}, for the cart read",
        "twice": "running it a second time raises nothing and changes nothing",
    }
    hints = (
        "db.list_collection_names() gives the names; the tenant is name[len('carts_'):]. Copy each collection's "
        "carts into db.carts with {'tenant': tenant} added, then drop the old collection.",
        "insert_many([{**cart, 'tenant': tenant} for cart in db[name].find()]) keeps each cart's _id. Copy first, "
        "drop after, so a failure in between loses nothing. Do not rename a collection (rename, renameCollection): "
        "the statement asks for a copy, and the grader's database refuses renames.",
        "db.carts.create_index([('tenant', 1), ('user_id', 1)]) serves find_one({'tenant': ..., 'user_id': ...}); "
        "creating an index that exists already does nothing.",
    )
    solution_code = """
def merge_tenants(db):
    \"\"\"Move every carts_<tenant> collection into db.carts, the tenant a field, and drop the old ones.\"\"\"
    for name in db.list_collection_names():
        if name.startswith("carts_"):
            tenant = name[len("carts_"):]
            carts = [{**cart, "tenant": tenant} for cart in db[name].find()]
            if carts:
                db.carts.insert_many(carts)
            db[name].drop()
    db.carts.create_index([("tenant", 1), ("user_id", 1)])
"""

    @staticmethod
    def _an_underscore_tenant(shop) -> None:
        """The legacy shop, one tenant's name holding an underscore (its tenant is all the name after carts_)."""
        old, new = _UNDERSCORED
        shop.collections[PREFIX + new] = [{**c, "_id": f"{new}-{c['user_id']}"}
                                          for c in shop.collections.pop(PREFIX + old)]
        for table in (shop.indexes, shop.validators):
            if PREFIX + old in table:
                table[PREFIX + new] = table.pop(PREFIX + old)

    @staticmethod
    def _other_tenants(shop) -> None:
        """Four tenants with other names (one with an underscore in it), one of them with fewer carts."""
        for old, new in _RENAMED.items():
            carts = shop.collections.pop(PREFIX + old)
            if new == "stark":
                carts = carts[:7]
            shop.collections[PREFIX + new] = [{**c, "_id": f"{new}-{c['user_id']}"} for c in carts]
            shop.indexes[PREFIX + new] = shop.indexes.pop(PREFIX + old)
            if PREFIX + old in shop.validators:
                shop.validators[PREFIX + new] = shop.validators.pop(PREFIX + old)

    def reads_before(self, db: Any) -> dict:
        """Each tenant's carts counted, and a few users' carts, from the tenant's own collection."""
        reads = {}
        for name in sorted(n for n in db.list_collection_names() if n.startswith(PREFIX)):
            tenant = name[len(PREFIX):]
            reads[f"{tenant} carts"] = db[name].count_documents({})
            for user in _USERS:
                reads[f"{tenant} cart of user {user}"] = db[name].find_one({"user_id": user}, {"items": 1})
        return reads

    def reads_after(self, db: Any) -> dict:
        """The same reads from db.carts, by tenant."""
        reads = {}
        for tenant in tenants_of(self._seeding):
            reads[f"{tenant} carts"] = db.carts.count_documents({"tenant": tenant})
            for user in _USERS:
                reads[f"{tenant} cart of user {user}"] = db.carts.find_one({"tenant": tenant, "user_id": user},
                                                                           {"items": 1})
        return reads

    def seed(self, variant):
        """Seed, and remember what was seeded (the reads after need the tenants)."""
        db, shop = super().seed(variant)
        self._seeding = shop
        return db, shop

    def repair(self, answer, db):
        """Call the learner's function; a rename refused by the graded relay is the same verdict as one seen here."""
        try:
            return super().repair(answer, db)
        except LearnerCodeError as error:
            said = str(error) + " " + (error.raised.message if error.raised is not None else "")
            if "renameCollection" in said or "rename()" in said:
                # the graded relay refuses renameCollection; an engine whose rename lacks one of pymongo's
                # options (mongoeco's has no dropTarget) raises TypeError: either way the answer renamed
                raise Incorrect(_RENAME) from None
            raise

    def run(self, answer, variant):
        """The shared run; a renamed collection fails every assertion, as the graded relay's refusal does."""
        run = super().run(answer, variant)
        if TENANT_INDEX in run.db.carts.index_information():
            raise Incorrect(_RENAME)
        return run

    def _merged(self, answer, variant):
        run = self.run(answer, variant)
        wanted = {}
        for tenant in tenants_of(run.seeded):
            for cart in run.seeded.collections[PREFIX + tenant]:
                wanted[cart["_id"]] = {**cart, "tenant": tenant}
        found = by_id(run.db.carts)
        ids = [c.get("_id") for c in found]
        twice = sorted({i for i in ids if ids.count(i) > 1}, key=repr)
        if twice:
            raise Incorrect(f"db.carts holds cart {twice[0]!r} more than once: copy each cart once")
        lost = sorted(set(wanted) - set(ids))
        strangers = [i for i in ids if i not in wanted]
        if lost and strangers:
            raise Incorrect(f"db.carts holds {len(ids)} carts, {len(strangers)} of them under an _id no tenant's cart "
                            f"had ({strangers[0]!r} among them), and {len(lost)} of the {len(wanted)} carts' own _ids "
                            f"are missing (cart {lost[0]!r} among them): copy each cart with its _id")
        if lost:
            raise Incorrect(f"{len(lost)} of {len(wanted)} carts are not in db.carts (cart {lost[0]!r} among them): "
                            "copy every cart of every carts_<tenant> collection")
        for cart in found:
            if cart["_id"] not in wanted:
                raise Incorrect(f"db.carts holds {cart['_id']!r}, which no tenant had")
            difference = first_change(wanted[cart["_id"]], cart)
            if difference:
                advice = "the tenant is the name after carts_" if difference.startswith("tenant") \
                    else "copy the cart as it was, adding only tenant"
                raise Incorrect(f"cart {cart['_id']!r} in db.carts is not the tenant's cart plus its tenant "
                                f"({difference}): {advice}")
        self.check_reads(run, ": each cart keeps its fields and gains tenant")

    def _dropped(self, answer, variant):
        run = self.run(answer, variant)
        left = sorted(n for n in run.db.list_collection_names() if n.startswith(PREFIX))
        if left:
            raise Incorrect(f"{', '.join(left)} still exist: drop each carts_<tenant> collection once its carts "
                            "are copied")
        self.check_audit(run, "")

    def _index(self, answer, variant):
        run = self.run(answer, variant)
        keys = [[list(p) for p in info["key"]] for info in run.db.carts.index_information().values()]
        if [["tenant", 1], ["user_id", 1]] not in keys:
            raise Incorrect(f"db.carts has no index on {{tenant: 1, user_id: 1}} (its indexes: {keys}): the cart read "
                            "filters on both, tenant first")

    @visible(points=2, checks="merged")
    def every_cart_merged(self, answer):
        """The legacy shop, carts_umbrella_corp among its tenants: every cart in db.carts with its tenant; same reads"""
        self._merged(answer, LEGACY)

    @visible(points=1, checks="dropped")
    def tenant_collections_dropped(self, answer):
        """The legacy shop: the per-tenant collections are gone, and the audit reports none"""
        self._dropped(answer, LEGACY)

    @visible(points=1, checks="index")
    def carts_indexed_by_tenant_and_user(self, answer):
        """db.carts has an index on {tenant: 1, user_id: 1}"""
        self._index(answer, LEGACY)

    @visible(points=1, checks="twice")
    def second_run_changes_nothing(self, answer):
        """A second run raises nothing and changes nothing"""
        self.check_twice(answer, LEGACY, ": on a second run there is no carts_<tenant> left, and db.carts must stay "
                                         "as it is")

    @hidden(points=1, checks="merged")
    def other_tenants_merged(self, answer):
        """Other tenants (one with an underscore in its name): every cart merged with its tenant"""
        self._merged(answer, OTHERS)

    @hidden(points=1, checks="dropped")
    def other_tenants_dropped(self, answer):
        """Other tenants: their collections are gone"""
        self._dropped(answer, OTHERS)

    @hidden(points=1, checks="index")
    def other_tenants_indexed(self, answer):
        """Other tenants: db.carts is indexed on {tenant: 1, user_id: 1}"""
        self._index(answer, OTHERS)

    @hidden(points=1, checks="twice")
    def other_tenants_twice(self, answer):
        """Other tenants: a second run changes nothing"""
        self.check_twice(answer, OTHERS, ": a second run must leave db.carts as it is")
