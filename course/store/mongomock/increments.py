"""mongomock's $inc of a long stores a long, as a server does."""

from __future__ import annotations

from typing import Callable

from course.store.patch_check import written_for


@written_for("5f2b4236924fffd7")
def _inc_of_a_long_is_a_long(original: Callable) -> Callable:
    from bson.int64 import Int64

    def inc(doc, field_name, value):
        if isinstance(doc, dict):
            current = doc.get(field_name, 0)
        elif isinstance(doc, list) and 0 <= int(field_name) < len(doc):
            current = doc[int(field_name)]
        else:
            current = None
        original(doc, field_name, value)
        if isinstance(value, Int64) or isinstance(current, Int64):
            key = field_name if isinstance(doc, dict) else int(field_name)
            result = doc[key]
            if isinstance(result, int) and not isinstance(result, (bool, Int64)) \
                    and not isinstance(current, (float, bool)) and not isinstance(value, float):
                doc[key] = Int64(result)

    return inc
