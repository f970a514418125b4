"""Lesson 07, exercise 07.3: archive, cold orders moved out in a batch, and sessions that expire by TTL.

The rerun requirement is checked after a half-done run: some orders already copied into the archive
but not yet deleted from ``db.orders``, as a batch that failed between its two writes leaves them.  The
count is checked on an archive that already holds the orders of an earlier run (archived for good, gone
from ``db.orders``), so the number deleted and the size of the archive differ.
"""

from __future__ import annotations

import datetime

from course.datasets.more_patterns import CUTOFF, SESSION_TTL, archive_orders
from course.engine.exercise import Exercise, Incorrect, LearnerCodeError, LearnerRaised, hidden, visible
from course.lessons.lesson04.common import COMPARE, by_id, data, first_difference, is_int, seeded
from course.lessons.lesson06.text import clipped


#: orders an earlier run archived (in db.orders_archive only): a year older than the seeded ones
EARLIER_RUN = tuple({"_id": 900 + i, "customerId": i, "placedAt": datetime.datetime(2025, 3, 2 + 7 * i),
                     "status": "DELIVERED", "total": 100_000 * i} for i in range(1, 4))


class Archive(Exercise):
    id = "07.3"
    title = "Archive: move cold orders out, let sessions expire"
    answers = ("archive_before", "create_session_ttl")
    requirements = {
        "moved": "every order placed before cutoff ends up in db.orders_archive, whole and under its own _id, "
                 "and is no longer in db.orders",
        "kept": "orders placed at or after cutoff stay in db.orders as they were, and are not archived",
        "rerun": "a run after one that copied some orders but failed before deleting them raises no error, and "
                 "leaves every order placed before cutoff in db.orders_archive",
        "count": "archive_before returns the number of orders this call deleted from db.orders, an int (the "
                 "archive may already hold the orders of earlier runs)",
        "ttl": f"create_session_ttl makes a TTL index on db.sessions' lastSeenAt that expires a session "
               f"{SESSION_TTL:,} seconds (30 days) after it",
    }
    hints = (
        "Find the cold orders with {'placedAt': {'$lt': cutoff}}; write each into the archive, then delete them.",
        "For a safe rerun, write with replace_one(..., upsert=True) (or $merge): an order already copied is "
        "replaced, not inserted twice.",
        "Delete by the ids you copied: delete_many({'_id': {'$in': ids}}).deleted_count is the count.",
        "create_index('lastSeenAt', expireAfterSeconds=...) makes a TTL index.",
    )
    solution_code = """
def archive_before(db, cutoff):
    \"\"\"Move the orders placed before cutoff into db.orders_archive; return how many moved.\"\"\"
    cold = list(db.orders.find({"placedAt": {"$lt": cutoff}}))
    for order in cold:
        db.orders_archive.replace_one({"_id": order["_id"]}, order, upsert=True)
    ids = [order["_id"] for order in cold]
    return db.orders.delete_many({"_id": {"$in": ids}}).deleted_count


def create_session_ttl(db):
    \"\"\"Sessions expire SESSION_TTL seconds after lastSeenAt.\"\"\"
    db.sessions.create_index("lastSeenAt", expireAfterSeconds=SESSION_TTL)
"""

    def _archived(self, answer, cutoff, copied=0, earlier=()):
        """Run archive_before on seeded orders, ``copied`` of the cold ones already in the archive (a run that
        failed between its copy and its delete), and the ``earlier`` orders an earlier run archived; what it
        raised after a half-done run is returned, not raised."""
        orders = data(archive_orders)
        cold = [o for o in orders if o["placedAt"] < cutoff]
        db = seeded(self.lab, orders=orders, orders_archive=[dict(o) for o in earlier] + cold[:copied])
        returned = self.call("archive_before", answer.archive_before, db, cutoff, expect_raise=copied > 0)
        return db, orders, returned

    def _check_moved(self, db, orders, cutoff):
        archived = {o["_id"]: o for o in by_id(db.orders_archive)}
        for order in orders:
            if order["placedAt"] >= cutoff:
                continue
            if db.orders.find_one({"_id": order["_id"]}) is not None:
                raise Incorrect(f"order {order['_id']} (placed {order['placedAt']:%Y-%m-%d}, before the cutoff) is "
                                "still in db.orders: delete what you archived")
            if order["_id"] not in archived:
                raise Incorrect(f"order {order['_id']} (placed {order['placedAt']:%Y-%m-%d}, before the cutoff) is "
                                "not in db.orders_archive under its _id")
            difference = first_difference(order, archived[order["_id"]], words=COMPARE)
            if difference:
                raise Incorrect(f"order {order['_id']} in db.orders_archive differs from the order ({difference}): "
                                "archive it whole")

    @visible(points=2, checks="moved")
    def cold_orders_moved(self, answer):
        """Orders before 2026-06-01 are in the archive, whole, and gone from db.orders"""
        db, orders, _ = self._archived(answer, CUTOFF)
        self._check_moved(db, orders, CUTOFF)

    @hidden(points=1, checks="moved")
    def other_cutoff(self, answer):
        """Another cutoff, a few weeks later"""
        cutoff = CUTOFF + datetime.timedelta(days=30)
        db, orders, _ = self._archived(answer, cutoff)
        self._check_moved(db, orders, cutoff)

    def _check_kept(self, db, orders, cutoff):
        for order in orders:
            if order["placedAt"] < cutoff:
                continue
            stored = db.orders.find_one({"_id": order["_id"]})
            when = "exactly at" if order["placedAt"] == cutoff else "after"
            if stored is None:
                raise Incorrect(f"order {order['_id']} (placed {when} the cutoff) was removed from db.orders: only "
                                "orders placed before the cutoff are cold")
            if db.orders_archive.find_one({"_id": order["_id"]}) is not None:
                raise Incorrect(f"order {order['_id']} (placed {when} the cutoff) was copied into the archive: only "
                                "orders placed before the cutoff are cold")
            difference = first_difference(order, stored, words=COMPARE)
            if difference:
                raise Incorrect(f"order {order['_id']} in db.orders was changed ({difference})")

    @visible(points=1, checks="kept")
    def hot_orders_kept(self, answer):
        """Orders from the cutoff on stay, the one placed exactly at it too"""
        db, orders, _ = self._archived(answer, CUTOFF)
        self._check_kept(db, orders, CUTOFF)

    @hidden(points=1, checks="kept")
    def cutoff_before_everything(self, answer):
        """A cutoff before the first order: nothing moves"""
        cutoff = datetime.datetime(2026, 1, 1)
        db, orders, _ = self._archived(answer, cutoff)
        self._check_kept(db, orders, cutoff)

    def _check_rerun(self, answer, copied):
        orders = data(archive_orders)
        cold = [o for o in orders if o["placedAt"] < CUTOFF]
        db = seeded(self.lab, orders=orders, orders_archive=cold[:copied])
        raised = self.call("archive_before", answer.archive_before, db, CUTOFF, expect_raise=True)
        if isinstance(raised, LearnerRaised):
            raise Incorrect(f"after a run that copied {copied} orders and failed before deleting them, "
                            f"archive_before raised {raised.type_name}: a rerun must finish the job without an "
                            "error")
        missing = [o["_id"] for o in cold if db.orders_archive.count_documents({"_id": o["_id"]}) != 1]
        if missing:
            raise Incorrect(f"after the rerun, orders {missing} are not in db.orders_archive: a rerun must finish "
                            "the job")

    @visible(points=2, checks="rerun")
    def rerun_after_half_done(self, answer):
        """Three orders were copied by a run that failed before deleting: the rerun finishes"""
        self._check_rerun(answer, 3)

    @hidden(points=1, checks="rerun")
    def rerun_after_everything_copied(self, answer):
        """Every cold order was copied, none deleted: the rerun finishes"""
        self._check_rerun(answer, 99)

    def _check_count(self, answer, cutoff, copied=0):
        db, orders, returned = self._archived(answer, cutoff, copied, earlier=EARLIER_RUN)
        if isinstance(returned, LearnerRaised):
            return  # a rerun that raises returns no count: the rerun requirement fails, and says why
        want = sum(1 for o in orders if o["placedAt"] < cutoff)
        if not is_int(returned):
            raise Incorrect(f"archive_before should return the number of orders it deleted, an int; got "
                            f"{clipped(returned, 60)}")
        if returned != want:
            raise Incorrect(f"archive_before returned {returned}; it deleted {want} orders from db.orders (the "
                            f"archive held {len(EARLIER_RUN)} orders of an earlier run"
                            + (f" and {copied} that a failed run had copied" if copied else "")
                            + f", and holds {db.orders_archive.count_documents({})} now)")

    @visible(points=1, checks="count")
    def returns_count(self, answer):
        """It returns how many orders left db.orders, the archive holding an earlier run's orders and three a
        run that failed before deleting had copied"""
        self._check_count(answer, CUTOFF, copied=3)

    @hidden(points=1, checks="count")
    def count_other_cutoff(self, answer):
        """A cutoff a month later, and one before every order (0)"""
        self._check_count(answer, CUTOFF + datetime.timedelta(days=30))
        self._check_count(answer, datetime.datetime(2026, 1, 1))

    @hidden(points=1, checks="count")
    def count_after_half_done_run(self, answer):
        """A month later, after a run that copied five orders and failed before deleting: every order deleted"""
        self._check_count(answer, CUTOFF + datetime.timedelta(days=30), copied=5)

    def _check_ttl(self, answer, sessions):
        db = seeded(self.lab, sessions=sessions)
        try:
            self.call("create_session_ttl", answer.create_session_ttl, db)
        except LearnerCodeError as error:  # mongoeco refuses a compound TTL index; a server ignores its TTL
            if error.raised is not None and error.raised.is_a("OperationFailure") \
                    and "single-field" in error.raised.message:
                raise Incorrect("create_session_ttl made a compound index with expireAfterSeconds: a TTL index has "
                                "one field (a server ignores expireAfterSeconds on a compound index, and nothing "
                                "expires); make it on lastSeenAt alone") from None
            raise
        information = db.sessions.index_information()
        found = [(name, [f for f, _ in info["key"]], info.get("expireAfterSeconds"))
                 for name, info in information.items() if name != "_id_"]
        ttl = [item for item in found if item[1] == ["lastSeenAt"] and item[2] is not None]
        if not ttl:
            raise Incorrect(f"db.sessions should get a TTL index on lastSeenAt (create_index with "
                            f"expireAfterSeconds); its indexes are {[(f, e) for _, f, e in found] or 'only _id'}")
        if ttl[0][2] != SESSION_TTL:
            raise Incorrect(f"the TTL index expires sessions {ttl[0][2]!r} seconds after lastSeenAt; 30 days is "
                            f"{SESSION_TTL:,} seconds")

    @visible(points=2, checks="ttl")
    def ttl_index(self, answer):
        """db.sessions has a TTL index on lastSeenAt, 30 days"""
        self._check_ttl(answer, [{"_id": f"x{i}", "userId": i, "lastSeenAt": CUTOFF} for i in range(3)])

    @hidden(points=1, checks="ttl")
    def ttl_on_empty_collection(self, answer):
        """The TTL index is made before any session exists"""
        self._check_ttl(answer, [])
