"""A tiny lab "99" for testing the release and grading machinery without the real lessons.

Importing this module changes nothing; :func:`install` registers it as
``course.lessons.fake99`` (the notebooks' first cell calls it inside the kernel;
tests use the ``fake_lab`` fixture in tests/test_grading.py).
"""

from __future__ import annotations

import sys

from course.engine.exercise import Exercise, Incorrect, hidden, visible

LAB = "99"
MODULE = "fake99"
TITLE = "A fake lab for tests"
SLUG = "fake-lab"


class Total(Exercise):
    id = "99.1"
    title = "The answer"
    answers = ("total",)
    hints = ("It is 6 times 7.",)

    @visible(points=1)
    def is_a_number(self, a):
        """total is an integer"""
        self.expect_type("total", a.total, int, "42")

    @hidden(points=2)
    def is_right(self, a):
        """total is the answer"""
        if a.total != 42:
            raise Incorrect(f"total is {a.total}, which is not the answer")


class Double(Exercise):
    id = "99.2"
    title = "Doubling"
    answers = ("double",)

    @visible(points=1)
    def doubles_two(self, a):
        """double(2) is 4"""
        if self.call("double", a.double, 2) != 4:
            raise Incorrect("double(2) should be 4")

    @hidden(points=1)
    def doubles_negative(self, a):
        """double(-3) is -6"""
        if self.call("double", a.double, -3) != -6:
            raise Incorrect("double(-3) should be -6")


class Name(Exercise):
    id = "99.3"
    title = "A name"
    answers = ("name",)

    @visible(points=1)
    def is_mongo(self, a):
        """name is 'mongo'"""
        if a.name != "mongo":
            raise Incorrect("name should be 'mongo'")


EXERCISES = (Total, Double, Name)


def install() -> None:
    """Register this module as lab 99 in ``course.lessons`` (for the current process)."""
    import course.lessons

    course.lessons.MODULES[LAB] = MODULE
    sys.modules[f"course.lessons.{MODULE}"] = sys.modules[__name__]


# ---- lab 98: checks that hand a collection to the learner's functions (98.2 races, 98.3 reports) ----

DB_LAB, DB_MODULE = "98", "fake98"
KITCHEN = [{"_id": i, "category": "kitchen" if i % 3 == 0 else "garden"} for i in range(1, 10)]


class CountKitchen(Exercise):
    id = "98.1"
    title = "Count the kitchen products"
    answers = ("count_kitchen",)
    requirements = {"count": "the number of kitchen products in the collection it is given",
                    "reads": "it only reads"}

    def _products(self, documents):
        from course.engine.recording import RecordingCollection

        products = self.lab.scratch().products
        products.insert_many([dict(d) for d in documents])
        return RecordingCollection(products)

    @visible(points=2, checks="count")
    def counts(self, a):
        """count_kitchen counts the kitchen products"""
        products = self._products(KITCHEN)
        got = self.call("count_kitchen", a.count_kitchen, products)
        if got != 3:
            raise Incorrect(f"count_kitchen returned {got!r}; the collection holds 3 kitchen products")

    @visible(points=1, checks="reads")
    def only_reads(self, a):
        """count_kitchen only reads"""
        products = self._products(KITCHEN)
        self.call("count_kitchen", a.count_kitchen, products)
        if products.writes() or not products.reads():
            raise Incorrect("count_kitchen should read the collection and write nothing")

    @hidden(points=2, checks="count")
    def counts_more(self, a):
        """count_kitchen counts a bigger collection"""
        products = self._products([{"_id": i, "category": "kitchen"} for i in range(40)])
        got = self.call("count_kitchen", a.count_kitchen, products)
        if got != 40:
            raise Incorrect(f"count_kitchen returned {got!r} for 40 kitchen products")
        if products.count_documents({}) != 40:
            raise Incorrect("the collection changed while count_kitchen ran")


STOCK = [{"_id": f"sku-{i}", "name": f"Pan {i}", "stock": 10} for i in range(1, 6)]
HIDDEN_SENTINEL = "HIDDEN_SENTINEL_5521"  #: only in 98.2's hidden check: never in any grading output
HIDDEN_PRODUCT = {"_id": f"sku-{HIDDEN_SENTINEL}", "name": f"Pot {HIDDEN_SENTINEL}", "stock": 4}


