"""mongomock's ``$set``/``$addFields`` stage with an embedded document of fields: set inside, as a server does.

mongomock replaces ``customer`` with the literal of ``{"$set": {"customer": {"phones": ...}}}``; a server
sets ``customer.phones`` and keeps the customer's other fields (:mod:`course.store.embedded_fields`).  The
stage is run once per document with the specification :func:`course.store.embedded_fields.dotted` gives for
it (mongomock's own dotted paths replace a scalar with a document, as a server does).
"""

from __future__ import annotations

from typing import Callable

from course.store.embedded_fields import dotted, has_fields
from course.store.patch_check import written_for


@written_for("44c3b2fb380ac915")  # the source digest of mongomock 4.3's aggregate._handle_add_fields_stage
def _fields_added_inside(original: Callable) -> Callable:
    def _handle_add_fields_stage(in_collection, database, options):
        if not has_fields(options):
            return original(in_collection, database, options)
        return [out for document in in_collection
                for out in original([document], database, dotted(options, document))]

    return _handle_add_fields_stage
