"""Lesson 04, exercise 04.1: subset, the 10 newest reviews in the product and all of them in reviews.

The retry requirement is checked on data where a second call has something to do: at the cap (an
unguarded push would evict a review), for a review that left the 10 long ago (a guard on "not held yet"
alone lets it back in), and after a half-done call (the review stored, its summary not).
"""

from __future__ import annotations

from course.datasets.patterns import RECENT_REVIEWS, products, reviews_for
from course.engine.exercise import Incorrect, LearnerRaised, hidden, visible
from course.lessons.lesson04.common import COMPARE, SharedRuns, by_id, data, first_difference, keyed, ordered, seeded

SUMMARY_FIELDS = ("reviewId", "stars", "text", "at")


def _summary(review: dict) -> dict:
    return {"reviewId": review["_id"], **{field: review[field] for field in SUMMARY_FIELDS[1:]}}


def _handled(product_id: int, n: int, held: int) -> dict[str, list[dict]]:
    """Products and reviews as after add_review handled the first ``held`` of ``n`` reviews of a product."""
    found = products(8)
    done = reviews_for(product_id, n)[:held]
    found[product_id - 1]["recentReviews"] = [_summary(r) for r in reversed(done[-RECENT_REVIEWS:])] if done else []
    return {"products": found, "reviews": done}


