"""Lesson 07, exercise 07.5: tree patterns, three reads of one category tree.

Every category holds all four patterns' fields (``parent``, ``children``, ``ancestors``, ``path``), so each
read can use the pattern that serves it; the checks compare the names returned with the tree itself.
"""

from __future__ import annotations

from course.store.capabilities import Capability
from course.datasets.more_patterns import TREE, categories
from course.engine.exercise import Exercise, Incorrect, LearnerCodeError, Unsupported, hidden, visible
from course.lessons.lesson04.common import data, seeded
from course.lessons.lesson06.text import clipped

#: the tree the hidden checks use: the lab's, with one more level under History, a child of Fiction, and a
#: "Science Fiction" (with a child) whose name contains "Fiction": its path holds the text "Fiction" too
DEEPER = TREE + (("Ancient history", "History"), ("Rome", "Ancient history"), ("Crime", "Fiction"),
                 ("Science Fiction", "Books"), ("Space opera", "Science Fiction"))


def _parents(tree: tuple) -> dict:
    return dict(tree)


def _children(tree: tuple, name: str) -> list[str]:
    return sorted(child for child, parent in tree if parent == name)


def _descendants(tree: tuple, name: str) -> list[str]:
    found, todo = [], [name]
    while todo:
        below = _children(tree, todo.pop())
        found += below
        todo += below
    return sorted(found)


def _breadcrumb(tree: tuple, name: str) -> list[str]:
    parents, found = _parents(tree), [name]
    while parents[found[0]] is not None:
        found.insert(0, parents[found[0]])
    return found


class Trees(Exercise):
    id = "07.5"
    title = "Trees: children, descendants and a breadcrumb"
    answers = ("children_of", "descendants_of", "breadcrumb")
    requirements = {
        "children": "children_of returns the names of the category's direct children, sorted ([] for a leaf)",
        "descendants": "descendants_of returns the names of every category below it (children, their children, "
                       "and so on, not itself), sorted",
        "breadcrumb": "breadcrumb returns the names from the root down to the category itself, root first",
    }
    hints = (
        "children_of: parent references, find({'parent': name}).",
        "descendants_of: the array of ancestors, find({'ancestors': name}) matches every category with name "
        "anywhere above it.",
        "breadcrumb: one find_one of the category; its ancestors are already root first.",
    )
    solution_code = """
def children_of(categories, name):
    \"\"\"Direct children: the parent reference.\"\"\"
    return sorted(c["_id"] for c in categories.find({"parent": name}, {"_id": 1}))


def descendants_of(categories, name):
    \"\"\"Everything below: the array of ancestors.\"\"\"
    return sorted(c["_id"] for c in categories.find({"ancestors": name}, {"_id": 1}))


def breadcrumb(categories, name):
    \"\"\"Root first, down to the category itself: one read of its ancestors.\"\"\"
    category = categories.find_one({"_id": name}, {"ancestors": 1})
    return category["ancestors"] + [name]
"""

    def _ask(self, answer, function, tree, names):
        db = seeded(self.lab, categories=data(categories, tree))
        return [(name, self._call(answer, function, db.categories, name)) for name in names]

    def _call(self, answer, function, collection, name):
        """Call the learner's function; a $graphLookup this backend refuses is its limit, not a mistake."""
        try:
            return self.call(function, getattr(answer, function), collection, name)
        except LearnerCodeError as error:
            said = error.raised.message if error.raised else str(error)
            if "$graphLookup" in said and not self.lab.backend.supports(Capability.GRAPH_LOOKUP):
                raise Unsupported(Capability.GRAPH_LOOKUP) from error
            raise

    @staticmethod
    def _names(function, name, got) -> list:
        if not isinstance(got, list):
            raise Incorrect(f"{function}(categories, {name!r}) should return a list of names; got "
                            f"{type(got).__name__}: {clipped(got, 80)}")
        return [x.get("_id") if isinstance(x, dict) else x for x in got]

    def _check(self, answer, function, expected, tree, names, why):
        for name, got in self._ask(answer, function, tree, names):
            want = expected(tree, name)
            got = self._names(function, name, got)
            if got != want:
                same = sorted(got, key=str) == sorted(want, key=str)
                strangers = [x for x in got if isinstance(x, str) and x not in want and x != name] \
                    if function == "descendants_of" else []
                if strangers:
                    above = _breadcrumb(tree, strangers[0])[:-1] if strangers[0] in _parents(tree) else []
                    path = "," + "".join(f"{a}," for a in above)
                    why = f"{strangers[0]!r} is not below {name!r}" + (
                        f" (its path {path!r} only contains the text {name!r}: match the category's own path "
                        "from its start)" if name in path else "")
                raise Incorrect(f"{function}(categories, {name!r}) returned {got}, expected {want}"
                                + ("; sort them" if same and function != "breadcrumb" else f": {why}"))

    @visible(points=2, checks="children")
    def children(self, answer):
        """Children of Products, Phones and of a leaf"""
        self._check(answer, "children_of", _children, TREE, ("Products", "Phones", "Laptops"),
                    "only the categories whose parent it is")

    @hidden(points=1, checks="children")
    def children_deeper(self, answer):
        """A deeper tree: children of Non-fiction and History"""
        self._check(answer, "children_of", _children, DEEPER, ("Non-fiction", "History", "Rome"),
                    "only the categories whose parent it is")

    @visible(points=2, checks="descendants")
    def descendants(self, answer):
        """Descendants of Electronics, Books and of a leaf"""
        self._check(answer, "descendants_of", _descendants, TREE, ("Electronics", "Books", "Fiction"),
                    "every level below, not only the children, and not the category itself")

    @hidden(points=1, checks="descendants")
    def descendants_deeper(self, answer):
        """A deeper tree: descendants of Products, Non-fiction, and Fiction beside Science Fiction"""
        self._check(answer, "descendants_of", _descendants, DEEPER, ("Products", "Non-fiction", "Fiction"),
                    "every level below, not only the children, and not the category itself")

    @visible(points=2, checks="breadcrumb")
    def breadcrumbs(self, answer):
        """Breadcrumbs of Smartphone cases, History and of the root"""
        self._check(answer, "breadcrumb", _breadcrumb, TREE, ("Smartphone cases", "History", "Products"),
                    "root first, ending with the category itself")

    @hidden(points=1, checks="breadcrumb")
    def breadcrumbs_deeper(self, answer):
        """A deeper tree: the breadcrumb of Rome"""
        self._check(answer, "breadcrumb", _breadcrumb, DEEPER, ("Rome", "Books"),
                    "root first, ending with the category itself")
