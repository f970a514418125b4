"""The audit report as HTML, for a notebook (``Report._repr_html_``): one card per finding."""

from __future__ import annotations

import html
import json

from typing import TYPE_CHECKING

from course.audit.json_data import plain

if TYPE_CHECKING:
    from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from course.audit.report import Report

_COLOURS = {"high": "#b3261e", "medium": "#8a5a00", "low": "#3b5b8a"}


def _e(value) -> str:
    return html.escape(str(value))


def _evidence(evidence: dict) -> str:
    text = json.dumps(plain(evidence), indent=1, ensure_ascii=False)
    if len(text) > 4000:
        text = text[:4000] + "\n..."
    return f"<details><summary>evidence</summary><pre style='font-size:85%'>{_e(text)}</pre></details>"


def render_html(report: Report) -> str:
    """The report as a self-contained HTML fragment (every value escaped)."""
    parts = [f"<div class='course-audit'><h4>Audit of <code>{_e(report.database)}</code> on "
             f"{_e(report.backend)}</h4>"]
    rows = "".join(f"<tr><td><code>{_e(e.collection)}</code></td><td>{e.examined:,}</td><td>{e.documents:,}</td>"
                   f"<td>{_e(e.method)}</td></tr>" for e in report.examined)
    parts.append("<table><tr><th>collection</th><th>examined</th><th>documents</th><th>how</th></tr>"
                 f"{rows}</table>" if rows else "<p>No collections: is the database name right?</p>")
    count = len(report.findings)
    parts.append(f"<p><b>{count} finding{'s' if count != 1 else ''}</b></p>" if count else "<p><b>No findings.</b></p>")
    for finding in report.by_severity():
        colour = _COLOURS[finding.severity]
        see = "".join(f"<li>{_e(ref)}</li>" for ref in finding.see)
        parts.append(
            f"<div style='border-left:4px solid {colour};padding:2px 10px;margin:8px 0'>"
            f"<div><span style='color:{colour};font-weight:bold'>{_e(finding.severity)}</span> "
            f"<code>{_e(finding.kind)}</code> in <code>{_e(finding.where)}</code></div>"
            f"<div>{_e(finding.summary)}</div>"
            f"<div><i>Costs:</i> {_e(finding.why)}</div>"
            f"<div><i>Fix:</i> {_e(finding.how)}</div>"
            f"<div><i>See:</i><ul style='margin:0'>{see}</ul></div>{_evidence(finding.evidence)}</div>")
    if report.not_examined:
        items = "".join(f"<li><code>{_e(n.kind)}</code> ({_e(n.collection or 'every collection')}): "
                        f"{_e(n.reason)}</li>" for n in report.not_examined)
        parts.append(f"<p>Could not examine:</p><ul>{items}</ul>")
    parts.append("</div>")
    return "".join(parts)
