"""mongomock's index keys as pymongo's: given as a dict, and returned as lists of pairs."""

from __future__ import annotations

from typing import Any, Callable

from course.store.patch_check import written_for


def key_pairs(keys: Any) -> Any:
    """Index keys as a list of (field, direction) pairs when they came as a mapping or dict_items."""
    if isinstance(keys, dict) or type(keys).__name__ == "dict_items":
        return list(dict(keys).items())
    return keys


@written_for("d0a71299f9569c86")
def _keys_as_pairs(original: Callable) -> Callable:
    def create_index(self, key_or_list, *args, **kwargs):
        return original(self, key_pairs(key_or_list), *args, **kwargs)

    return create_index


@written_for("5f99fe629ff42b8e")
def _information_as_pairs(original: Callable) -> Callable:
    def index_information(self, *args, **kwargs):
        info = original(self, *args, **kwargs)
        for spec in info.values():
            if "key" in spec:
                spec["key"] = list(key_pairs(spec["key"]))
        return info

    return index_information
