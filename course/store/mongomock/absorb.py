"""Every mongomock patch, checked all together before any is applied (the list :data:`course.store.quirks.QUIRKS` describes)."""

from __future__ import annotations

import functools

from course.store.mongomock.bulk_writes import _accepts_no_sort
from course.store.mongomock.cursors import _empty_slice_is_empty
from course.store.mongomock.embedded_fields import _fields_added_inside
from course.store.mongomock.expressions import _array_literals_evaluated
from course.store.mongomock.increments import _inc_of_a_long_is_a_long
from course.store.mongomock.index_keys import _information_as_pairs, _keys_as_pairs
from course.store.patch_check import check_replaced
from course.store.patching import PATCHED, apply_patch, check_patches, mark_ours


def absorb_mongomock() -> None:
    """Apply every mongomock patch (checked all together first: a mismatch leaves mongomock as it was)."""
    from mongomock import aggregate as mongomock_aggregate
    from mongomock import collection as mongomock_collection
    from mongomock.aggregate import _Parser
    from mongomock.collection import BulkOperationBuilder, Collection, Cursor

    patches = [
        (_Parser, "_parse_basic_expression", _array_literals_evaluated),
        (Collection, "create_index", _keys_as_pairs),
        (Collection, "index_information", _information_as_pairs),
        (BulkOperationBuilder, "add_update", _accepts_no_sort),
        (BulkOperationBuilder, "add_replace", _accepts_no_sort),
        (Cursor, "__getitem__", _empty_slice_is_empty),
    ]
    check_patches("mongomock", patches)
    inc = mongomock_collection._updaters["$inc"]
    if not getattr(inc, PATCHED, False):
        check_replaced(inc, _inc_of_a_long_is_a_long, "mongomock", "collection._updaters['$inc']")
    add_fields = mongomock_aggregate._PIPELINE_HANDLERS["$addFields"]
    if not getattr(add_fields, PATCHED, False):
        check_replaced(add_fields, _fields_added_inside, "mongomock", "aggregate._PIPELINE_HANDLERS['$addFields']")
    for owner, name, make in patches:
        apply_patch(owner, name, make, "mongomock")
    if not getattr(inc, PATCHED, False):
        mongomock_collection._updaters["$inc"] = mark_ours(functools.wraps(inc)(_inc_of_a_long_is_a_long(inc)))
    if not getattr(add_fields, PATCHED, False):  # $set is the same stage as $addFields
        patched = mark_ours(functools.wraps(add_fields)(_fields_added_inside(add_fields)))
        for stage in ("$addFields", "$set"):
            mongomock_aggregate._PIPELINE_HANDLERS[stage] = patched
