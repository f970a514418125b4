"""mongoeco's databases as pymongo's: a collection name must be a str."""

from __future__ import annotations

from typing import Callable

from course.store.patch_check import written_for


@written_for("a98049c117ab3ec4")
def _collection_name_is_a_str(original: Callable) -> Callable:
    def get_collection(self, name, *args, **kwargs):
        if not isinstance(name, str):
            raise TypeError(f"name must be an instance of str, not {type(name)}")  # pymongo's words
        return original(self, name, *args, **kwargs)

    return get_collection
