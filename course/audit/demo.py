"""``course audit --demo``: the legacy shop of lesson 06, seeded into ``course_06_demo`` and audited."""

from __future__ import annotations

from typing import Any

from course.store.capabilities import Capability, capabilities_of
from course.datasets.legacy_shop import legacy_shop, load_shop, shop_reads
from course.store.namespace import PREFIX, current_tag, guard

DEMO_LAB = "06"


def demo_database() -> str:
    """``course_06_demo`` (with the grader's ``_g<tag>`` when ``COURSE_DB_TAG`` is set)."""
    tag = current_tag()
    return guard(f"{PREFIX}{DEMO_LAB}_demo" + (f"_g{tag}" if tag else ""))


def seed_demo(client: Any, backend: str, *, clean: bool = False, **sizes: int) -> Any:
    """Seed the legacy shop (or its clean copy) into the demo database, run its reads once, return the database.

    ``backend`` is the backend's name: validators are created only where it can
    store them.  The reads give a server's ``$indexStats`` the uses a running
    application would have given it.
    """
    db = client[demo_database()]
    load_shop(db, legacy_shop(clean, **sizes), validators=Capability.VALIDATORS in capabilities_of(backend))
    shop_reads(db, clean=clean)
    return db
