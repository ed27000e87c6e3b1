"""Line charts drawn by the server as SVG geometry (no JavaScript, no chart library).

`line_chart(points)` turns (time, value) pairs into what `templates/history/_chart.html` draws: a polyline
in a fixed view box, a zero line when zero is in range, and the labels of both axes' ends.
"""

import datetime
from dataclasses import dataclass

from django.utils.formats import date_format

WIDTH, HEIGHT = 600, 220
PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 84, 12, 14, 34


@dataclass
class Chart:
    width: int
    height: int
    polyline: str
    area: str
    top_label: str
    bottom_label: str
    first_label: str
    last_label: str
    zero_y: float | None
    last_value: int
    plot_left: int
    plot_right: int
    plot_top: int
    plot_bottom: int
    count: int


def line_chart(points: list[tuple[datetime.datetime, int]]) -> Chart | None:
    """Geometry of a step-by-step line through `points` (x: order of events, so bursts of play stay
    readable; the first and last dates label the ends). None with fewer than two points."""
    if len(points) < 2:
        return None
    values = [value for _, value in points]
    low, high = min(values), max(values)
    if low == high:
        low, high = low - 1, high + 1
    left, right = PAD_LEFT, WIDTH - PAD_RIGHT
    top, bottom = PAD_TOP, HEIGHT - PAD_BOTTOM
    step = (right - left) / (len(points) - 1)

    def y(value: int) -> float:
        return round(bottom - (value - low) * (bottom - top) / (high - low), 1)

    coords = [(round(left + i * step, 1), y(value)) for i, value in enumerate(values)]
    polyline = " ".join(f"{x},{yy}" for x, yy in coords)
    area = f"{coords[0][0]},{bottom} {polyline} {coords[-1][0]},{bottom}"
    return Chart(
        width=WIDTH,
        height=HEIGHT,
        polyline=polyline,
        area=area,
        top_label=f"{high:,}",
        bottom_label=f"{low:,}",
        first_label=date_format(points[0][0], "j M Y"),  # the month in the active language
        last_label=date_format(points[-1][0], "j M Y"),
        zero_y=y(0) if low < 0 < high else None,
        last_value=values[-1],
        plot_left=left,
        plot_right=right,
        plot_top=top,
        plot_bottom=bottom,
        count=len(points),
    )
