"""Lesson 07, exercise 07.2: approximation, one counter write per FLUSH_EVERY views.

Deterministic: the application numbers each page's views (``seq``) and the write happens on every
FLUSH_EVERY-th, so the checks know exactly what the page document must say after any number of views.
"""

from __future__ import annotations

from course.datasets_more_patterns import FLUSH_EVERY, view_events
from course.exercise import Exercise, Incorrect, hidden, visible
from course.lessons.lesson04_common import data, seeded


class Approximation(Exercise):
    id = "07.2"
    title = "Approximation: one counter write in ten"
    answers = ("record_view",)
    requirements = {
        "flush": f"a call whose seq is a multiple of {FLUSH_EVERY} adds {FLUSH_EVERY} to that page's views in "
                 "db.pages (the document {_id: page, views: ...}, created by the first such call)",
        "skip": f"every other call writes nothing: after views 1 to {FLUSH_EVERY - 1} the page has no document, "
                f"and views {FLUSH_EVERY + 1} to {2 * FLUSH_EVERY - 1} leave it as view {FLUSH_EVERY} left it",
    }
    hints = (
        f"Test seq % {FLUSH_EVERY} == 0 before touching the database; otherwise return at once.",
        f"update_one({{'_id': page}}, {{'$inc': {{'views': {FLUSH_EVERY}}}}}, upsert=True) creates the page "
        "on its first flush.",
    )
    solution_code = """
def record_view(db, page, seq):
    \"\"\"Count one view of a page: write only on every FLUSH_EVERY-th view, adding FLUSH_EVERY.\"\"\"
    if seq % FLUSH_EVERY != 0:
        return
    db.pages.update_one({"_id": page}, {"$inc": {"views": FLUSH_EVERY}}, upsert=True)
"""

    def _record(self, answer, events):
        db = seeded(self.lab)
        for event in events:
            self.call("record_view", answer.record_view, db, event["page"], event["seq"])
        return db

    def _views(self, db, page):
        doc = db.pages.find_one({"_id": page})
        return None if doc is None else doc.get("views")

    def _check_flush(self, answer, events):
        db = self._record(answer, events)
        seen: dict[str, int] = {}
        for event in events:
            seen[event["page"]] = event["seq"]
        for page, n in sorted(seen.items()):
            want = n - n % FLUSH_EVERY
            if want == 0:
                continue
            got = self._views(db, page)
            if got != want:
                raise Incorrect(f"after {n} views of page {page!r} db.pages should say views {want} (one $inc of "
                                f"{FLUSH_EVERY} per {FLUSH_EVERY} views, on the {FLUSH_EVERY}th, "
                                f"{2 * FLUSH_EVERY}th, ...); it says {got!r}"
                                + (" (no document)" if got is None else ""))

    @visible(points=2, checks="flush")
    def thirty_views(self, answer):
        """30 views of one page: views is 30"""
        self._check_flush(answer, [{"page": "home", "seq": s} for s in range(1, 31)])

    @hidden(points=1, checks="flush")
    def interleaved_pages(self, answer):
        """200 views spread over three pages: each page's own count, rounded down to a multiple of 10"""
        self._check_flush(answer, data(view_events, 200))

    def _check_nothing_yet(self, answer, page, n):
        db = self._record(answer, [{"page": page, "seq": s} for s in range(1, n + 1)])
        found = db.pages.find_one({"_id": page})
        if found is not None:
            raise Incorrect(f"after {n} view(s) of page {page!r} (none a multiple of {FLUSH_EVERY}) db.pages already "
                            f"holds {found!r:.80}: the other calls must write nothing")

    def _check_unchanged(self, answer, page, flushed):
        db = self._record(answer, [{"page": page, "seq": s} for s in range(1, flushed + 1)])
        before = db.pages.find_one({"_id": page})
        for seq in range(flushed + 1, flushed + FLUSH_EVERY):
            self.call("record_view", answer.record_view, db, page, seq)
            after = db.pages.find_one({"_id": page})
            if after != before:
                raise Incorrect(f"view {seq} of page {page!r} changed its document from {before!r:.80} to "
                                f"{after!r:.80}: only every {FLUSH_EVERY}th view writes, the others write nothing")

    @visible(points=1, checks="skip")
    def nine_views_write_nothing(self, answer):
        """9 views: the page has no document yet"""
        self._check_nothing_yet(answer, "help", FLUSH_EVERY - 1)

    @visible(points=1, checks="skip")
    def views_after_a_flush(self, answer):
        """Views 11 to 19 leave the page as view 10 left it"""
        self._check_unchanged(answer, "sale", FLUSH_EVERY)

    @hidden(points=1, checks="skip")
    def one_view(self, answer):
        """A single view writes nothing, and views 31 to 39 change nothing"""
        self._check_nothing_yet(answer, "about", 1)
        self._check_unchanged(answer, "about", 3 * FLUSH_EVERY)