# ---------------------------------------------------------------------------
class Subset(SharedRuns):
    id = "04.1"
    title = "Subset: the 10 newest reviews in the product, all of them in reviews"
    answers = ("add_review",)
    requirements = {
        "reviews": "every review is stored whole in db.reviews, under its own _id",
        "summary": "each entry of the product's recentReviews is {reviewId, stars, text, at} of its review, "
                   "nothing more",
        "cap": f"recentReviews holds the {RECENT_REVIEWS} newest reviews, never more",
        "order": "recentReviews is newest first",
        "retry": "calling add_review again with a review it already handled changes nothing, and a retry after "
                 "a call that stored the review but not its summary finishes the job",
    }
    hints = (
        "Two writes: store the whole review in db.reviews, then push its summary into the product.",
        "$push with $each: [summary], $sort: {'at': -1} and $slice: 10 keeps the 10 newest, newest first, "
        "even when a late retry brings back a review older than all of them.",
        "For a safe retry: upsert the review by its _id, and push only if the product does not hold it yet "
        "(filter on 'recentReviews.reviewId': {'$ne': review id}).",
    )
    solution_code = """
def add_review(db, review):
    \"\"\"Store a review in db.reviews and keep the product's 10 newest; safe to retry.\"\"\"
    db.reviews.update_one({"_id": review["_id"]}, {"$setOnInsert": review}, upsert=True)
    summary = {"reviewId": review["_id"], "stars": review["stars"], "text": review["text"], "at": review["at"]}
    db.products.update_one(
        {"_id": review["productId"], "recentReviews.reviewId": {"$ne": review["_id"]}},
        {"$push": {"recentReviews": {"$each": [summary], "$sort": {"at": -1}, "$slice": RECENT_REVIEWS}}},
    )
"""

    def _reviewed(self, answer, product_id: int, n: int, held: int = 0):
        """``n`` reviews of a product; the first ``held`` were handled already (set up), the rest go through
        add_review (once per evaluation: each assertion gets its own copy of the result)."""
        reviews = data(reviews_for, product_id, n)

        def run():
            db = seeded(self.lab, **data(_handled, product_id, n, held))
            for review in reviews[held:]:
                self.call("add_review", answer.add_review, db, dict(review))
            return db

        return self.replay((product_id, n, held), ("products", "reviews"), run), reviews

    def _held(self, db, product_id: int) -> list:
        product = db.products.find_one({"_id": product_id}) or {}
        held = product.get("recentReviews")
        if not isinstance(held, list):
            raise Incorrect(f"product {product_id} should keep its summaries in a list field recentReviews; "
                            f"it has {held!r:.60}")
        return held

    @staticmethod
    def _entry_ids(held: list, reviews: list[dict]) -> list:
        """The review each entry stands for: by reviewId, else by its date (each review has its own)."""
        by_at = {r["at"]: r["_id"] for r in reviews}
        ids = {r["_id"] for r in reviews}
        found = []
        for entry in held:
            entry = entry if isinstance(entry, dict) else {}
            if entry.get("reviewId") in ids:
                found.append(entry["reviewId"])
            elif entry.get("at") in by_at:
                found.append(by_at[entry["at"]])
            else:
                found.append(entry.get("_id"))
        return found

    def _check_stored(self, db, reviews):
        for review in reviews:
            stored = db.reviews.find_one({"_id": review["_id"]})
            if stored is None:
                raise Incorrect(f"db.reviews has no document with _id {review['_id']}: store every review there, "
                                "whole")
            difference = first_difference(review, stored, words=COMPARE)
            if difference:
                raise Incorrect(f"review {review['_id']} in db.reviews differs from the review given ({difference}): "
                                "store it whole, as it came")

    @visible(points=1, checks="reviews")
    def reviews_stored(self, answer):
        """Three reviews: each is stored whole in db.reviews"""
        db, reviews = self._reviewed(answer, 3, 3)
        self._check_stored(db, reviews)

    @hidden(points=1, checks="reviews")
    def many_reviews_stored(self, answer):
        """A product at the cap gets three more reviews: each is stored whole"""
        db, reviews = self._reviewed(answer, 7, 13, held=RECENT_REVIEWS)
        self._check_stored(db, reviews)

    def _check_summaries(self, db, product_id, reviews):
        by_id_ = {r["_id"]: r for r in reviews}
        held = self._held(db, product_id)
        for entry, review_id in zip(held, self._entry_ids(held, reviews)):
            if not isinstance(entry, dict):
                raise Incorrect(f"each entry of recentReviews should be a dict; one is {entry!r:.60}")
            extra = sorted(set(entry) - set(SUMMARY_FIELDS))
            missing = [f for f in SUMMARY_FIELDS if f not in entry]
            if missing or extra:
                parts = ([f"lacks {', '.join(missing)}"] if missing else []) + \
                        ([f"has {', '.join(extra)} too"] if extra else [])
                raise Incorrect(f"an entry of recentReviews should be exactly {{reviewId, stars, text, at}}; "
                                f"one {' and '.join(parts)}")
            review = by_id_.get(review_id)
            want = {"reviewId": review_id, **{f: review[f] for f in SUMMARY_FIELDS[1:]}} if review else None
            difference = first_difference(want, entry, words=COMPARE) if want else "reviewId names no review"
            if difference:
                raise Incorrect(f"the summary of review {review_id} does not match the review ({difference})")

    @visible(points=1, checks="summary")
    def summaries(self, answer):
        """Three reviews: each summary is {reviewId, stars, text, at} of its review"""
        db, reviews = self._reviewed(answer, 3, 3)
        self._check_summaries(db, 3, reviews)

    @hidden(points=1, checks="summary")
    def summaries_after_eviction(self, answer):
        """A product at the cap gets two more: the summaries held match their reviews"""
        db, reviews = self._reviewed(answer, 2, 12, held=RECENT_REVIEWS)
        self._check_summaries(db, 2, reviews)

    def _check_cap(self, db, product_id, reviews):
        held = self._held(db, product_id)
        newest = sorted(r["_id"] for r in reviews[-RECENT_REVIEWS:])
        if len(held) > RECENT_REVIEWS:
            raise Incorrect(f"after {len(reviews)} reviews product {product_id} holds {len(held)} summaries: the "
                            f"product keeps only the {RECENT_REVIEWS} newest")
        got = ordered(self._entry_ids(held, reviews))
        if got != newest:
            raise Incorrect(f"after {len(reviews)} reviews product {product_id} should hold the "
                            f"{min(len(reviews), RECENT_REVIEWS)} newest, reviews {newest}; it holds {got}")

    @visible(points=2, checks="cap")
    def keeps_the_ten_newest(self, answer):
        """Eleven reviews: the product holds the 10 newest, no more"""
        db, reviews = self._reviewed(answer, 5, RECENT_REVIEWS + 1)
        self._check_cap(db, 5, reviews)

    @hidden(points=1, checks="cap")
    def cap_boundaries(self, answer):
        """The tenth review joins the nine held: exactly 10 are all kept"""
        db, reviews = self._reviewed(answer, 8, RECENT_REVIEWS, held=RECENT_REVIEWS - 1)
        self._check_cap(db, 8, reviews)

    def _check_order(self, db, product_id, reviews):
        held = self._held(db, product_id)
        at = {r["_id"]: r["at"] for r in reviews}
        ids = [i for i in self._entry_ids(held, reviews) if i in at]
        for older, newer in zip(ids, ids[1:]):
            if at[older] < at[newer]:
                raise Incorrect(f"recentReviews should be newest first, but review {older} comes before the newer "
                                f"review {newer}")

    @visible(points=1, checks="order")
    def newest_first(self, answer):
        """Five reviews: recentReviews is newest first"""
        db, reviews = self._reviewed(answer, 4, 5)
        self._check_order(db, 4, reviews)

    @hidden(points=1, checks="order")
    def newest_first_after_eviction(self, answer):
        """Eleven reviews: still newest first"""
        db, reviews = self._reviewed(answer, 5, RECENT_REVIEWS + 1)
        self._check_order(db, 5, reviews)

    def _retry_changes_nothing(self, answer, product_id, n, again):
        db, reviews = self._reviewed(answer, product_id, n)
        review = reviews[again]
        before = (keyed("product", by_id(db.products)), keyed("review", by_id(db.reviews)))
        raised = self.call("add_review", answer.add_review, db, dict(review), expect_raise=True)
        if isinstance(raised, LearnerRaised):
            raise Incorrect(f"calling add_review again with review {review['_id']} raised {raised.type_name}: a "
                            "retry must not fail on a review already stored")
        after = (keyed("product", by_id(db.products)), keyed("review", by_id(db.reviews)))
        for what, old, new in (("db.products", before[0], after[0]), ("db.reviews", before[1], after[1])):
            difference = first_difference(old, new)
            if difference:
                raise Incorrect(f"calling add_review twice with review {review['_id']} changed {what} "
                                f"({difference}): a retry must change nothing")

    @visible(points=2, checks="retry")
    def retry_changes_nothing(self, answer):
        """Sending the newest review again, at the cap, changes neither collection"""
        self._retry_changes_nothing(answer, 5, RECENT_REVIEWS + 1, -1)

    @visible(points=1, checks="retry")
    def retry_finishes_a_half_done_call(self, answer):
        """A review stored by a call that failed before the product was updated: the retry adds its summary"""
        db, reviews = self._reviewed(answer, 3, 3, held=3)
        pending = data(reviews_for, 3, 4)[-1]
        db.reviews.insert_one(dict(pending))  # the first call stored the review, then failed
        self.call("add_review", answer.add_review, db, dict(pending))
        held = self._entry_ids(self._held(db, 3), reviews + [pending])
        if pending["_id"] not in held:
            raise Incorrect(f"review {pending['_id']} was stored by an earlier call that failed before updating the "
                            f"product; the retry left product 3 without its summary: a retry must finish the job the "
                            "failed call left half done")
        if db.reviews.count_documents({"_id": pending["_id"]}) != 1:
            raise Incorrect(f"after the retry db.reviews should hold review {pending['_id']} once")

    @visible(points=1, checks="retry")
    def retry_after_newer_reviews(self, answer):
        """Sending the first review again after 11 newer ones (it left the 10 long ago) changes nothing"""
        self._retry_changes_nothing(answer, 6, RECENT_REVIEWS + 2, 0)

    @hidden(points=1, checks="retry")
    def retry_of_an_older_review(self, answer):
        """Sending an older review again (still among the 10) changes nothing"""
        self._retry_changes_nothing(answer, 5, RECENT_REVIEWS + 1, 4)
