"""The seeded data of every lab, one module per dataset: same arguments, same documents, never the clock.

Here: :mod:`~course.datasets.catalog` (labs 00-01), :mod:`~course.datasets.orders` (02),
:mod:`~course.datasets.legacy` (03), :mod:`~course.datasets.patterns` (04), :mod:`~course.datasets.migration`
(05), :mod:`~course.datasets.legacy_shop` (06) and :mod:`~course.datasets.more_patterns` (07).

May use: :mod:`course.store` (the namespace rule) and each other.
"""
