"""Lesson 04, exercise 04.5: outlier, embed 50 followers and overflow the rest behind a flag.

Both bounds (50 embedded, 100 per page) are promised under concurrency: the race assertions add a
competing follower between the learner's read and its write, where it takes the last place and where
room is left (the learner's follower must still be embedded then).  Two products overflow in the pages
check, so a page of another product is never taken for this one's.  Products near the threshold and
half-full pages are set up directly, so each assertion needs only a few learner calls.
"""

from __future__ import annotations

from course.datasets.patterns import EXTRA_PAGE, FOLLOWER_THRESHOLD, products
from course.engine.exercise import Exercise, Incorrect, hidden, visible
from course.lessons.lesson04.common import COMPARE, data, first_difference, is_int, seeded
from course.engine.recording import RecordingDatabase

def _followers(n: int, prefix: str = "u") -> list[str]:
    return [f"{prefix}{k}" for k in range(n)]


def _products_with(**by_id) -> list[dict]:
    """The seeded products, some with followers, flag and pages set: product id -> (embedded, flagged)."""
    found = products(5)
    for product in found:
        embedded, flagged = by_id.get(f"p{product['_id']}", (0, False))
        product["followers"] = _followers(embedded)
        if flagged:
            product["hasExtras"] = True
    return found


def _pages(product_id: int, *sizes: int) -> list[dict]:
    found, start = [], FOLLOWER_THRESHOLD
    for size in sizes:
        followers = [f"u{k}" for k in range(start, start + size)]
        found.append({"productId": product_id, "count": size, "followers": followers})
        start += size
    return found


