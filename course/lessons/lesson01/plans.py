"""Lab 01, exercise 01.5: predict the plan of four queries, judged against this backend's planner."""

from __future__ import annotations

from course.engine.exercise import Exercise, Incorrect, visible
from course.lessons.lesson01.catalog import seeded_products
from course.toolkit.plans import PlanSummary, plan_for

PLAN_QUERIES = {
    "A": ({"category": "garden"}, [("name", 1)]),
    "B": ({"price_pence": {"$lt": 500}}, [("name", 1)]),
    "C": ({"tags": "eco"}, None),
    "D": ({"name": "Oak Kite No. 7"}, None),
}
PLAN_INDEXES = ([("category", 1), ("name", 1)], [("price_pence", 1)])


class ReadThePlan(Exercise):
    id = "01.5"
    fixed_answer = True  #: four predictions about one fixed setup: nothing to vary
    title = "Predict the plan"
    answers = ("plan_predictions",)
    requirements = {
        letter: f"query {letter}: the pair (index name or None, sorts in memory True/False) is this backend's plan"
        for letter in PLAN_QUERIES
    }
    hints = (
        "An index can serve a query only if the filter constrains its first field (or the sort starts with it).",
        "When the index that filters does not continue with the sort field, the server sorts in memory.",
        "No index on the filtered field: a collection scan, written here as None.",
    )
    solution_code = """
plan_predictions = {
    "A": ("category_1_name_1", False),
    "B": ("price_pence_1", True),
    "C": (None, False),
    "D": (None, False),
}
"""

    def _actual(self) -> dict[str, PlanSummary]:
        """This backend's plans for the four queries, computed once per backend."""
        cache = self.__dict__.setdefault("_plans", {})
        name = self.lab.backend.name
        if name not in cache:
            products = seeded_products(self.lab)
            for keys in PLAN_INDEXES:
                products.create_index(keys)
            cache[name] = {letter: plan_for(products, self.lab.backend, query, sort)
                           for letter, (query, sort) in PLAN_QUERIES.items()}
        return cache[name]

    def _judge(self, answer, letter: str) -> None:
        predictions = self.expect_type("plan_predictions", answer.plan_predictions, dict,
                                       '{"A": ("some_index_1", True), ...}')
        if letter not in predictions:
            raise Incorrect(f"plan_predictions has no entry for query {letter!r}")
        value = predictions[letter]
        if not (isinstance(value, (tuple, list)) and len(value) == 2
                and (value[0] is None or isinstance(value[0], str)) and isinstance(value[1], bool)):
            raise Incorrect(f"prediction {letter} should be a pair (index name or None, True or False), "
                            f"got {value!r:.60}")
        plan = self._actual()[letter]
        if (value[0], value[1]) != (plan.index, plan.in_memory_sort):
            raise Incorrect(f"query {letter}: ({value[0]!r}, {value[1]!r}) is not this backend's plan: "
                            "go through the three facts above for this filter and sort")

    @visible(points=1, checks="A")
    def query_a(self, answer):
        """Query A: equality on category, sort on name"""
        self._judge(answer, "A")

    @visible(points=2, checks="B")
    def query_b(self, answer):
        """Query B: a range on price_pence, sort on name"""
        self._judge(answer, "B")

    @visible(points=1, checks="C")
    def query_c(self, answer):
        """Query C: a field no index starts with"""
        self._judge(answer, "C")

    @visible(points=2, checks="D")
    def query_d(self, answer):
        """Query D: name alone"""
        self._judge(answer, "D")
