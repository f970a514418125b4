"""Lesson 07, exercise 07.10: the self-check, including preallocation's short section."""

from __future__ import annotations

from course.engine.answer_keys import refuse_other_keys
from course.engine.exercise import Exercise, Incorrect, visible

SELF_CHECK_CHOICES = {
    "preallocation_since_wiredtiger": ("saves rewrites", "saves little", "is required"),
    "tree_move_subtree": ("parent references", "array of ancestors", "materialized paths"),
    "tree_breadcrumb": ("parent references", "child references", "array of ancestors"),
    "approximate_balance": ("yes", "no"),
    "name_on_every_order_view": ("$lookup on every read", "extended reference with a sync path"),
}
SELF_CHECK_ANSWERS = {
    "preallocation_since_wiredtiger": "saves little",
    "tree_move_subtree": "parent references",
    "tree_breadcrumb": "array of ancestors",
    "approximate_balance": "no",
    "name_on_every_order_view": "extended reference with a sync path",
}
_WHY = {
    "preallocation_since_wiredtiger": "Does WiredTiger update a document in place, or write a new version?",
    "tree_move_subtree": "Which pattern stores nothing about a category's grandparents?",
    "tree_breadcrumb": "Which pattern holds the whole way up in the category itself?",
    "approximate_balance": "An approximation is for numbers where being a little off does not matter.",
    "name_on_every_order_view": "Names change rarely and are read on every view: count reads against writes.",
}


class SelfCheck(Exercise):
    id = "07.10"
    title = "Self-check: five short answers"
    answers = ("self_check",)
    fixed_answer = True  #: answers about the lesson: nothing to vary, so no hidden assertion
    requirements = {**{key: f"question {n} (key {key}) is answered right"
                       for n, key in enumerate(SELF_CHECK_ANSWERS, start=1)},
                    "keys": "self_check has one key per question: no key besides the five of the statement"}
    hints = (
        "Re-read the preallocation section: what does WiredTiger write when a document changes?",
        "For the trees, look at the table of which read each pattern serves, and what a move rewrites.",
    )
    solution_code = """
self_check = {
    "preallocation_since_wiredtiger": "saves little",
    "tree_move_subtree": "parent references",
    "tree_breadcrumb": "array of ancestors",
    "approximate_balance": "no",
    "name_on_every_order_view": "extended reference with a sync path",
}
"""

    def _given(self, answer) -> dict:
        return self.expect_type("self_check", answer.self_check, dict,
                                "{'preallocation_since_wiredtiger': ..., ...} with the five keys of the statement")

    def _judge(self, answer, key):
        given = self._given(answer)
        if key not in given:
            raise Incorrect(f"self_check has no key {key!r}: the statement names the five keys")
        choices = SELF_CHECK_CHOICES[key]
        if given[key] not in choices:
            raise Incorrect(f"self_check[{key!r}] should be one of {list(choices)}, got {given[key]!r}")
        if given[key] != SELF_CHECK_ANSWERS[key]:
            raise Incorrect(f"{key}: not {given[key]!r}. {_WHY[key]}")

    @visible(points=1, checks="preallocation_since_wiredtiger")
    def question_1(self, answer):
        """Question 1: what does preallocating a document save since WiredTiger?"""
        self._judge(answer, "preallocation_since_wiredtiger")

    @visible(points=1, checks="tree_move_subtree")
    def question_2(self, answer):
        """Question 2: which tree pattern moves a subtree with one write?"""
        self._judge(answer, "tree_move_subtree")

    @visible(points=1, checks="tree_breadcrumb")
    def question_3(self, answer):
        """Question 3: which tree pattern gives a breadcrumb in one read?"""
        self._judge(answer, "tree_breadcrumb")

    @visible(points=1, checks="approximate_balance")
    def question_4(self, answer):
        """Question 4: may an account balance be approximated?"""
        self._judge(answer, "approximate_balance")

    @visible(points=1, checks="name_on_every_order_view")
    def question_5(self, answer):
        """Question 5: the customer's name on every order view"""
        self._judge(answer, "name_on_every_order_view")

    @visible(points=1, checks="keys")
    def one_key_per_question(self, answer):
        """self_check has no key besides the five questions' keys"""
        refuse_other_keys("self_check", self._given(answer), SELF_CHECK_ANSWERS)
