"""Lesson 04's pattern explorer: sliders in, document size and a fitting pattern out.

The advice is plain Python (:func:`advise`), so it is tested without a browser;
:class:`PatternExplorer` only wires ipywidgets sliders to it.  Every widget has a
stable CSS class (``course-explorer-*``) and description, so a browser test can
find a slider, move it and watch the output text change.
"""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1024 * 1024
SIZE_LIMIT = 16 * MIB
#: Bytes of the parent document without its list, and per-element overhead (type byte, index key, sub-document).
BASE_BYTES = 400
ELEMENT_OVERHEAD = 12
#: Above this a document is "large": every read and every small write of it pays for all of it.
LARGE_BYTES = 1 * MIB
#: An outlier parent holds this many times the typical number of items.
OUTLIER_FACTOR = 100
#: Above this share the "exceptions" are a second main shape, not outliers.
OUTLIER_SHARE_LIMIT = 0.10
#: Reads per write from which values computed at write time pay off.
COMPUTED_READS_PER_WRITE = 10


def size_label(size: int) -> str:
    """How a document size compares with the limits: past 16 MiB by how many times, or over 1 MiB."""
    if size > SIZE_LIMIT:
        return f" ({size / SIZE_LIMIT:,.1f}x the 16 MiB limit: it cannot be stored)"
    if size > LARGE_BYTES:
        return f" ({size / MIB:.1f} MiB: over 1 MiB, every read carries it)"
    return ""


@dataclass(frozen=True)
class Advice:
    """What a scenario's parent document weighs and which pattern fits it."""

    typical_bytes: int
    outlier_bytes: int
    pattern: str
    reason: str
    computed: bool
    outlier_share: float = 0.0

    @property
    def headroom(self) -> int:
        """Bytes left under the 16 MiB limit for a typical parent (negative: it does not fit)."""
        return SIZE_LIMIT - self.typical_bytes

    def text(self) -> str:
        """The advice as plain lines (what the explorer displays)."""
        if self.headroom >= 0:
            headroom = (f"headroom to 16 MiB: {self.headroom:,} bytes "
                        f"({100 * self.typical_bytes / SIZE_LIMIT:.1f}% of the limit used)")
        else:
            headroom = f"over the 16 MiB limit by {-self.headroom:,} bytes: a typical parent cannot be stored"
        if self.outlier_share > 0:
            outliers = (f"outliers: {self.outlier_share:.0%} of parents, each with {OUTLIER_FACTOR}x the items: "
                        f"{self.outlier_bytes:,} bytes" + size_label(self.outlier_bytes))
        else:
            outliers = "outliers: none (0% of parents): every parent is typical"
        lines = [
            f"typical parent document: {self.typical_bytes:,} bytes ({self.typical_bytes / MIB:.2f} MiB)",
            headroom,
            outliers,
            f"pattern: {self.pattern}",
            f"why: {self.reason}",
        ]
        if self.computed:
            lines.append("also: reads outnumber writes, so store totals computed at write time (computed pattern)")
        return "\n".join(lines)


def document_bytes(items: int, bytes_per_item: int) -> int:
    """Approximate BSON size of a parent embedding ``items`` elements of ``bytes_per_item`` bytes each."""
    return BASE_BYTES + items * (bytes_per_item + ELEMENT_OVERHEAD)


def advise(items: int, bytes_per_item: int, reads_per_write: float, outlier_share: float) -> Advice:
    """Advice for a parent with ``items`` typical children, given the access pattern and the share of outliers."""
    typical = document_bytes(items, bytes_per_item)
    outlier = document_bytes(items * OUTLIER_FACTOR, bytes_per_item)
    computed = reads_per_write >= COMPUTED_READS_PER_WRITE
    if typical > SIZE_LIMIT:
        pattern, reason = ("reference (children in their own collection), or bucket them",
                           "a typical parent would not fit in 16 MiB at all")
    elif typical > LARGE_BYTES:
        if reads_per_write >= 1:
            pattern, reason = ("subset: the newest few in the parent, all of them in their own collection",
                               "every read of the parent would carry more than 1 MiB it mostly does not show")
        else:
            pattern, reason = ("bucket: group the children into capped documents",
                               "the list is written more than read and grows without bound")
    elif outlier > LARGE_BYTES and outlier_share > 0:
        if outlier_share <= OUTLIER_SHARE_LIMIT:
            pattern, reason = ("outlier: embed up to a threshold, flag the few parents that overflow",
                               f"{outlier_share:.0%} of parents would exceed 1 MiB; design for the rest")
        else:
            pattern, reason = ("subset or reference: the exceptions are now a second main shape",
                               f"{outlier_share:.0%} of parents exceed 1 MiB: too many for special handling")
    else:
        pattern, reason = ("embed: keep the children in the parent",
                           "the parent stays small and is read whole")
    return Advice(typical, outlier, pattern, reason, computed, outlier_share)


class PatternExplorer:
    """Four sliders (items per parent, bytes per item, reads per write, share of outliers) and the advice."""

    def __init__(self, items: int = 100, bytes_per_item: int = 150, reads_per_write: float = 10.0,
                 outlier_share: float = 0.0):
        import ipywidgets as widgets

        style = {"description_width": "150px"}
        layout = widgets.Layout(width="520px")
        self.items = widgets.IntSlider(value=items, min=1, max=200_000, step=1, description="items per parent",
                                       style=style, layout=layout, continuous_update=False)
        self.bytes_per_item = widgets.IntSlider(value=bytes_per_item, min=10, max=5_000, step=10,
                                                description="bytes per item", style=style, layout=layout,
                                                continuous_update=False)
        self.reads_per_write = widgets.FloatLogSlider(value=reads_per_write, base=10, min=-2, max=3, step=0.1,
                                                      description="reads per write", style=style, layout=layout,
                                                      continuous_update=False)
        self.outlier_share = widgets.FloatSlider(value=outlier_share, min=0.0, max=0.5, step=0.01,
                                                 description="share of outliers", style=style, layout=layout,
                                                 continuous_update=False, readout_format=".0%")
        self.output = widgets.HTML()
        for name in ("items", "bytes_per_item", "reads_per_write", "outlier_share"):
            slider = getattr(self, name)
            slider.add_class("course-explorer-slider")
            slider.add_class(f"course-explorer-{name.replace('_', '-')}")
            slider.observe(self._refresh, names="value")
        self.output.add_class("course-explorer-output")
        self.widget = widgets.VBox([self.items, self.bytes_per_item, self.reads_per_write, self.outlier_share,
                                    self.output])
        self.widget.add_class("course-explorer")
        self._refresh()

    @property
    def advice(self) -> Advice:
        """The advice for the sliders' current values."""
        return advise(self.items.value, self.bytes_per_item.value, self.reads_per_write.value,
                      self.outlier_share.value)

    @property
    def text(self) -> str:
        """The text the explorer shows now."""
        return self.advice.text()

    def _refresh(self, _change=None) -> None:
        from html import escape

        self.output.value = f"<pre class='course-explorer-text'>{escape(self.text)}</pre>"

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
