"""mongomock's empty cursor slice is empty, as pymongo's."""

from __future__ import annotations

from typing import Callable

from course.store.patch_check import written_for


@written_for("9b96646b3eb7f155")
def _empty_slice_is_empty(original: Callable) -> Callable:
    def __getitem__(self, index):
        if isinstance(index, slice) and index.stop is not None and index.stop <= (index.start or 0):
            return self.skip(1 << 40)  # past the end: nothing, as pymongo's empty slice
        return original(self, index)

    return __getitem__
