"""Lab 03, validation and versioning: exercises and their checks.

The boundary check (03.1) lives here; the reader of old versions (03.2) in
:mod:`~course.lessons.lesson03.reader`; the census (03.3), which needs ``$type``
queries, in :mod:`~course.lessons.lesson03.census`; the server-side validator
(03.4) and its staging (03.5), which need validators, in
:mod:`~course.lessons.lesson03.validator`.  The documents every check uses are
built once in :mod:`~course.lessons.lesson03.data`.

Each exercise's ``requirements`` table is its statement, rule by rule; every
assertion checks one of them (``checks=``), so a single mistake costs only the
points of its own rule.
"""

from __future__ import annotations

import re
from typing import Any

from course.datasets.legacy import CURRENT_VERSION, MAX_TAGS
from course.engine.exercise import Exercise, Incorrect, LearnerRaised, hidden, visible
from course.lessons.lesson03.arguments import call_keeping, difference
from course.lessons.lesson03.census import FieldTypes
from course.lessons.lesson03.data import (BROKEN, KETTLE, REFERENCE_VALIDATOR, broken_cases, fresh, hidden_valid_cases,
                                          product, valid_cases)
from course.lessons.lesson03.reader import ReadEveryVersion
from course.lessons.lesson03.validator import ProductValidator, Staging

TITLE = "Validation and versioning"
SLUG = "validation-and-versioning"

__all__ = ["EXERCISES", "REFERENCE_VALIDATOR", "SLUG", "TITLE"]


def _word(field: str) -> re.Pattern:
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(field)}(?![A-Za-z0-9_])", re.IGNORECASE)


