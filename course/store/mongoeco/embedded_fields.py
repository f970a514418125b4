"""mongoeco's ``$set``/``$addFields`` with an embedded document of fields (a quirk absorbed by
:mod:`course.store.quirks`).

On a server, ``{"$set": {"customer": {"phones": <expression>}}}`` (an aggregation stage, or a stage of an
update pipeline) sets ``phones`` inside ``customer`` and keeps its other fields: a document of field names
is read as the fields to add to the embedded document, the same as ``{"customer.phones": <expression>}``
(MongoDB's ``$addFields`` reference: "$addFields accepts the embedding of objects").  mongoeco replaces the
whole embedded document with the literal, so a right answer to lesson 05's migration lost the customer's
name there.  :func:`course.store.embedded_fields.dotted` rewrites such a specification, per document, into dotted paths where the
target is an embedded document; where it is missing or a scalar the engine builds the document, as a
server does.  An expression (a document whose keys start with ``$``, ``$literal`` included) and an empty
document are left alone.  Not absorbed: a target that is an array of documents (a server sets the fields
in each element; mongoeco replaces the array).
"""

from __future__ import annotations

from typing import Callable

from course.store.embedded_fields import dotted, has_fields
from course.store.patch_check import written_for


@written_for("bfff8d822d04735b")  # the source digest of mongoeco 4.11's transform_stages._apply_add_fields
def fields_added_inside(original: Callable) -> Callable:
    """``_apply_add_fields``, reading an embedded document of fields as a server does (module docstring)."""

    def _apply_add_fields(documents, spec, *args, **kwargs):
        if not has_fields(spec):
            return original(documents, spec, *args, **kwargs)
        original([], spec, *args, **kwargs)  # the engine's own checks of the specification
        return [out for document in documents for out in original([document], dotted(spec, document), *args,
                                                                   **kwargs)]
    return _apply_add_fields


@written_for("d3961a3ce8ad18cf")  # the source digest of mongoeco 4.11's runtime_state._apply_add_fields_states
def fields_added_inside_states(original: Callable) -> Callable:
    """``_apply_add_fields_states``, the same for the engine's documents with their runtime state."""

    def _apply_add_fields_states(states, spec, *args, **kwargs):
        if not has_fields(spec):
            return original(states, spec, *args, **kwargs)
        return [out for state in states
                for out in original([state], dotted(spec, state.public_document()), *args, **kwargs)]
    return _apply_add_fields_states


def patches() -> list[tuple]:
    """The (owner, attribute, patch maker) triples this module adds to :func:`course.store.quirks.absorb`."""
    from mongoeco.core.aggregation import compiled_pipeline, runtime_state, stages, transform_stages

    return [*((module, "_apply_add_fields", fields_added_inside)
              for module in (transform_stages, stages, runtime_state, compiled_pipeline)),
            (runtime_state, "_apply_add_fields_states", fields_added_inside_states)]