class Restock(Exercise):
    """A read-modify-write race check: another writer sells one between the learner's read and write."""

    id = "98.2"
    title = "Restock a product"
    answers = ("restock",)
    requirements = {"adds": "adds n to the product's stock",
                    "race": "keeps a sale another writer makes between your read and your write"}

    def stocked(self, documents=STOCK, race: bool = False):
        """A fresh scratch collection of ``documents`` behind a recording wrapper (with the sale race if asked)."""
        from course.engine.recording import RecordingCollection

        products = self.lab.scratch().products
        products.insert_many([dict(d) for d in documents])
        if not race:
            return RecordingCollection(products)
        return RecordingCollection(products, race=lambda: products.update_many({}, {"$inc": {"stock": -1}}))

    def restocks(self, answer, documents, product_id: str, n: int, race: bool = False) -> None:
        """Call ``restock(products, product_id, n)``; raise Incorrect unless the stock grew by n (less the sale)."""
        products = self.stocked(documents, race)
        start = next(d["stock"] for d in documents if d["_id"] == product_id)
        self.call("restock", answer.restock, products, product_id, n)
        after = (products.wrapped.find_one({"_id": product_id}) or {}).get("stock")
        wanted = start + n - (1 if products.raced else 0)
        if after != wanted:  # the message names no product: a hidden check's product stays hidden
            sale = " (another writer sold one meanwhile)" if products.raced else ""
            raise Incorrect(f"the stock went from {start} to {after!r}, not {wanted}{sale}")

    @visible(points=2, checks="adds")
    def adds(self, a):
        """restock adds n to the stock"""
        self.restocks(a, STOCK, "sku-2", 5)

    @visible(points=2, checks="race")
    def keeps_a_sale(self, a):
        """restock keeps a sale made between its read and its write"""
        self.restocks(a, STOCK, "sku-3", 4, race=True)

    @hidden(points=1, checks="adds")
    def adds_elsewhere(self, a):
        """restock adds to another product"""
        self.restocks(a, [*STOCK, HIDDEN_PRODUCT], HIDDEN_PRODUCT["_id"], 3)


class Report(Exercise):
    """Where an attacker reports whether it got through: ``report(products)`` returns "mongo" only then."""

    id = "98.3"
    title = "A report"
    answers = ("report",)

    @visible(points=1)
    def reports(self, a):
        """report(products) returns 'mongo'"""
        from course.engine.recording import RecordingCollection

        products = self.lab.scratch().products
        products.insert_many([dict(d) for d in KITCHEN])
        if self.call("report", a.report, RecordingCollection(products)) != "mongo":
            raise Incorrect("report(products) should return 'mongo'")


DB_EXERCISES = (CountKitchen, Restock, Report)


def install_db_lab() -> None:
    """Register lab 98 (:data:`DB_EXERCISES`) as ``course.lessons.fake98`` in this process."""
    import types

    import course.lessons

    module = types.ModuleType(f"course.lessons.{DB_MODULE}")
    module.TITLE, module.SLUG, module.EXERCISES = "A fake lab with a database", "fake-db-lab", DB_EXERCISES
    course.lessons.MODULES[DB_LAB] = DB_MODULE
    sys.modules[module.__name__] = module


DB_START = ("import support.fake_lesson\n"
            "support.fake_lesson.install_db_lab()\n"
            "from course import start_lab, ____\n"
            "lab = start_lab(\"98\")")


def kernel_folder() -> str:
    """A folder holding only ``support/fake_lesson.py``, for ``COURSE_GRADE_KERNEL_PATH`` (made once).

    Learner kernels import lab 99 from it; they never see the rest of tests/ (the golden and hostile
    classes hold secrets the learners must not read).  It is removed when this process exits.
    """
    import atexit
    import shutil
    import tempfile
    from pathlib import Path

    global _KERNEL_FOLDER
    if _KERNEL_FOLDER is None or not Path(_KERNEL_FOLDER, "support", "fake_lesson.py").exists():
        folder = Path(tempfile.mkdtemp(prefix="course-fake99-"))
        atexit.register(shutil.rmtree, folder, True)  # one per test process, not one more per run in /tmp
        (folder / "support").mkdir()
        (folder / "support" / "__init__.py").write_text("")
        shutil.copy(Path(__file__), folder / "support" / "fake_lesson.py")
        _KERNEL_FOLDER = str(folder)
    return _KERNEL_FOLDER


_KERNEL_FOLDER: str | None = None


def sandbox_arguments() -> list[str]:
    """``[]`` where bubblewrap works here, else ``["--unsandboxed"]`` (CI installs bubblewrap)."""
    from course.grading.sandbox import sandbox_problem

    return [] if not sandbox_problem() else ["--unsandboxed"]


# ---- synthetic notebooks for lab 99 ------------------------------------------------

START = ("import support.fake_lesson\n"
         "support.fake_lesson.install()\n"
         "from course import start_lab, ____\n"
         "lab = start_lab(\"99\")")


def code(source: str, *tags: str):
    """A code cell with ``tags``."""
    import nbformat

    cell = nbformat.v4.new_code_cell(source)
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def notebook(*cells, lab: str | None = None):
    """A v4 notebook with a python3 kernelspec and deterministic cell ids."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    if lab:
        nb.metadata["course"] = {"lab": lab}
    for number, cell in enumerate(cells):
        cell["id"] = f"cell-{number}"
    nb.cells = list(cells)
    return nb


def solution_notebook():
    """The solution notebook of lab 99, following the release conventions."""
    import nbformat

    return notebook(
        code(START),
        nbformat.v4.new_markdown_cell("## Exercise 1\nWhat is the answer?"),
        code("# BEGIN SOLUTION\ntotal = 6 * 7\n# END SOLUTION", "exercise:99.1"),
        code("lab.q1.check()"),
        code("def double(x):\n    \"\"\"Twice x.\"\"\"\n    # BEGIN SOLUTION\n    y = x + x\n    return y\n"
             "    # END SOLUTION", "exercise:99.2"),
        code("# BEGIN SOLUTION\nname = \"mongo\"\n# END SOLUTION", "exercise:99.3"),
        code("assert total == 42 and double(5) == 10", "solution-only"),
    )
