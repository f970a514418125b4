"""Lesson 04, exercise 04.4: bucket, stock events in capped daily buckets with their sums.

The cap is promised under concurrency, so one assertion runs the learner's write through a
:class:`~course.engine.recording.RecordingDatabase` whose race adds a competing event between the learner's
read and its write: a single guarded upsert keeps the cap, a read-then-push overshoots it.  Half-full
buckets are set up with one ``insert_many``, so only the writes under test go through learner code.
"""

from __future__ import annotations

import datetime

from course.datasets.patterns import BUCKET_CAP, DAY, stock_events
from course.engine.exercise import Exercise, Incorrect, hidden, visible
from course.lessons.lesson04.common import COMPARE, data, first_difference, seeded
from course.toolkit.matching import index_specs
from course.engine.recording import RecordingDatabase

BUCKET_KEY = ("tenantId", "productId", "day")


def _sums(events: list[dict]) -> dict:
    incoming = sum(e["qty"] for e in events if e["type"] == "IN")
    outgoing = sum(e["qty"] for e in events if e["type"] == "OUT")
    return {"count": len(events), "sumIn": incoming, "sumOut": outgoing}


def _bucket(tenant_id: str, product_id: int, events: list[dict], day=DAY) -> dict:
    """A bucket document as the statement describes it, for set-up data."""
    return {"tenantId": tenant_id, "productId": product_id, "day": day, "events": events, **_sums(events)}


