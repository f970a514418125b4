"""mongoeco's document encoding with one validation pass, not one per level (a quirk absorbed by :mod:`course.store.quirks`).

mongoeco encodes every document it stores (``DocumentCodec.encode``), twice on
an insert.  The encoder first validates the whole value (keys are strings, no
sets, integers within int64, decimals representable), then encodes each field,
and each field's encoding validates that field again, down to every scalar: a
value nested ``n`` levels deep is validated ``n + 1`` times, and every scalar
then walks a chain of about thirty type tests before it is returned unchanged.
Lesson 06's bestseller (one product with 20,000 reviews) takes most of the 3 s
its shop needs to load on the embedded engine.

:func:`encoding_validated_once` keeps the encoder's result and its errors
exactly (the same exception from the same first pass, which walks everything
before any field is encoded), and only drops what cannot change them:

* the whole-value validation walks the value in the validator's own order,
  passing a plain scalar at once and handing every other value to the
  validator itself;
* once a document has passed the whole-value validation, the validations of its
  parts are skipped (they walk a subset of what was just checked, with the
  same checks);
* a plain ``str``, ``float``, ``bool`` or ``None``, and an ``int`` within int64,
  is returned as it is, which is what the chain of tests ends in for them.

Every other value (a list at the top, a date, an ObjectId, an Int64, a
Decimal128, a ``SON``, an integer past int64...) goes the encoder's own way.
"""

from __future__ import annotations

import threading
from typing import Any

from course.store.patch_check import check_source

_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1
_AS_IS = frozenset({str, float, bool, type(None)})
PATCH = "course/store/mongoeco/codec_speed.py"


#: the source digests of mongoeco 4.11's ``DocumentCodec.encode`` and ``validate_bson_value``, which this replaces
WRITTEN_FOR = {"encode": ("a89dded8864e7fbe",), "validate_bson_value": ("e3a0a558125ce40c",)}


def check_codec(codec_module: Any, mark: str = "_course_patched") -> None:
    """Raise ``PatchMismatch`` unless ``codec_module``'s ``DocumentCodec.encode`` and ``validate_bson_value``
    are the functions :func:`encoding_validated_once` was written for (nothing to check once patched)."""
    if getattr(codec_module.DocumentCodec.encode, mark, False):
        return
    check_source(codec_module.DocumentCodec.__dict__["encode"].__func__, WRITTEN_FOR["encode"], "mongoeco", PATCH)
    check_source(codec_module.validate_bson_value, WRITTEN_FOR["validate_bson_value"], "mongoeco", PATCH)


def encoding_validated_once(codec_module: Any, mark: str = "_course_patched") -> None:
    """Patch ``codec_module`` (``mongoeco.core.codec``) as the module docstring says.

    The new ``encode`` carries the attribute ``mark``, and mongoeco's own as ``__wrapped_original__`` (as
    the new ``validate_bson_value`` does), for the tests that compare the two; a module already patched is
    left as it is, and one whose functions are not those this was written for raises ``PatchMismatch``
    (:func:`check_codec`).
    """
    codec = codec_module.DocumentCodec
    if getattr(codec.encode, mark, False):
        return
    check_codec(codec_module, mark)
    original_encode = codec.__dict__["encode"].__func__
    original_validate = codec_module.validate_bson_value
    state = threading.local()

    def validate_bson_value(value: Any) -> None:
        if getattr(state, "validated", False):
            return  # a part of a document whose whole value passed this validation
        original_validate(value)

    def validate_whole(value: Any) -> None:
        # validate_bson_value's own walk (the same order, so the same first error), plain scalars passed at once
        pending = [value]
        while pending:
            current = pending.pop()
            kind = type(current)
            if kind in _AS_IS or (kind is int and _INT64_MIN <= current <= _INT64_MAX):
                continue
            if isinstance(current, dict):
                for key in current:
                    if not isinstance(key, str):
                        original_validate({key: None})  # raises the validator's own error for that key
                pending.extend(current.values())
            elif isinstance(current, (list, tuple)):
                pending.extend(current)
            else:
                original_validate(current)  # any other value: the validator's own checks of it

    def encode(data: Any) -> Any:
        kind = type(data)
        if kind in _AS_IS or (kind is int and _INT64_MIN <= data <= _INT64_MAX):
            return data
        if getattr(state, "validated", False) or not isinstance(data, dict):
            return original_encode(data)
        validate_whole(data)  # the encoder's own first step: the whole value, before any field
        state.validated = True
        try:
            return original_encode(data)
        finally:
            state.validated = False

    setattr(encode, mark, True)
    encode.__wrapped_original__ = original_encode
    validate_bson_value.__wrapped_original__ = original_validate
    codec_module.validate_bson_value = validate_bson_value
    codec.encode = staticmethod(encode)
