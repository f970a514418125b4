"""An ipywidgets view of one or more :class:`course.toolkit.migration_sim.SimulationResult` runs.

A slider (description ``"pause"``) picks a pause of the batch job and a
button (description ``"next pause"``) steps to the next one; the text below
shows, for each run, the version 1 and version 2 counts as bars and the
anomalies recorded so far.  :meth:`SimulationView.text_at` gives the same
text without widgets, for tests and plain-text output.
"""

from __future__ import annotations

from html import escape
from typing import Any

from course.toolkit.migration_sim import SimulationResult

BAR_WIDTH = 30


def _bar(count: int, total: int) -> str:
    filled = 0 if total == 0 else round(BAR_WIDTH * count / total)
    return "#" * filled + "." * (BAR_WIDTH - filled)


class SimulationView:
    """A slider and a button over the snapshots of some simulation runs."""

    def __init__(self, *results: SimulationResult):
        if not results:
            raise ValueError("give at least one SimulationResult")
        self.results = results
        self.steps = max(len(r.snapshots) for r in results)
        self._widget: Any = None

    def text_at(self, step: int) -> str:
        """The display for snapshot ``step`` (the last one for runs that ended earlier)."""
        lines = []
        for result in self.results:
            snap = result.snapshots[min(step, len(result.snapshots) - 1)]
            total = snap.v1 + snap.v2
            event = f" ({snap.event})" if snap.event else ""
            lines.append(f"{result.label}: pause {snap.pause}{event}")
            lines.append(f"  v1 {_bar(snap.v1, total)} {snap.v1}")
            lines.append(f"  v2 {_bar(snap.v2, total)} {snap.v2}")
            lines.append(f"  anomalies so far: {snap.anomalies}")
        return "\n".join(lines)

    @property
    def widget(self) -> Any:
        """The ipywidgets box: slider "pause", button "next pause", and the text (built once)."""
        if self._widget is None:
            import ipywidgets as widgets

            slider = widgets.IntSlider(value=0, min=0, max=self.steps - 1, description="pause",
                                       continuous_update=True)
            button = widgets.Button(description="next pause", tooltip="show the next pause of the job")
            text = widgets.HTML(value=self._html(0))

            def show(change: dict) -> None:
                text.value = self._html(change["new"])

            def step(_button: Any) -> None:
                slider.value = (slider.value + 1) % self.steps

            slider.observe(show, names="value")
            button.on_click(step)
            self._widget = widgets.VBox([widgets.HBox([slider, button]), text])
        return self._widget

    def _html(self, step: int) -> str:
        return f"<pre>{escape(self.text_at(step))}</pre>"

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
