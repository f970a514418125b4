"""mongomock evaluates each element of an array literal in an aggregation expression, as a server does."""

from __future__ import annotations

from typing import Callable

from course.store.patch_check import written_for


@written_for("22979231c0bd3508")
def _array_literals_evaluated(original: Callable) -> Callable:
    def _parse_basic_expression(self, expression):
        if isinstance(expression, list):
            return [self.parse(item) for item in expression]
        return original(self, expression)

    return _parse_basic_expression
