"""The audit report as plain text (what ``print(report)`` and ``course audit`` show)."""

from __future__ import annotations

import textwrap

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from course.audit.report import Report


def _wrap(label: str, text: str, indent: str = "      ") -> list[str]:
    return textwrap.wrap(text, width=100, initial_indent=f"    {label}: ", subsequent_indent=indent)


def render_text(report: Report) -> str:
    """Every finding with its evidence summary, cost and fix; what was examined and what could not be."""
    lines = [f"Audit of database {report.database} on {report.backend} "
             f"(at most {report.limit:,} documents read per collection)"]
    if not report.examined:
        lines.append("  no collections: is the database name right? (names are case-sensitive)")
    for examined in report.examined:
        how = "all" if examined.method == "all" else f"{examined.method}"
        lines.append(f"  {examined.collection}: {examined.examined:,} of {examined.documents:,} documents ({how})")
    if report.findings:
        noun = "finding" if len(report.findings) == 1 else "findings"
        lines.append(f"{len(report.findings)} {noun}:")
    else:
        lines.append("No findings.")
    for finding in report.by_severity():
        lines.append(f"  [{finding.severity}] {finding.kind} in {finding.where}")
        lines += _wrap("found", finding.summary)
        lines += _wrap("costs", finding.why)
        lines += _wrap("fix", finding.how)
        lines += [f"    see: {ref}" for ref in finding.see]
    if report.not_examined:
        lines.append("Could not examine:")
        for missing in report.not_examined:
            where = missing.collection or "every collection"
            lines += textwrap.wrap(f"{missing.kind} ({where}): {missing.reason}", width=100,
                                   initial_indent="  ", subsequent_indent="    ")
    return "\n".join(lines)
