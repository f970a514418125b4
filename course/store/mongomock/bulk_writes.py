"""mongomock's bulk_write with pymongo >= 4.11 operations (the new ``sort`` argument)."""

from __future__ import annotations

from typing import Callable

from course.store.patch_check import written_for


@written_for("d5a4a4a7f03b1608", "52322472cc35f7d4")
def _accepts_no_sort(original: Callable) -> Callable:
    def add(self, *args, sort=None, **kwargs):
        if sort is not None:
            raise NotImplementedError("mongomock cannot apply a bulk update with a sort")
        return original(self, *args, **kwargs)

    return add
