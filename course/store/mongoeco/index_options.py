"""mongoeco's indexes as pymongo names them: camelCase options, and drop_index by the generated name."""

from __future__ import annotations

from typing import Callable

from course.store.patch_check import written_for


_CAMEL_INDEX_OPTIONS = {
    "partialFilterExpression": "partial_filter_expression", "expireAfterSeconds": "expire_after_seconds",
    "wildcardProjection": "wildcard_projection", "defaultLanguage": "default_language",
    "languageOverride": "language_override",
}


@written_for("1babb1dc2a77a039")
def _snake_case_index_options(original: Callable) -> Callable:
    from course.store.mongoeco.command_arguments import collation_document

    def create_index(self, keys, *args, **kwargs):
        kwargs = collation_document(kwargs)
        for camel, snake in _CAMEL_INDEX_OPTIONS.items():
            if camel in kwargs:
                kwargs[snake] = kwargs.pop(camel)
        return original(self, keys, *args, **kwargs)

    return create_index


@written_for("0943696f6f682e65")
def _drop_index_by_generated_name(original: Callable) -> Callable:
    def drop_index(self, index_or_name, *args, **kwargs):
        if isinstance(index_or_name, (list, tuple)):
            from pymongo.helpers_shared import _gen_index_name

            index_or_name = _gen_index_name([tuple(pair) for pair in index_or_name])
        return original(self, index_or_name, *args, **kwargs)

    return drop_index