class Outlier(Exercise):
    id = "04.5"
    title = "Outlier: embed 50 followers, overflow the rest behind a flag"
    answers = ("add_follower", "follower_count")
    requirements = {
        "embed": f"the first {FOLLOWER_THRESHOLD} followers are embedded in the product's followers, in the order "
                 "they came; never more",
        "flag": "hasExtras: True is set on the product when its first follower overflows (follower "
                f"{FOLLOWER_THRESHOLD + 1}), not before",
        "pages": "each overflowing follower goes into db.product_followers_extra, in pages {productId, count, "
                 f"followers}} of at most {EXTRA_PAGE}, count matching followers",
        "concurrent": f"the bounds ({FOLLOWER_THRESHOLD} embedded, {EXTRA_PAGE} per page) hold when another "
                      "follower is added between your read and your write",
        "count": "follower_count returns the number of followers in both places, as an int",
        "flag_read": "follower_count reads db.product_followers_extra only when the product's hasExtras is true",
    }
    hints = (
        "Try the embedded push first, with a filter that matches only while there is room: "
        f"'followers.{FOLLOWER_THRESHOLD - 1}': {{'$exists': False}}.",
        "If that matched nothing, set hasExtras: True on the product and upsert into "
        "db.product_followers_extra a page with count < EXTRA_PAGE ($push the follower, $inc count).",
        "follower_count reads the product; only when hasExtras is true does it add the pages' counts.",
    )
    solution_code = """
def add_follower(db, product_id, user_id):
    \"\"\"Embed the follower while there is room; past the threshold flag the product and overflow.\"\"\"
    embedded = db.products.update_one(
        {"_id": product_id, f"followers.{FOLLOWER_THRESHOLD - 1}": {"$exists": False}},
        {"$push": {"followers": user_id}},
    )
    if embedded.modified_count == 1:
        return
    db.products.update_one({"_id": product_id}, {"$set": {"hasExtras": True}})
    db.product_followers_extra.update_one(
        {"productId": product_id, "count": {"$lt": EXTRA_PAGE}},
        {"$push": {"followers": user_id}, "$inc": {"count": 1}},
        upsert=True,
    )


def follower_count(db, product_id):
    \"\"\"Followers in both places; the overflow is read only when the flag says so.\"\"\"
    product = db.products.find_one({"_id": product_id}, {"followers": 1, "hasExtras": 1})
    count = len(product.get("followers", []))
    if product.get("hasExtras"):
        pages = db.product_followers_extra.find({"productId": product_id}, {"count": 1})
        count += sum(page["count"] for page in pages)
    return count
"""

    def _follow(self, answer, db, product_id, users):
        for user in users:
            self.call("add_follower", answer.add_follower, db, product_id, user)

    def _embedded(self, db, product_id) -> list:
        followers = (db.products.find_one({"_id": product_id}) or {}).get("followers", [])
        if not isinstance(followers, list):
            raise Incorrect(f"product {product_id}'s followers should be a list; it is {followers!r:.60}")
        return followers

    def _check_embedded(self, db, product_id, want):
        got = self._embedded(db, product_id)
        if len(got) > FOLLOWER_THRESHOLD:
            raise Incorrect(f"product {product_id} embeds {len(got)} followers: embed at most {FOLLOWER_THRESHOLD}, "
                            "then overflow")
        difference = first_difference(want, got, "followers", COMPARE)
        if difference:
            raise Incorrect(f"product {product_id} should embed its first {len(want)} followers in the order they "
                            f"came ({difference})")

    @visible(points=2, checks="embed")
    def embeds_up_to_the_threshold(self, answer):
        """A product with 48 followers gets four more: it embeds exactly the first 50"""
        db = seeded(self.lab, products=data(_products_with, p1=(48, False)))
        self._follow(answer, db, 1, _followers(52)[48:])
        self._check_embedded(db, 1, _followers(FOLLOWER_THRESHOLD))

    @hidden(points=1, checks="embed")
    def small_products_embed(self, answer):
        """Five followers of a new product are all embedded, in order"""
        db = seeded(self.lab, products=data(_products_with))
        self._follow(answer, db, 2, _followers(5))
        self._check_embedded(db, 2, _followers(5))

    @visible(points=2, checks="flag")
    def flag_exactly_past_the_threshold(self, answer):
        """Follower 50 sets no flag; follower 51 sets hasExtras: True"""
        db = seeded(self.lab, products=data(_products_with, p1=(FOLLOWER_THRESHOLD - 1, False)))
        self._follow(answer, db, 1, [f"u{FOLLOWER_THRESHOLD - 1}"])
        if (db.products.find_one({"_id": 1}) or {}).get("hasExtras"):
            raise Incorrect(f"with exactly {FOLLOWER_THRESHOLD} followers nothing overflows yet: leave hasExtras "
                            f"unset until follower {FOLLOWER_THRESHOLD + 1}")
        self._follow(answer, db, 1, [f"u{FOLLOWER_THRESHOLD}"])
        if (db.products.find_one({"_id": 1}) or {}).get("hasExtras") is not True:
            raise Incorrect(f"follower {FOLLOWER_THRESHOLD + 1} overflows: set hasExtras: True on the product")

    def _check_pages(self, db, product_id, want_followers):
        pages = list(db.product_followers_extra.find({"productId": product_id}))
        for page in pages:
            followers = page.get("followers")
            if not isinstance(followers, list):
                raise Incorrect(f"an overflow page should hold its followers in a list field followers; one has "
                                f"{followers!r:.60}")
            if len(followers) > EXTRA_PAGE:
                raise Incorrect(f"an overflow page holds {len(followers)} followers: a page holds at most "
                                f"{EXTRA_PAGE}, and the next follower opens a new page")
            if page.get("count") != len(followers):
                raise Incorrect(f"an overflow page holding {len(followers)} followers says count "
                                f"{page.get('count')!r}: a page's count always agrees with the followers it holds")
        stored = sorted(f for page in pages for f in page["followers"])
        if stored != sorted(want_followers):
            lost = sorted(set(want_followers) - set(stored))
            strays = sorted(set(stored) - set(want_followers))
            raise Incorrect(f"the overflow pages of product {product_id} should hold {len(want_followers)} followers, "
                            f"they hold {len(stored)}" + (f" (missing {lost[:3]})" if lost else "")
                            + (f" (also {strays[:3]}, who followed another product)" if strays else "")
                            + ": each product's followers go into pages of that product only")

    @visible(points=2, checks="pages")
    def pages_of_at_most_100(self, answer):
        """A page of 99 gets two more: it fills to 100, a new page opens; product 2 overflows into its own pages"""
        db = seeded(self.lab, products=data(_products_with, p1=(FOLLOWER_THRESHOLD, True),
                                            p2=(FOLLOWER_THRESHOLD, False)),
                    product_followers_extra=data(_pages, 1, EXTRA_PAGE - 1))
        self._follow(answer, db, 2, ["other-1"])
        self._follow(answer, db, 1, ["new-1", "new-2"])
        self._follow(answer, db, 2, ["other-2"])
        self._check_pages(db, 1, data(_pages, 1, EXTRA_PAGE - 1)[0]["followers"] + ["new-1", "new-2"])
        self._check_pages(db, 2, ["other-1", "other-2"])

    @hidden(points=1, checks="pages")
    def first_page(self, answer):
        """The first three overflowing followers of a product open one page"""
        db = seeded(self.lab, products=data(_products_with, p3=(FOLLOWER_THRESHOLD, False)))
        self._follow(answer, db, 3, ["x1", "x2", "x3"])
        self._check_pages(db, 3, ["x1", "x2", "x3"])

    def _check_race(self, answer, embedded: int, pages: tuple, race_filter: dict, race_target: str):
        db = seeded(self.lab, products=data(_products_with, p1=(embedded, bool(pages))),
                    product_followers_extra=data(_pages, 1, *pages))

        def another_follower():
            if race_target == "products":
                db.products.update_one({"_id": 1, **race_filter}, {"$push": {"followers": "racer"}})
            else:
                db.product_followers_extra.update_one({"productId": 1, **race_filter},
                                                      {"$push": {"followers": "racer"}, "$inc": {"count": 1}})

        watched = RecordingDatabase(db, race=another_follower)
        self.call("add_follower", answer.add_follower, watched, 1, "late")
        if not watched.raced:
            return  # no write followed a read: nothing another client could slip in between
        if race_target == "products":
            size, bound, where = len(self._embedded(db, 1)), FOLLOWER_THRESHOLD, "the product embeds"
        else:
            size = max((len(p.get("followers") or []) for p in db.product_followers_extra.find()), default=0)
            bound, where = EXTRA_PAGE, "a page holds"
        if size > bound:
            raise Incorrect(f"another follower was added at once, between your read and your write, and {where} "
                            f"{size}: the limit must hold while other followers arrive, which a read followed by "
                            "a separate write cannot ensure")

    @visible(points=2, checks="concurrent")
    def embedded_bound_under_a_race(self, answer):
        """Another follower takes the last embedded place between your read and your write: still 50"""
        self._check_race(answer, FOLLOWER_THRESHOLD - 1, (),
                         {f"followers.{FOLLOWER_THRESHOLD - 1}": {"$exists": False}}, "products")

    @visible(points=1, checks="embed")
    def embeds_under_a_race_with_room_left(self, answer):
        """Another follower lands between your read and your write on a product with 30: yours is embedded too"""
        db = seeded(self.lab, products=data(_products_with, p1=(30, False)))

        def another_follower():
            db.products.update_one({"_id": 1}, {"$push": {"followers": "racer"}})

        watched = RecordingDatabase(db, race=another_follower)
        self.call("add_follower", answer.add_follower, watched, 1, "late")
        want = _followers(30) + (["racer"] if watched.raced else []) + ["late"]
        got = self._embedded(db, 1)
        if "late" not in got:
            raise Incorrect(f"another follower was added between your read and your write while product 1 held "
                            f"{len(want) - 1} of {FOLLOWER_THRESHOLD}; your follower was not embedded: while there "
                            f"is room, a follower is embedded whatever else arrives meanwhile")
        self._check_embedded(db, 1, want)

    @visible(points=1, checks="concurrent")
    def page_bound_under_a_race(self, answer):
        """Another follower takes a page's last place between your read and your write: still 100"""
        self._check_race(answer, FOLLOWER_THRESHOLD, (EXTRA_PAGE - 1,), {"count": {"$lt": EXTRA_PAGE}},
                         "product_followers_extra")

    @hidden(points=1, checks="concurrent")
    def second_page_bound_under_a_race(self, answer):
        """A full page and one of 99: another follower takes the last place between your read and your write"""
        self._check_race(answer, FOLLOWER_THRESHOLD, (EXTRA_PAGE, EXTRA_PAGE - 1), {"count": {"$lt": EXTRA_PAGE}},
                         "product_followers_extra")

    @visible(points=1, checks="pages")
    def overflows_under_a_race_with_room_left(self, answer):
        """Another follower lands in a page of 60 between your read and your write: yours is in a page too"""
        db = seeded(self.lab, products=data(_products_with, p1=(FOLLOWER_THRESHOLD, True)),
                    product_followers_extra=data(_pages, 1, 60))

        def another_follower():
            db.product_followers_extra.update_one({"productId": 1, "count": {"$lt": EXTRA_PAGE}},
                                                  {"$push": {"followers": "racer"}, "$inc": {"count": 1}})

        watched = RecordingDatabase(db, race=another_follower)
        self.call("add_follower", answer.add_follower, watched, 1, "late")
        stored = [f for page in db.product_followers_extra.find({"productId": 1}) for f in page.get("followers") or []]
        if watched.raced and "late" not in stored:
            raise Incorrect("another follower was added to product 1's page of 60 between your read and your write; "
                            "your follower is in no page: while a page has room, an overflowing follower is stored "
                            "whatever else arrives meanwhile")
        self._check_pages(db, 1, data(_pages, 1, 60)[0]["followers"] + (["racer"] if watched.raced else [])
                          + ["late"])

    def _check_count(self, answer, product_id, pages, embedded, flagged):
        db = seeded(self.lab, products=data(_products_with, **{f"p{product_id}": (embedded, flagged)}),
                    product_followers_extra=data(_pages, product_id, *pages))
        got = self.call("follower_count", answer.follower_count, db, product_id)
        want = embedded + sum(pages)
        if not is_int(got):
            raise Incorrect(f"follower_count should return an int; it returned a {type(got).__name__}: {got!r:.60}")
        if got != want:
            where = f"{embedded} embedded" + (f" and {sum(pages)} in {len(pages)} pages" if pages else "")
            raise Incorrect(f"follower_count(db, {product_id}) returned {got}; product {product_id} has {where}: "
                            "count both places (the pages' count fields)")

    @visible(points=2, checks="count")
    def count_merges_both_places(self, answer):
        """50 embedded and two pages (100 and 37); and a small product with 3"""
        self._check_count(answer, 1, (EXTRA_PAGE, 37), FOLLOWER_THRESHOLD, True)
        self._check_count(answer, 2, (), 3, False)

    @hidden(points=1, checks="count")
    def count_other_sizes(self, answer):
        """Three pages (100, 100, 1); and a product without followers"""
        self._check_count(answer, 4, (EXTRA_PAGE, EXTRA_PAGE, 1), FOLLOWER_THRESHOLD, True)
        self._check_count(answer, 5, (), 0, False)

    @visible(points=1, checks="flag_read")
    def reads_honour_the_flag(self, answer):
        """Counting a product without the flag never reads the overflow: one with 3 followers, one with 50"""
        db = seeded(self.lab, products=data(_products_with, p2=(FOLLOWER_THRESHOLD, False), p3=(3, False)),
                    product_followers_extra=data(_pages, 1, 5))
        for product_id in (3, 2):
            watched = RecordingDatabase(db)
            self.call("follower_count", answer.follower_count, watched, product_id)
            if watched.collection("product_followers_extra").reads():
                embedded = len(self._embedded(db, product_id))
                raise Incorrect(f"follower_count read db.product_followers_extra for product {product_id}, which "
                                f"embeds {embedded} followers and has no hasExtras: only the flag says whether a "
                                "product has overflowed, so the 99% of products pay one query")
