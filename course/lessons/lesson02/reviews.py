"""Exercise 02.2, make the embed safe: a bounded copy of the newest reviews, kept by one update.

add_review is run many times past the bound, and once with a competing review injected between a
read and a write.  The reviews arrive in the order of ``at``, as the statement says, but their ``_id``s do
not follow it (the newest review has the smallest): "newest" is the order of arrival, which an order of
the ``_id``s, either way, does not give.
"""

from __future__ import annotations

from course.datasets.orders import RECENT_REVIEWS, reviews
from course.engine.exercise import Exercise, Incorrect, hidden, visible
from course.lessons.lesson02.checks import field_difference, seed_products, shown
from course.engine.recording import RecordingDatabase


class RecentReviews(Exercise):
    id = "02.2"
    title = "Make the embed safe: a bounded copy of the newest reviews"
    answers = ("add_review",)
    requirements = {
        "stored": "every review is stored in db.reviews, with its product_id",
        "bound": f"the product's recent_reviews holds the RECENT_REVIEWS ({RECENT_REVIEWS}) newest reviews "
                 "(all of them while there are fewer), each a copy with the review's _id",
        "order": "recent_reviews lists the newest review first",
        "one_update": "each add_review changes the product with one update (no read-modify-write: a review "
                      "added by someone else meanwhile is never lost) and changes no other product",
    }
    hints = (
        "Reviews grow without bound: every review is its own document in db.reviews, with its product_id.",
        f"The product embeds only the {RECENT_REVIEWS} newest: one update_one with $push and the modifiers "
        "$each, $position 0 (newest first) and $slice.",
        "Never read the product, change the list in Python and write it back: two concurrent reviews would "
        "lose one of them.",
    )
    solution_code = """
RECENT_REVIEWS = 10

def add_review(db, product_id, review):
    \"\"\"Store the review; keep the product's RECENT_REVIEWS newest reviews embedded, newest first.\"\"\"
    review = {**review, "product_id": product_id}
    db.reviews.insert_one(review)
    db.products.update_one(
        {"_id": product_id},
        {"$push": {"recent_reviews": {"$each": [review], "$position": 0, "$slice": RECENT_REVIEWS}}},
    )
"""

    def _database(self):
        db = self.lab.scratch()
        db.products.insert_many(seed_products(4))
        return db

    @staticmethod
    def _arriving(product_id, count, first_id=1) -> list[dict]:
        """``count`` reviews of one product in the order they arrive (of ``at``), oldest first, whose ``_id``s
        are those of ``reviews`` turned by one: the newest has the smallest, the others rise with ``at``.  So
        neither order of the ``_id``s is the order of arrival, past two reviews: an older review has a larger
        ``_id`` than the newest, and the oldest a smaller one than the rest."""
        added = reviews(product_id, count, first_id=first_id)
        turned = [added[(k + 1) % count]["_id"] for k in range(count)]
        return [{**review, "_id": review_id, "text": f"Review {review_id} of product {product_id}"}
                for review, review_id in zip(added, turned)]

    def _add(self, answer, db, product_id, count, first_id=1) -> list[dict]:
        """Add ``count`` reviews of one product, oldest first; return them as stored (with product_id)."""
        added = self._arriving(product_id, count, first_id=first_id)
        for review in added:
            self.call("add_review", answer.add_review, db, product_id,
                      {k: v for k, v in review.items() if k != "product_id"})
        return added

    def _recent_ids(self, db, product_id, what, strict: bool = True) -> list | None:
        """The review ids in the product's recent_reviews.

        A list of another form fails only where ``strict`` (the bound's check, which names it); the other
        checks get None and judge nothing, so one mistake costs one requirement.
        """
        recent = (db.products.find_one({"_id": product_id}) or {}).get("recent_reviews")
        if not isinstance(recent, list):
            if not strict:
                return None
            raise Incorrect(f"{what}, product {product_id} should embed a recent_reviews list; it has "
                            f"{shown(recent)}")
        for position, item in enumerate(recent):
            if not isinstance(item, dict) or "_id" not in item:
                if not strict:
                    return None
                raise Incorrect(f"{what}, entry {position} of product {product_id}'s recent_reviews is "
                                f"{shown(item)}: each entry is a copy of a review, with the review's _id")
        return [item["_id"] for item in recent]

    def _expect_stored(self, db, product_id, added, what) -> None:
        stored = {doc["_id"]: doc for doc in db.reviews.find({"_id": {"$in": [r["_id"] for r in added]}})}
        for review in added:
            doc = stored.get(review["_id"])
            if doc is None:
                raise Incorrect(f"{what}, review {review['_id']} is not in db.reviews: every review is stored "
                                "there, the product only embeds a copy of the newest")
            difference = field_difference(review, doc)
            if difference:
                raise Incorrect(f"{what}, review {review['_id']} in db.reviews {difference}")

    def _expect_newest(self, db, product_id, added, what) -> None:
        got = self._recent_ids(db, product_id, what)
        newest = [r["_id"] for r in added][-RECENT_REVIEWS:]
        if len(got) > RECENT_REVIEWS:
            raise Incorrect(f"{what}, product {product_id} embeds {len(got)} reviews: keep only the "
                            f"{RECENT_REVIEWS} newest, or the product grows with every review")
        missing = [i for i in reversed(newest) if i not in got]
        extra = [i for i in got if i not in newest]
        day = {r["_id"]: r["at"] for r in added}
        if missing:
            raise Incorrect(f"{what}, recent_reviews should hold the {len(newest)} newest reviews; it lacks "
                            f"review {missing[0]} (at {day[missing[0]]})")
        if extra:
            raise Incorrect(f"{what}, recent_reviews holds review {shown(extra[0])}"
                            f"{f' (at {day[extra[0]]})' if extra[0] in day else ''}, which is not one of the "
                            f"{len(newest)} newest")
        if len(got) != len(newest):
            raise Incorrect(f"{what}, recent_reviews holds {len(got)} entries for the {len(newest)} newest "
                            "reviews: each review once")

    def _expect_newest_first(self, db, product_id, added, what) -> None:
        got = self._recent_ids(db, product_id, what, strict=False) or []
        arrival = {r["_id"]: k for k, r in enumerate(added)}
        day = {r["_id"]: r["at"] for r in added}
        known = [i for i in got if i in arrival]
        for earlier, later in zip(known, known[1:]):
            if arrival[earlier] < arrival[later]:
                raise Incorrect(f"{what}, recent_reviews lists review {earlier} (at {day[earlier]}) before review "
                                f"{later} (at {day[later]}), which was added after it: keep the newest first")

    @visible(points=1, checks="stored")
    def stores_every_review(self, answer):
        """Every review is stored in db.reviews with its product_id"""
        db = self._database()
        self._expect_stored(db, 1, self._add(answer, db, 1, 3), "after 3 reviews of product 1")

    @hidden(points=1, checks="stored")
    def stores_many_reviews(self, answer):
        """Far past the bound, every review is still stored"""
        db = self._database()
        self._expect_stored(db, 3, self._add(answer, db, 3, 3 * RECENT_REVIEWS), "after 30 reviews of product 3")

    @visible(points=2, checks="bound")
    def embeds_only_the_newest(self, answer):
        """Past the bound, the product embeds the newest RECENT_REVIEWS reviews and no others"""
        db = self._database()
        added = self._add(answer, db, 1, RECENT_REVIEWS + 5)
        self._expect_newest(db, 1, added, f"after {RECENT_REVIEWS + 5} reviews of product 1")

    @hidden(points=1, checks="bound")
    def bound_at_the_edges(self, answer):
        """Exactly RECENT_REVIEWS reviews are all kept; one more drops the oldest; 25 keep ten"""
        db = self._database()
        for product_id, count in ((2, RECENT_REVIEWS), (3, RECENT_REVIEWS + 1), (4, 2 * RECENT_REVIEWS + 5)):
            added = self._add(answer, db, product_id, count, first_id=100 * product_id)
            self._expect_newest(db, product_id, added, f"after {count} reviews of product {product_id}")

    @visible(points=1, checks="order")
    def newest_first(self, answer):
        """recent_reviews lists the newest review first"""
        db = self._database()
        added = self._add(answer, db, 1, 3)
        self._expect_newest_first(db, 1, added, "after 3 reviews of product 1")

    @hidden(points=1, checks="order")
    def newest_first_past_the_bound(self, answer):
        """Newest first still holds once the oldest are dropped"""
        db = self._database()
        added = self._add(answer, db, 2, RECENT_REVIEWS + 2)
        self._expect_newest_first(db, 2, added, f"after {RECENT_REVIEWS + 2} reviews of product 2")

    @visible(points=1, checks="one_update")
    def one_update_of_the_product(self, answer):
        """Each review is one update of its product, and no other product changes"""
        db = self._database()
        others = {p["_id"]: p for p in db.products.find({"_id": {"$ne": 1}})}
        watched = RecordingDatabase(db)
        self.call("add_review", answer.add_review, watched, 1, {"_id": 50, "stars": 4, "text": "ok", "at": 1})
        writes = [w for w in watched.updates() if w.collection == "products"]
        if len(writes) != 1:
            made = ", ".join(w.via or w.method for w in writes) or "no write"
            raise Incorrect(f"add_review made {len(writes)} writes to db.products ({made}): push the review and "
                            "trim the list in one update, so no reader sees the list unbounded")
        for product_id, product in others.items():
            if db.products.find_one({"_id": product_id}) != product:
                raise Incorrect(f"reviewing product 1 changed product {product_id}: filter the update on the "
                                "product's _id")

    @visible(points=2, checks="one_update")
    def concurrent_add_review(self, answer):
        """Another review lands between your read and your write: it is not lost"""
        db = self._database()
        existing = reviews(1, RECENT_REVIEWS)
        db.reviews.insert_many([dict(r) for r in existing])
        db.products.update_one({"_id": 1}, {"$set": {"recent_reviews": [dict(r) for r in reversed(existing)]}})
        theirs, mine = ({**review, "at": review["_id"]} for review in reviews(1, 2, first_id=RECENT_REVIEWS + 1))

        def competing_add_review():
            db.reviews.insert_one(dict(theirs))
            db.products.update_one({"_id": 1}, {"$push": {"recent_reviews": {
                "$each": [dict(theirs)], "$position": 0, "$slice": RECENT_REVIEWS}}})

        watched = RecordingDatabase(db, race=competing_add_review)
        self.call("add_review", answer.add_review, watched, 1, {k: v for k, v in mine.items() if k != "product_id"})
        got = self._recent_ids(db, 1, "with a competing review", strict=False)
        if not watched.raced or got is None:  # no read before the write: nothing raced
            return
        if theirs["_id"] not in got:
            raise Incorrect(f"another review ({theirs['_id']}) was added between your read and your write, and your "
                            "write lost it: you wrote back a list computed from what you had read, which no "
                            "longer was the list in the database")
        if mine["_id"] not in got:
            raise Incorrect(f"another review was added between your read and your write, and your own review "
                            f"({mine['_id']}) is not embedded: the list changed under you and your write did not "
                            "happen, though the product had room for it")
