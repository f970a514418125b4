"""Message text for labs 06 and 07: a value shown as evidence, cut to a width with a visible mark."""

from __future__ import annotations

from typing import Any


def clipped(value: Any, width: int = 80) -> str:
    """``repr(value)``, cut to ``width`` characters with "..." when longer (never cut without a mark)."""
    text = repr(value)
    return text if len(text) <= width else text[:max(width - 3, 1)].rstrip(" ,") + "..."
