"""Lab 03, exercise 03.2: a reader that renders every stored version of a product the same way.

Its checks read the card line leniently where only the amount matters (so a layout slip costs only the
layout's points) and strictly where the layout is the rule.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

from course.engine.exercise import Exercise, Incorrect, LearnerRaised, hidden, visible
from course.lessons.lesson03.arguments import call_keeping, difference
from course.lessons.lesson03.data import (CURRENT_CASES, HIDDEN_LAYOUT_CASES, LAYOUT_CASES, UNCHANGED_CASES,
                                          V1_CASES, fresh, hidden_reader_cases, line)

_AMOUNT = re.compile(r"£\s*(\d[\d,]*)(?:\.(\d+))?")
_NUMBER = re.compile(r"(\d[\d,]*)(?:\.(\d+))?")


def shown_amount(text: str) -> Decimal | None:
    """The price a card line shows, read leniently (after the last £, else the last number): Decimal pounds."""
    found = _AMOUNT.findall(text) or _NUMBER.findall(text)
    if not found:
        return None
    whole, fraction = found[-1]
    try:
        return Decimal(whole.replace(",", "") + ("." + fraction if fraction else ""))
    except InvalidOperation:
        return None


def _firstdifference(got: str, expected: str) -> str:
    for index, (a, b) in enumerate(zip(got, expected)):
        if a != b:
            return f"from character {index + 1} it reads {got[index:index + 12]!r} where the line has " \
                   f"{expected[index:index + 12]!r}"
    if len(got) > len(expected):
        return f"it goes on after the line ends: {got[len(expected):][:20]!r}"
    return f"it stops early: the line goes on with {expected[len(got):][:20]!r}"


class ReadEveryVersion(Exercise):
    id = "03.2"
    title = "A reader that renders versions 1, 2 and 3 the same way"
    answers = ("render_product",)
    requirements = {
        "layout": 'the line reads "{name} ({category}): £{pounds}.{pence}", the pence always two digits',
        "version1": 'a version 1 price (a string of pounds: "24.99", "12.5", "7") is converted exactly, '
                    "without float rounding",
        "current": "a version 2 or 3 document shows its price_pence in pounds and pence",
        "unchanged": "the document passed in is left as it is (the reader converts; the document stays)",
    }
    hints = (
        "Branch on doc.get(\"schema_version\", 1): version 1 documents have no schema_version field.",
        "Version 1 has price, a string of pounds (\"24.99\", \"12.5\", \"7\"); versions 2 and 3 have price_pence. "
        "Turn both into pence first, then format once.",
        "float(\"4.35\") * 100 is 434.99999999999994: use Decimal(doc[\"price\"]) * 100, or split on the dot.",
        "Format pence as f\"£{pence // 100}.{pence % 100:02d}\".",
    )
    solution_code = """
from decimal import Decimal


def render_product(doc):
    \"\"\"One line of the product card, the same for every version of the document.\"\"\"
    if doc.get("schema_version", 1) == 1:
        pence = int(Decimal(doc["price"]) * 100)
    else:
        pence = doc["price_pence"]
    return f"{doc['name']} ({doc['category']}): £{pence // 100}.{pence % 100:02d}"
"""

    def _line(self, answer, document: dict) -> Any:
        return self.call("render_product", answer.render_product, fresh(document), expect_raise=True)

    def _layout(self, answer, cases) -> None:
        rendered = 0
        for what, document, pence in cases:
            got = self._line(answer, document)
            if isinstance(got, LearnerRaised):
                continue  # a reader that fails on a version loses that version's points, not the layout's
            got = self.expect_type(f"render_product of {what}", got, str, '"Kettle (kitchen): £24.99"')
            rendered += 1
            name, category = document["name"], document["category"]
            pattern = rf"{re.escape(name)} \({re.escape(category)}\): £\d+\.\d\d"
            if not re.fullmatch(pattern, got):
                expected = line(name, category, pence)
                detail = _firstdifference(got, expected)
                if re.fullmatch(rf"{re.escape(name)} \({re.escape(category)}\): £\d+\.\d", got):
                    detail = "the pence have one digit, where the line always shows two"
                raise Incorrect(f"render_product of {what} gave {got!r}: {detail}")
        if not rendered:
            raise Incorrect("render_product raised for every document, so no line could be checked")

    def _amounts(self, answer, cases, advice: str) -> None:
        for what, document, pence in cases:
            got = self._line(answer, document)
            if isinstance(got, LearnerRaised):
                raise Incorrect(f"render_product of {what} raised {got}")
            got = self.expect_type(f"render_product of {what}", got, str, '"Kettle (kitchen): £24.99"')
            amount = shown_amount(got)
            if amount != Decimal(pence) / 100:
                shown = "no price" if amount is None else f"£{amount}"
                raise Incorrect(f"render_product of {what} shows {shown}, not £{pence // 100}.{pence % 100:02d}"
                                f"{advice if amount is not None and abs(amount * 100 - pence) == 1 else ''}")

    @visible(points=1, checks="layout")
    def card_line_layout(self, answer):
        """The card line's layout, two-digit pence included, for each version"""
        self._layout(answer, LAYOUT_CASES)

    @visible(points=2, checks="version1")
    def version1_prices(self, answer):
        """Version 1 prices "24.99", "4.35", "12.5" and "7" are converted exactly"""
        self._amounts(answer, V1_CASES, ': float("4.35") * 100 is 434.99999999999994, a penny short once '
                                        "truncated: a float cannot hold most prices exactly")

    @visible(points=1, checks="current")
    def current_prices(self, answer):
        """Versions 2 and 3 show price_pence as pounds and pence"""
        self._amounts(answer, CURRENT_CASES, "")

    @visible(points=1, checks="unchanged")
    def leaves_documents_alone(self, answer):
        """The reader leaves its documents alone: version 1 prices "24.99", "4.35", "12.5", "7", "12.50"; a version 3"""
        for what, document, _ in UNCHANGED_CASES:
            _, after = call_keeping(self, "render_product", answer.render_product, fresh(document))
            changed = difference(document, after)
            if changed:
                raise Incorrect(f"render_product changed {what}: {changed}. Migration on read converts in the "
                                "reader: the stored document stays as it is")

    @hidden(points=1, checks="layout")
    def other_layouts(self, answer):
        """£0.00, £1000.09, £0.01, £57.05: the layout holds at the edges"""
        self._layout(answer, HIDDEN_LAYOUT_CASES)

    @hidden(points=1, checks="version1")
    def catalog_version1_prices(self, answer):
        """Version 1 products of a seeded catalog, and "0.29", "1.15", "100", "1234.5", "10.15" """
        self._amounts(answer, hidden_reader_cases("version1"), ": a penny off, as a float's rounding makes it")

    @hidden(points=1, checks="current")
    def catalog_current_prices(self, answer):
        """Version 2 and 3 products of a seeded catalog"""
        self._amounts(answer, hidden_reader_cases("current"), "")