# ---------------------------------------------------------------------------
class BoundaryValidation(Exercise):
    id = "03.1"
    title = "Validate at the boundary and stamp the version"
    answers = ("validate",)
    requirements = {
        "accepts": "a valid product is accepted: tags, views, _id and schema_version may be absent; exactly "
                   "MAX_TAGS tags, price_pence 0, views 0, an Int64 price or counter, an _id of any type, "
                   "schema_version already CURRENT_VERSION",
        "required": "a product without name, category, price_pence or sku is refused",
        "unknown": "a field the table does not list is refused",
        "name": "name must be a non-empty string",
        "category": "category must be one of CATEGORIES",
        "price_pence": "price_pence must be an int (not a bool, not a string of digits, not a float), 0 or more",
        "sku": "sku must be a string that matches SKU_PATTERN as a whole (a trailing newline too is refused)",
        "tags": "tags, when present, must be a list of at most MAX_TAGS strings",
        "views": "views, when present, must be an int (not a bool), 0 or more",
        "schema_version": "schema_version, when present, must already be CURRENT_VERSION",
        "value_error": "a refused product raises ValueError (a subclass of ValueError is fine)",
        "names_field": "the error's message names the field that is wrong",
        "stamp": "a valid product comes back as a dict with the same fields, plus schema_version = CURRENT_VERSION",
        "caller": "the caller's dict is left as it was",
    }
    hints = (
        "Keep a table of fields: name -> a check that returns True for a good value. "
        "Then: every required field present, every field known, every value passing its check.",
        "isinstance(True, int) is True in Python: reject bools before you accept ints. "
        "A string like \"2499\" is not an int either, however much it looks like one. And a pattern's $ also "
        "matches before a final newline: re.fullmatch(SKU_PATTERN, sku) matches the whole string.",
        "Raise ValueError(f\"bad field: {name}\") so the message names the field, and return a new dict: "
        f"{{**doc, \"schema_version\": {CURRENT_VERSION}}}.",
    )
    solution_code = f"""
import re
from course.datasets.legacy import CATEGORIES, CURRENT_VERSION, MAX_TAGS, SKU_PATTERN


def validate(doc):
    \"\"\"Check a product against the current shape; return a copy stamped with the current version.\"\"\"
    fields = {{
        "_id": lambda v: True,
        "name": lambda v: isinstance(v, str) and v != "",
        "category": lambda v: v in CATEGORIES,
        "price_pence": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
        "sku": lambda v: isinstance(v, str) and re.fullmatch(SKU_PATTERN, v) is not None,
        "tags": lambda v: isinstance(v, list) and len(v) <= MAX_TAGS and all(isinstance(t, str) for t in v),
        "views": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
        "schema_version": lambda v: v == CURRENT_VERSION,
    }}
    for name in ("name", "category", "price_pence", "sku"):
        if name not in doc:
            raise ValueError(f"missing field: {{name}}")
    for name, value in doc.items():
        if name not in fields:
            raise ValueError(f"unknown field: {{name}}")
        if not fields[name](value):
            raise ValueError(f"bad field: {{name}} = {{value!r}}")
    return {{**doc, "schema_version": CURRENT_VERSION}}
"""

    # ---- how the learner's validate treated one document ---------------------------------------
    def _outcome(self, answer, document: dict) -> Any:
        """What validate returned for a copy of ``document``, or the LearnerRaised it raised."""
        return self.call("validate", answer.validate, fresh(document), expect_raise=True)

    def _accepts_kettle(self, answer) -> bool:
        return isinstance(self._outcome(answer, KETTLE), dict)

    def _refusal(self, answer, document: dict) -> Any:
        """What signalled the refusal (a LearnerRaised, or a non-dict returned), or None if accepted."""
        outcome = self._outcome(answer, document)
        if isinstance(outcome, LearnerRaised):
            return outcome
        if isinstance(outcome, dict):
            return None
        return outcome  # returned False/None/...: a refusal only when valid products come back as dicts

    def _refuses(self, answer, cases, rule: str) -> None:
        if not self._accepts_kettle(answer):
            raise Incorrect(f"validate refuses even a valid product ({_short(KETTLE)}), so it cannot show that "
                            f"it refuses a bad one ({rule}): make it accept a valid product first")
        for what, document, _ in cases:
            if self._refusal(answer, document) is None:
                raise Incorrect(f"validate accepted a product with {what}: {rule}")

    def _refusals(self, answer, cases) -> list[tuple[str, Any, tuple]]:
        found = [(what, self._refusal(answer, doc), fields) for what, doc, fields in cases]
        found = [(what, refusal, fields) for what, refusal, fields in found if refusal is not None]
        if not found:
            raise Incorrect(f"validate refused none of: {', '.join(w for w, _, _ in cases)}")
        return found

    def _names_fields(self, answer, cases) -> None:
        for what, refusal, fields in self._refusals(answer, cases):
            if not isinstance(refusal, LearnerRaised):
                raise Incorrect(f"validate returned {refusal!r} for a product with {what}: a returned value has "
                                f"no message, so nothing names the field ({fields[0]})")
            message = refusal.message
            if not any(_word(field).search(message) for field in fields):
                raise Incorrect(f"validate refused a product with {what}, but its message ({message[:120]!r}) "
                                f"does not name the field that is wrong ({fields[0]})")

    def _accepts(self, answer, cases) -> None:
        for what, document in cases:
            outcome = self._outcome(answer, document)
            if isinstance(outcome, LearnerRaised):
                raise Incorrect(f"validate refused {what}, which is valid: {outcome}")
            if not isinstance(outcome, dict):
                raise Incorrect(f"validate returned {outcome!r:.60} for {what}, which is valid: "
                                "return the stamped copy (a dict)")

    def _stamps(self, answer, what: str, document: dict, refused_ok: bool = False) -> None:
        outcome = self._outcome(answer, document)
        if isinstance(outcome, LearnerRaised):
            if refused_ok:  # refusing a valid product is the "accepts" rule's failure, not this one's
                return
            raise Incorrect(f"validate refused {what}, so it could not return it stamped: {outcome}")
        stamped = self.expect_type("validate(...)", outcome, dict,
                                   f'the document with "schema_version": {CURRENT_VERSION} added')
        version = stamped.get("schema_version", "<absent>")
        if isinstance(version, bool) or not isinstance(version, int) or version != CURRENT_VERSION:
            raise Incorrect(f"validate returned {what} with schema_version {version!r}: "
                            f"stamp it with CURRENT_VERSION ({CURRENT_VERSION})")
        changed = difference({k: v for k, v in document.items() if k != "schema_version"},
                              {k: v for k, v in stamped.items() if k != "schema_version"})
        if changed:
            raise Incorrect(f"for {what}, validate returned a dict in which {changed}: it should hold the same "
                            "fields, plus schema_version")

    def _leaves_alone(self, answer, what: str, document: dict) -> None:
        _, after = call_keeping(self, "validate", answer.validate, fresh(document))
        changed = difference(document, after)
        if changed:
            raise Incorrect(f"validate changed the caller's dict ({what}): {changed}; the caller's dict should "
                            "stay as it was")

    # ---- visible: every rule of the statement ----------------------------------------------------
    @visible(points=2, checks="accepts")
    def accepts_valid_products(self, answer):
        """Valid products are accepted: no tags or views, exactly MAX_TAGS tags, price 0, long counter and price"""
        self._accepts(answer, valid_cases(stored=False))

    @visible(points=1, checks="required")
    def refuses_missing_fields(self, answer):
        """A product without name, category, price_pence or sku is refused"""
        self._refuses(answer, broken_cases("required", False), "name, category, price_pence and sku are required")

    @visible(points=1, checks="unknown")
    def refuses_unknown_fields(self, answer):
        """A field the table does not list is refused"""
        self._refuses(answer, broken_cases("unknown", False), "a field the table does not list is refused")

    @visible(points=1, checks="name")
    def refuses_bad_names(self, answer):
        """name must be a non-empty string"""
        self._refuses(answer, broken_cases("name", False), "name must be a non-empty string")

    @visible(points=1, checks="category")
    def refuses_bad_categories(self, answer):
        """category must be one of CATEGORIES"""
        self._refuses(answer, broken_cases("category", False), "category must be one of CATEGORIES")

    @visible(points=2, checks="price_pence")
    def refuses_bad_prices(self, answer):
        """price_pence: a string of digits, a bool, a negative number and floats (24.99, 2499.0) are refused"""
        self._refuses(answer, broken_cases("price_pence", False),
                      "price_pence must be an int (not a bool, not a string of digits, not a float), 0 or more")

    @visible(points=1, checks="sku")
    def refuses_bad_skus(self, answer):
        """sku must match SKU_PATTERN as a whole"""
        self._refuses(answer, broken_cases("sku", False),
                      "sku must be a string matching SKU_PATTERN from start to end")

    @visible(points=1, checks="tags")
    def refuses_bad_tags(self, answer):
        """tags: a string, a list holding a number, and MAX_TAGS + 1 tags are refused"""
        self._refuses(answer, broken_cases("tags", False), f"tags must be a list of at most {MAX_TAGS} strings")

    @visible(points=1, checks="views")
    def refuses_bad_views(self, answer):
        """views: a bool, a string, a negative number and a float are refused"""
        self._refuses(answer, broken_cases("views", False), "views must be an int (not a bool), 0 or more")

    @visible(points=1, checks="schema_version")
    def refuses_other_versions(self, answer):
        """A schema_version other than CURRENT_VERSION is refused, not overwritten"""
        self._refuses(answer, broken_cases("schema_version", False),
                      f"a product that says it is another version than {CURRENT_VERSION} must be refused, "
                      "not stamped over")

    @visible(points=1, checks="value_error")
    def raises_value_error(self, answer):
        """Every refusal raises ValueError: a missing, unknown or bad field of any kind"""
        cases = [case for key in self.requirements if key in BROKEN for case in broken_cases(key, False)]
        for what, refusal, _ in self._refusals(answer, cases):
            if not isinstance(refusal, LearnerRaised):
                raise Incorrect(f"validate returned {refusal!r} for a product with {what}: raise ValueError, "
                                "so that no caller can store it by mistake")
            if not refusal.is_a("ValueError"):
                raise Incorrect(f"validate raised {refusal.type_name} for a product with {what}: raise ValueError "
                                "(or a subclass of it), so callers catch every bad write with except ValueError")

    @visible(points=1, checks="names_field")
    def messages_name_the_field(self, answer):
        """The error message names the field that is wrong"""
        cases = [case for key in ("required", "price_pence", "unknown", "views") for case in broken_cases(key, False)]
        self._names_fields(answer, cases)

    @visible(points=1, checks="stamp")
    def returns_a_stamped_copy(self, answer):
        """A valid product comes back with the same fields and schema_version = CURRENT_VERSION"""
        self._stamps(answer, "a new product", product())

    @visible(points=1, checks="caller")
    def leaves_the_caller_alone(self, answer):
        """The caller's dict is left as it was"""
        self._leaves_alone(answer, "a new product", product())

    # ---- hidden: the same rules on other data ----------------------------------------------------
    @hidden(points=1, checks="accepts")
    def accepts_other_valid_products(self, answer):
        """Seeded products of every category, _ids of other types, long prices at 0"""
        self._accepts(answer, hidden_valid_cases(stored=False))

    @hidden(points=1, checks="price_pence")
    def refuses_price_boundaries(self, answer):
        """price_pence -1, False, 0.0 and None are refused"""
        self._refuses(answer, broken_cases("price_pence", False, hidden=True),
                      "price_pence must be an int (not a bool, not a float), 0 or more")

    @hidden(points=1, checks="views")
    def refuses_views_boundaries(self, answer):
        """views False, None and a negative long are refused"""
        self._refuses(answer, broken_cases("views", False, hidden=True), "views must be an int (not a bool), 0 or more")

    @hidden(points=1, checks="tags")
    def refuses_tags_boundaries(self, answer):
        """tags [None], MAX_TAGS + 2 tags and an object are refused"""
        self._refuses(answer, broken_cases("tags", False, hidden=True),
                      f"tags must be a list of at most {MAX_TAGS} strings")

    @hidden(points=1, checks="schema_version")
    def refuses_later_versions(self, answer):
        """schema_version 4 is refused too"""
        self._refuses(answer, broken_cases("schema_version", False, hidden=True),
                      f"a product that says it is another version than {CURRENT_VERSION} must be refused")

    @hidden(points=1, checks="names_field")
    def messages_name_other_fields(self, answer):
        """Messages name the field for names, categories, skus, tags and versions too"""
        cases = [case for key in ("name", "category", "sku", "tags", "schema_version")
                 for case in broken_cases(key, False)]
        self._names_fields(answer, cases)

    @hidden(points=1, checks="stamp")
    def stamps_other_products(self, answer):
        """Products without tags, with MAX_TAGS tags, long counters, already stamped, with an _id come back whole"""
        self._stamps(answer, "a new product", product())
        for what, document in valid_cases(stored=False)[2:]:
            self._stamps(answer, what, document, refused_ok=True)

    @hidden(points=1, checks="caller")
    def leaves_refused_documents_alone(self, answer):
        """A refused product and one with a long counter are left as they were"""
        for what, document, _ in broken_cases("unknown", False)[:1] + broken_cases("tags", False)[1:2]:
            self._leaves_alone(answer, f"a product with {what}", document)
        long_counter = next(doc for what, doc in valid_cases(stored=False) if "counter is a long" in what)
        self._leaves_alone(answer, "a product whose views counter is a long", long_counter)


def _short(document: dict) -> str:
    return "{" + ", ".join(f"{k}: {v!r}" for k, v in list(document.items())[:4]) + ", ...}"


EXERCISES = (BoundaryValidation, ReadEveryVersion, FieldTypes, ProductValidator, Staging)
