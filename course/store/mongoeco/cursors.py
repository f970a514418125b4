"""mongoeco's cursors as pymongo's: iterators (next()), sliced and indexed by skip and limit."""

from __future__ import annotations

from typing import Callable

from course.store.patching import PATCHED, mark_ours


def _iterator_protocol(cursor_class: type) -> None:
    if getattr(cursor_class, PATCHED, False):
        return

    def __next__(self):
        iterator = self.__dict__.get("_course_iterator")
        if iterator is None:
            iterator = self._course_iterator = iter(self)
        return next(iterator)

    cursor_class.__next__ = mark_ours(__next__)
    if not hasattr(cursor_class, "next"):
        cursor_class.next = __next__
    setattr(cursor_class, PATCHED, True)


def _sliceable(original: Callable | None) -> Callable:
    def __getitem__(self, index):
        if isinstance(index, slice):
            if index.step not in (None, 1) or (index.start or 0) < 0 or (index.stop is not None and index.stop < 0):
                raise IndexError("a cursor takes slices with non-negative bounds and no step")
            start = index.start or 0
            cursor = self.skip(start) if start else self
            if index.stop is not None:
                # an empty slice is a cursor past the end, as pymongo's is
                cursor = cursor.limit(index.stop - start) if index.stop > start else self.skip(1 << 40)
            return cursor
        if isinstance(index, int) and not isinstance(index, bool):
            if index < 0:
                raise IndexError("a cursor does not take negative indexes")
            for document in self.clone().skip(index).limit(1):
                return document
            raise IndexError("no such item for Cursor instance")
        if original is not None:
            return original(self, index)
        raise TypeError(f"cursor indexes must be ints or slices, not {type(index).__name__}")

    return __getitem__
