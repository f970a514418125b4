"""An audit's evidence as JSON data: what ``course audit --json`` prints and the HTML report shows."""

from __future__ import annotations

import datetime
from typing import Any

from bson.decimal128 import Decimal128
from bson.objectid import ObjectId


def plain(value: Any) -> Any:
    """``value`` as JSON data: ObjectId and Decimal128 as strings, dates in ISO form, tuples as lists."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    if isinstance(value, (ObjectId, Decimal128)):
        return str(value)
    return repr(value)
