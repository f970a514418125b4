"""A change of numeric type is a change, as on a server: $type says long, $toLong gives a long, $inc keeps
the wider type, and an update or $merge that changes only a value's type writes it."""

from __future__ import annotations

from typing import Any, Callable

from course.store.mongoeco.numeric_types import numeric_types
from course.store.patch_check import written_for
from course.store.patching import PATCHED


@written_for("41a5c24c007b1ea3")
def _long_for_int64(original: Callable) -> Callable:
    import bson

    def type_name(value, *args, **kwargs):
        if isinstance(value, bson.Int64):
            return "long"
        return original(value, *args, **kwargs)

    return type_name


@written_for("00923d10725dfec8")
def _long_conversion_result(original: Callable) -> Callable:
    from mongoeco.core.aggregation.scalar_expressions import BsonInt64, unwrap_bson_numeric

    def typed_conversion_result(value, target, variables):
        converted = original(value, target, variables)
        if target == "long" and converted is not None and not isinstance(converted, BsonInt64) \
                and isinstance(unwrap_bson_numeric(converted), int):
            return BsonInt64(unwrap_bson_numeric(converted))
        return converted

    return typed_conversion_result


@written_for("f25740c266b32c0e")
def _inc_keeps_the_wider_type(original: Callable) -> Callable:
    def bson_add(left, right, *args, **kwargs):
        result = original(left, right, *args, **kwargs)
        kinds = {numeric_types(left), numeric_types(right)}
        if "long" in kinds and kinds <= {"int", "long"} and numeric_types(result) == "int":
            from mongoeco.core.bson_scalars import BsonInt64, unwrap_bson_numeric

            return BsonInt64(int(unwrap_bson_numeric(result)))
        return result

    return bson_add


@written_for("3558b77719ac767f")
def _type_change_is_a_change(original: Callable) -> Callable:
    def document_id_bson_type_changed(before, after):
        return original(before, after) or numeric_types(before) != numeric_types(after)

    return document_id_bson_type_changed


_TYPE_AWARE: dict[type, type] = {}  #: dialect class -> its subclass comparing numeric types too


def _type_aware(dialect: Any) -> Any:
    """A copy of ``dialect`` whose document equality also compares numeric types (5 and 5L differ in BSON)."""
    import copy

    kind = type(dialect)
    if getattr(kind, PATCHED, False):
        return dialect
    aware = _TYPE_AWARE.get(kind)
    if aware is None:
        def values_equal(self, left, right):
            return kind.values_equal(self, left, right) and numeric_types(left) == numeric_types(right)

        aware = _TYPE_AWARE[kind] = type(f"TypeAware{kind.__name__}", (kind,),
                                         {"__slots__": (), "values_equal": values_equal, PATCHED: True})
    clone = copy.copy(dialect)
    object.__setattr__(clone, "__class__", aware)
    return clone


@written_for("f904ed0cb3372dbc")
def _merge_writes_type_changes(original: Callable) -> Callable:
    import dataclasses

    async def merge_document(self, *args, operation_context=None, **kwargs):
        if operation_context is not None:
            operation_context = dataclasses.replace(operation_context, dialect=_type_aware(operation_context.dialect))
        return await original(self, *args, operation_context=operation_context, **kwargs)

    return merge_document
