"""Lesson 07, exercise 07.2: approximation, one counter write per FLUSH_EVERY views.

Deterministic: the application numbers each page's views (``seq``) and the write happens on every
FLUSH_EVERY-th, so the checks know exactly what the page document must say after any number of views.
As the lesson says, several application processes count: each numbers the views it serves from 1, and a
page may already hold the views of earlier days, so a flush adds to what is stored (a write that sets the
counter to ``seq`` is right only for one process on a fresh page, and the checks also count the others).
"""

from __future__ import annotations

from course.datasets.more_patterns import FLUSH_EVERY, view_events
from course.engine.exercise import Exercise, Incorrect, hidden, visible
from course.lessons.lesson04.common import data, seeded
from course.lessons.lesson06.text import clipped
from course.engine.recording import RecordingDatabase


class Approximation(Exercise):
    id = "07.2"
    title = "Approximation: one counter write in ten"
    answers = ("record_view",)
    requirements = {
        "flush": f"a call whose seq is a multiple of {FLUSH_EVERY} adds {FLUSH_EVERY} to that page's views in "
                 "db.pages (the document {_id: page, views: ...}, created by the first such call), whatever it "
                 "held: views of earlier days, or of another process counting the same page from its own seq 1",
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

    def _record(self, answer, events, earlier=()):
        db = seeded(self.lab, pages=[{"_id": page, "views": views} for page, views in earlier])
        for event in events:
            self.call("record_view", answer.record_view, db, event["page"], event["seq"])
        return db

    def _check_concurrent_flush(self, answer, page, earlier=None):
        """Views 1 to FLUSH_EVERY of ``page`` (holding ``earlier`` views, or no document), with another
        process's flush of the same page landing between the answer's first read and its first write."""
        db = seeded(self.lab, pages=[] if earlier is None else [{"_id": page, "views": earlier}])
        recorded = RecordingDatabase(db, race=lambda: db.pages.update_one(
            {"_id": page}, {"$inc": {"views": FLUSH_EVERY}}, upsert=True))
        for seq in range(1, FLUSH_EVERY + 1):
            self.call("record_view", answer.record_view, recorded, page, seq)
        if not recorded.raced:
            return
        want = (earlier or 0) + 2 * FLUSH_EVERY
        got = self._views(db, page)
        if got != want:
            held = "no document" if earlier is None else f"{earlier} views"
            raise Incorrect(f"page {page!r} held {held}; another process flushed its {FLUSH_EVERY} views of the page "
                            f"between your read and your write, then your {FLUSH_EVERY}th view flushed: db.pages "
                            f"should say views {want}, it says {got!r}" + (" (no document)" if got is None else "")
                            + ": the other process's flush was lost")

    def _views(self, db, page):
        doc = db.pages.find_one({"_id": page})
        return None if doc is None else doc.get("views")

    def _check_flush(self, answer, events, earlier=()):
        """``events`` may name the ``process`` that counted each view (each numbers its own from 1); ``earlier``
        is (page, views) already stored before them."""
        db = self._record(answer, events, earlier)
        last: dict[tuple, int] = {}
        for event in events:
            last[(event["page"], event.get("process", 1))] = event["seq"]
        before = dict(earlier)
        for page in sorted({page for page, _ in last}):
            streams = {process: n for (p, process), n in last.items() if p == page}
            want = before.get(page, 0) + sum(n - n % FLUSH_EVERY for n in streams.values())
            if want == 0:
                continue
            got = self._views(db, page)
            if got != want:
                seen = f"{sum(streams.values())} views" if len(streams) == 1 else " and ".join(
                    f"{n} views counted by process {process}" for process, n in sorted(streams.items()))
                held = f" on top of the {before[page]} it held already" if page in before else ""
                raise Incorrect(f"after {seen} of page {page!r}{held}, db.pages should say views {want} "
                                f"({FLUSH_EVERY} more on each process's {FLUSH_EVERY}th, {2 * FLUSH_EVERY}th, ... "
                                f"view); it says {got!r}" + (" (no document)" if got is None else ""))

    @visible(points=2, checks="flush")
    def thirty_views(self, answer):
        """30 views of one page: views is 30"""
        self._check_flush(answer, [{"page": "home", "seq": s} for s in range(1, 31)])

    @visible(points=1, checks="flush")
    def two_processes_and_earlier_views(self, answer):
        """A page holding 120 views, then 25 and 17 views counted by two processes: views is 150"""
        first, second = ([{"page": "news", "seq": s, "process": p} for s in range(1, n + 1)]
                         for p, n in ((1, 25), (2, 17)))
        interleaved = [e for pair in zip(first, second) for e in pair] + first[len(second):]
        self._check_flush(answer, interleaved, earlier=(("news", 120),))

    @visible(points=1, checks="flush")
    def a_flush_between_read_and_write(self, answer):
        """Another process flushes a page holding 40 views between your read and your write: views is 60"""
        self._check_concurrent_flush(answer, "news", earlier=40)

    @hidden(points=1, checks="flush")
    def a_flush_on_a_new_page(self, answer):
        """Another process's first flush of a new page lands between your read and your write: views is 20"""
        self._check_concurrent_flush(answer, "contact")

    @hidden(points=1, checks="flush")
    def interleaved_pages(self, answer):
        """200 views spread over three pages: each page's own count, rounded down to a multiple of 10"""
        self._check_flush(answer, data(view_events, 200))

    @hidden(points=1, checks="flush")
    def processes_over_pages(self, answer):
        """Two processes counting three pages, one of them holding 70 views already"""
        first = [{**e, "process": 1} for e in data(view_events, 90)]
        second = [{**e, "process": 2} for e in data(view_events, 70, seed=9)]
        self._check_flush(answer, [e for pair in zip(first, second) for e in pair] + first[len(second):],
                          earlier=(("sale", 70),))

    def _check_nothing_yet(self, answer, page, n):
        db = self._record(answer, [{"page": page, "seq": s} for s in range(1, n + 1)])
        found = db.pages.find_one({"_id": page})
        if found is not None:
            raise Incorrect(f"after {n} view(s) of page {page!r} (none a multiple of {FLUSH_EVERY}) db.pages already "
                            f"holds {clipped(found, 80)}: the other calls must write nothing")

    def _check_unchanged(self, answer, page, flushed):
        db = self._record(answer, [{"page": page, "seq": s} for s in range(1, flushed + 1)])
        before = db.pages.find_one({"_id": page})
        for seq in range(flushed + 1, flushed + FLUSH_EVERY):
            self.call("record_view", answer.record_view, db, page, seq)
            after = db.pages.find_one({"_id": page})
            if after != before:
                raise Incorrect(f"view {seq} of page {page!r} changed its document from {clipped(before, 80)} to "
                                f"{clipped(after, 80)}: only every {FLUSH_EVERY}th view writes, the others write nothing")

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
