"""A ``$set``/``$addFields`` specification read as a server reads it: an embedded document of fields.

On a server, ``{"$set": {"customer": {"phones": <expression>}}}`` (an aggregation stage, or a stage of an
update pipeline) sets ``phones`` inside ``customer`` and keeps its other fields: a document of field names
is read as the fields to add to the embedded document, the same as ``{"customer.phones": <expression>}``
(MongoDB's ``$addFields`` reference: "$addFields accepts the embedding of objects").  mongoeco and mongomock
replace the whole embedded document with the literal; the engines' patches
(:mod:`course.store.mongoeco.embedded_fields`, :mod:`course.store.mongomock.embedded_fields`) give them the
specification :func:`dotted` rewrites, per document.
"""

from __future__ import annotations

from typing import Any


def _is_fields(value: Any) -> bool:
    """True when ``value`` is a non-empty document of field names (not an expression such as {"$cond": ...})."""
    return isinstance(value, dict) and bool(value) and all(
        isinstance(key, str) and not key.startswith("$") and "." not in key for key in value)


def has_fields(spec: Any) -> bool:
    """True when a ``$set``/``$addFields`` specification holds an embedded document of fields."""
    return isinstance(spec, dict) and any(_is_fields(value) for value in spec.values())


def dotted(spec: Any, document: Any) -> Any:
    """``spec`` for ``document``: each embedded document of fields whose target in ``document`` is an embedded
    document flattened into dotted paths (its fields set inside it); one whose target is missing or not a
    document stays as it is (the engine builds it, as a server does)."""
    if not has_fields(spec):
        return spec
    flat: dict = {}

    def add(path: str, value: Any, current: Any) -> None:
        if _is_fields(value) and isinstance(current, dict):
            for key, inner in value.items():
                add(f"{path}.{key}", inner, current.get(key))
        else:
            flat[path] = value
    for path, value in spec.items():
        if isinstance(path, str) and isinstance(document, dict):
            current: Any = document
            for part in path.split("."):
                current = current.get(part) if isinstance(current, dict) else None
            add(path, value, current)
        else:
            flat[path] = value  # the engine's own message for a field name that is not a string
    return flat