class Bucket(Exercise):
    id = "04.4"
    title = "Bucket: stock events in capped daily buckets with their sums"
    answers = ("record_stock_event", "create_bucket_index")
    requirements = {
        "bucket": "the events of one tenant, product and day go into its open bucket {tenantId, productId, day, "
                  f"events, ...}}, as given; a new bucket opens only when the open one holds {BUCKET_CAP}",
        "cap": f"a bucket never holds more than {BUCKET_CAP} events, and no event is lost",
        "sums": "each bucket's count, sumIn and sumOut match its events (sumIn adds the IN quantities, sumOut "
                "the OUT ones)",
        "concurrent": "the cap holds when another event reaches the open bucket between your read and your "
                      "write: check and write in one update",
        "index": "create_bucket_index(db) creates an index on db.stock_events whose first three keys are "
                 "tenantId, productId and day, in any order",
    }
    hints = (
        "One update_one with upsert=True: filter on tenantId, productId, day and count < BUCKET_CAP.",
        "$push the event, and $inc count by 1 and sumIn or sumOut by the quantity (the other by 0).",
        "When the newest bucket is full the filter matches nothing, so the upsert creates the next bucket. "
        "The index: tenantId, productId, day.",
    )
    solution_code = """
def record_stock_event(db, tenant_id, product_id, day, event):
    \"\"\"Add one stock event to the product's open bucket for that day, opening a new one when full.\"\"\"
    incoming = event["qty"] if event["type"] == "IN" else 0
    outgoing = event["qty"] if event["type"] == "OUT" else 0
    db.stock_events.update_one(
        {"tenantId": tenant_id, "productId": product_id, "day": day, "count": {"$lt": BUCKET_CAP}},
        {"$push": {"events": event}, "$inc": {"count": 1, "sumIn": incoming, "sumOut": outgoing}},
        upsert=True,
    )


def create_bucket_index(db):
    \"\"\"The index the bucket upsert's filter needs.\"\"\"
    db.stock_events.create_index([("tenantId", 1), ("productId", 1), ("day", 1)])
"""

    def _feed(self, answer, db, events, tenant_id="t1", product_id=1, day=DAY):
        for event in events:
            self.call("record_stock_event", answer.record_stock_event, db, tenant_id, product_id, day, dict(event))

    @staticmethod
    def _buckets(db, tenant_id="t1", product_id=1, day=DAY) -> list[dict]:
        buckets = list(db.stock_events.find({"tenantId": tenant_id, "productId": product_id, "day": day}))
        for bucket in buckets:
            if not isinstance(bucket.get("events"), list):
                raise Incorrect(f"each bucket should hold its events in a list field events; one has "
                                f"{bucket.get('events')!r:.60}")
        return buckets

    def _check_one_bucket(self, db, events, tenant_id="t1", product_id=1, day=DAY):
        buckets = self._buckets(db, tenant_id, product_id, day)
        where = f"tenant {tenant_id}, product {product_id}, day {day:%Y-%m-%d}"
        if len(buckets) != 1:
            raise Incorrect(f"{len(events)} events of {where} should share one bucket (a new one opens only when "
                            f"the open one holds {BUCKET_CAP}); found {len(buckets)} bucket documents with "
                            f"tenantId, productId and day")
        difference = first_difference(events, buckets[0]["events"], "events", COMPARE)
        if difference:
            raise Incorrect(f"the bucket of {where} should hold its events as given, in order ({difference})")

    @visible(points=2, checks="bucket")
    def one_open_bucket(self, answer):
        """Twelve events of one product and day, six for each of two tenants: one bucket per tenant"""
        db = self.lab.scratch()
        events = data(stock_events, 12)
        for k, event in enumerate(events):
            self._feed(answer, db, [event], ("t1", "t2")[k % 2])
        self._check_one_bucket(db, events[0::2], "t1")
        self._check_one_bucket(db, events[1::2], "t2")

    @hidden(points=1, checks="bucket")
    def buckets_per_tenant_and_day(self, answer):
        """Interleaved events of two tenants and two days, and a bucket filled to exactly 50"""
        events = data(stock_events, 60, 8)
        db = seeded(self.lab, stock_events=[_bucket("t3", 5, events[:BUCKET_CAP - 3])])
        self._feed(answer, db, events[BUCKET_CAP - 3:BUCKET_CAP], "t3", 5)
        self._check_one_bucket(db, events[:BUCKET_CAP], "t3", 5)
        tomorrow = DAY + datetime.timedelta(days=1)
        keys = (("t1", 2, DAY), ("t2", 2, DAY), ("t1", 2, tomorrow))
        for k, event in enumerate(data(stock_events, 9, 3)):
            tenant_id, product_id, day = keys[k % 3]
            self._feed(answer, db, [event], tenant_id, product_id, day)
        interleaved = data(stock_events, 9, 3)
        for k, (tenant_id, product_id, day) in enumerate(keys):
            self._check_one_bucket(db, interleaved[k::3], tenant_id, product_id, day)

    def _check_cap(self, db, expected: int, tenant_id="t1", product_id=1):
        buckets = self._buckets(db, tenant_id, product_id)
        largest = max((len(b["events"]) for b in buckets), default=0)
        if largest > BUCKET_CAP:
            raise Incorrect(f"a bucket holds {largest} events: a bucket holds at most {BUCKET_CAP}, and the next "
                            "event opens a new bucket")
        stored = sum(len(b["events"]) for b in buckets)
        if stored != expected:
            raise Incorrect(f"{expected} events were recorded, but the buckets hold {stored}")

    @visible(points=2, checks="cap")
    def full_bucket_opens_the_next(self, answer):
        """A bucket with 48 events, five more: none holds more than 50"""
        events = data(stock_events, 53, 5)
        db = seeded(self.lab, stock_events=[_bucket("t1", 1, events[:48])])
        self._feed(answer, db, events[48:])
        self._check_cap(db, 53)

    @hidden(points=1, checks="cap")
    def cap_with_partial_buckets(self, answer):
        """A full and a nearly full bucket (two writers raced earlier), three more: still at most 50"""
        events = data(stock_events, 102, 6)
        db = seeded(self.lab, stock_events=[_bucket("t1", 3, events[:50]), _bucket("t1", 3, events[50:99])])
        self._feed(answer, db, events[99:], product_id=3)
        self._check_cap(db, 102, product_id=3)

    def _check_sums(self, db, tenant_id="t1", product_id=1):
        for bucket in self._buckets(db, tenant_id, product_id):
            want = _sums(bucket["events"])
            for field in ("count", "sumIn", "sumOut"):
                if bucket.get(field) != want[field]:
                    says = f"says {field} {bucket[field]!r}" if field in bucket else f"has no field {field}"
                    raise Incorrect(f"a bucket holding {want['count']} events {says}, "
                                    f"but its events give {want[field]}: a bucket's count and sums always agree with "
                                    "the events it holds")

    @visible(points=2, checks="sums")
    def sums_match_the_events(self, answer):
        """Twelve mixed events; a product with OUT events only, one with IN events only: the sums match"""
        db = self.lab.scratch()
        self._feed(answer, db, data(stock_events, 12))
        self._check_sums(db)
        for product_id, kind in ((2, "OUT"), (3, "IN")):
            self._feed(answer, db, [{**event, "type": kind} for event in data(stock_events, 3, 7)],
                       product_id=product_id)
            self._check_sums(db, product_id=product_id)

    @hidden(points=1, checks="sums")
    def sums_across_buckets(self, answer):
        """Across a full bucket and a new one, every bucket's sums match its events"""
        events = data(stock_events, 53, 5)
        db = seeded(self.lab, stock_events=[_bucket("t1", 1, events[:48])])
        self._feed(answer, db, events[48:])
        self._check_sums(db)

    def _check_race(self, answer, tenant_id: str, product_id: int):
        events = data(stock_events, 51, 11)
        db = seeded(self.lab, stock_events=[_bucket(tenant_id, product_id, events[:49])])
        competing = events[49]

        def another_event():
            db.stock_events.update_one(
                {"tenantId": tenant_id, "productId": product_id, "day": DAY, "count": {"$lt": BUCKET_CAP}},
                {"$push": {"events": competing}, "$inc": {k: v for k, v in _sums([competing]).items()}},
                upsert=True)

        watched = RecordingDatabase(db, race=another_event)
        self.call("record_stock_event", answer.record_stock_event, watched, tenant_id, product_id, DAY,
                  dict(events[50]))
        if not watched.raced:
            return  # no write followed a read: nothing another client could slip in between
        largest = max((len(b.get("events") or []) for b in db.stock_events.find()), default=0)
        if largest > BUCKET_CAP:
            raise Incorrect(f"another event reached the open bucket (49 events) at once, between your read and your "
                            f"write, and the bucket ended with {largest}: the cap must hold while other events "
                            "arrive, which a read of the count followed by a separate write cannot ensure")

    @visible(points=2, checks="concurrent")
    def cap_holds_under_a_race(self, answer):
        """Another event reaches the open bucket between your read and your write: the cap holds"""
        self._check_race(answer, "t1", 1)

    @hidden(points=1, checks="concurrent")
    def cap_holds_under_a_race_elsewhere(self, answer):
        """The same race on another tenant's product"""
        self._check_race(answer, "t2", 4)

    @visible(points=1, checks="index")
    def the_upsert_has_its_index(self, answer):
        """An index led by tenantId, productId and day serves the upsert's filter"""
        db = self.lab.scratch()
        self.call("create_bucket_index", answer.create_bucket_index, db)
        specs = index_specs(db.stock_events)
        if not any(set(spec.fields[:3]) == set(BUCKET_KEY) for spec in specs.values()):
            found = ", ".join(str(list(spec.fields)) for spec in specs.values()) or "none"
            raise Incorrect("create an index on db.stock_events whose first three keys are tenantId, productId and "
                            f"day: the upsert matches them every time; its indexes: {found}")
