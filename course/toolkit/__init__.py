"""What the lessons measure and show: sizes, plans, the census, simulators, storage costs, plots.

Here: :mod:`~course.toolkit.sizes` and :mod:`~course.toolkit.measure` (document sizes and timings),
:mod:`~course.toolkit.plans`, :mod:`~course.toolkit.matching` and :mod:`~course.toolkit.pagination` (query
plans and which index serves a query), :mod:`~course.toolkit.census` (the ``$type`` census),
:mod:`~course.toolkit.explorer` (document size and headroom), the migration simulator
(:mod:`~course.toolkit.migration_sim`, ``migration_view``, ``migration_audit``), the sharding simulator
(:mod:`~course.toolkit.sharding_sim`), :mod:`~course.toolkit.validation_settings`, and WiredTiger's storage
costs and the cost story plot (:mod:`~course.toolkit.storage_costs`, :mod:`~course.toolkit.cost_story`).

May use: :mod:`course.store`, :mod:`course.datasets` and :mod:`course.setup` (whether WiredTiger is built).
Used by the lessons' notebooks and checks, and by the audit.
"""
