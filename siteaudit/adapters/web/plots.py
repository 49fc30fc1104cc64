"""Plots of the app as plain SVG made on the server (docs/app.md, "Plots"): no script, no inline style
(the page's Content-Security-Policy allows neither), colours from the stylesheet's classes.

Each plot is a `<figure>` holding an `<svg role="img">` named by its `<title>` and `<desc>`, and a table of
every value for screen readers (`visually-hidden`; the SVG is the picture, the table the text). The
drawing is 360 units wide, a phone's width, and scales to its box, so its text stays readable on a phone
and grows on a wide screen. Every piece of text is escaped: labels and reasons may come from audited sites.
"""

from collections.abc import Sequence
from typing import Final

from attrs import frozen
from markupsafe import Markup

WIDTH: Final = 360
HEIGHT: Final = 180
# The drawing area inside the axes' labels.
LEFT: Final = 40
RIGHT: Final = 12
TOP: Final = 12
BOTTOM: Final = 32


@frozen
class Point:
    """One value of a line plot, in order; `value` None is a gap, `note` saying why."""

    label: str
    value: float | None
    note: str = ""


@frozen
class Bar:
    """One bar of a bar plot, with the value it is compared against (`reference`), if any."""

    label: str
    value: float | None
    reference: float | None = None
    note: str = ""


@frozen
class Scale:
    """Values from `low` to `high` onto the drawing's height, `high` at the top."""

    low: float
    high: float

    def y(self, value: float) -> float:
        span = self.high - self.low or 1.0
        inner = HEIGHT - TOP - BOTTOM
        return round(TOP + inner * (self.high - value) / span, 1)


def x_of(index: int, count: int) -> float:
    """The horizontal position of the `index`th of `count` evenly spaced values (one value: centred)."""
    inner = WIDTH - LEFT - RIGHT
    if count <= 1:
        return round(LEFT + inner / 2, 1)
    return round(LEFT + inner * index / (count - 1), 1)


def _number(value: float | None, unit: str) -> str:
    if value is None:
        return "none"
    text = f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"
    return f"{text}{unit}"


def _figure(
    ident: str,
    title: str,
    description: str,
    drawing: Markup,
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
) -> Markup:
    cells = Markup("").join(
        Markup("<tr>{}</tr>").format(Markup("").join(Markup("<td>{}</td>").format(cell) for cell in row))
        for row in rows
    )
    names = Markup("").join(Markup('<th scope="col">{}</th>').format(h) for h in headers)
    return Markup(
        '<figure class="plot" id="{ident}">'
        '<svg viewBox="0 0 {width} {height}" role="img" aria-labelledby="{ident}-title {ident}-desc" '
        'preserveAspectRatio="xMidYMid meet" xmlns="http://www.w3.org/2000/svg">'
        '<title id="{ident}-title">{title}</title><desc id="{ident}-desc">{description}</desc>'
        "{drawing}</svg>"
        '<div class="visually-hidden"><table><caption>{title}</caption>'
        "<thead><tr>{names}</tr></thead><tbody>{cells}</tbody></table></div>"
        "</figure>"
    ).format(
        ident=ident,
        width=WIDTH,
        height=HEIGHT,
        title=title,
        description=description,
        drawing=drawing,
        names=names,
        cells=cells,
    )


def _empty(text: str) -> Markup:
    return Markup('<text class="empty" x="{}" y="{}" text-anchor="middle">{}</text>').format(
        WIDTH / 2, HEIGHT / 2, text
    )


def _axis(scale: Scale, ticks: Sequence[float], unit: str) -> Markup:
    return Markup("").join(
        Markup(
            '<line class="grid" x1="{left}" x2="{right}" y1="{y}" y2="{y}"/>'
            '<text class="tick" x="{label}" y="{base}" text-anchor="end">{text}</text>'
        ).format(
            left=LEFT,
            right=WIDTH - RIGHT,
            y=scale.y(tick),
            label=LEFT - 4,
            base=scale.y(tick) + 4,
            text=_number(tick, unit),
        )
        for tick in ticks
    )


def line_plot(
    points: Sequence[Point],
    *,
    ident: str,
    title: str,
    low: float = 0.0,
    high: float = 100.0,
    unit: str = "",
    empty: str = "Nothing to plot yet.",
) -> Markup:
    """Values in order as a line, on a fixed `low`..`high` scale; a None value breaks the line and is
    marked across the plot with its note. The first and last labels are written under the axis."""
    scale = Scale(low, high)
    rows = [(p.label, _number(p.value, unit), p.note) for p in points]
    if not points:
        return _figure(ident, title, empty, _empty(empty), ("When", "Value", "Note"), rows)
    segments: list[list[tuple[float, float]]] = [[]]
    marks: list[Markup] = []
    gaps: list[Markup] = []
    for i, point in enumerate(points):
        x = x_of(i, len(points))
        if point.value is None:
            if segments[-1]:
                segments.append([])
            gaps.append(
                Markup(
                    '<g class="gap"><title>{label}: no value. {note}</title>'
                    '<line x1="{x}" x2="{x}" y1="{top}" y2="{bottom}"/>'
                    '<text x="{x}" y="{mark}" text-anchor="middle">×</text></g>'
                ).format(
                    label=point.label,
                    note=point.note,
                    x=x,
                    top=TOP,
                    bottom=HEIGHT - BOTTOM,
                    mark=HEIGHT - BOTTOM - 4,
                )
            )
            continue
        y = scale.y(min(max(point.value, low), high))
        segments[-1].append((x, y))
        marks.append(
            Markup('<circle class="dot" cx="{}" cy="{}" r="3"><title>{}: {}</title></circle>').format(
                x, y, point.label, _number(point.value, unit)
            )
        )
    lines = Markup("").join(
        Markup('<polyline class="line" points="{}"/>').format(" ".join(f"{x},{y}" for x, y in segment))
        for segment in segments
        if len(segment) > 1
    )
    labels = Markup('<text class="tick" x="{}" y="{}" text-anchor="start">{}</text>').format(
        LEFT, HEIGHT - 8, points[0].label
    )
    if len(points) > 1:
        labels += Markup('<text class="tick" x="{}" y="{}" text-anchor="end">{}</text>').format(
            WIDTH - RIGHT, HEIGHT - 8, points[-1].label
        )
    known = [p.value for p in points if p.value is not None]
    missing = len(points) - len(known)
    description = (
        f"{len(points)} values from {points[0].label} to {points[-1].label}"
        + (f", latest known {_number(known[-1], unit)}" if known else ", none known")
        + (f"; {missing} without a value (gaps)" if missing else "")
        + "."
    )
    axis = _axis(scale, (low, (low + high) / 2, high), unit)
    drawing = axis + lines + Markup("").join(gaps) + Markup("").join(marks) + labels
    return _figure(ident, title, description, drawing, ("When", "Value", "Note"), rows)


def bar_plot(
    bars: Sequence[Bar],
    *,
    ident: str,
    title: str,
    unit: str = "",
    reference_name: str = "baseline",
    empty: str = "Nothing to plot yet.",
) -> Markup:
    """Bars from zero, each with its reference as a dashed tick across it; a None value draws no bar (a
    dash, with its note). The scale runs from 0 to the largest value or reference."""
    rows = [(b.label, _number(b.value, unit), _number(b.reference, unit), b.note) for b in bars]
    headers = ("What", "Value", reference_name.capitalize(), "Note")
    known = [v for b in bars for v in (b.value, b.reference) if v is not None]
    if not bars or not known:
        return _figure(ident, title, empty, _empty(empty), headers, rows)
    high = max(max(known), 1.0)
    scale = Scale(0.0, high)
    slot = (WIDTH - LEFT - RIGHT) / len(bars)
    width = round(min(slot * 0.6, 48), 1)
    parts = [_axis(scale, (0.0, high / 2, high), unit)]
    for i, bar in enumerate(bars):
        middle = round(LEFT + slot * (i + 0.5), 1)
        left = round(middle - width / 2, 1)
        if bar.value is not None:
            top = scale.y(max(bar.value, 0.0))
            parts.append(
                Markup(
                    '<rect class="bar" x="{}" y="{}" width="{}" height="{}"><title>{}: {}</title></rect>'
                ).format(left, top, width, round(scale.y(0.0) - top, 1), bar.label, _number(bar.value, unit))
            )
        else:
            parts.append(
                Markup(
                    '<text class="tick" x="{}" y="{}" text-anchor="middle"><title>{}</title>–</text>'
                ).format(middle, scale.y(0.0) - 6, bar.note)
            )
        if bar.reference is not None:
            parts.append(
                Markup(
                    '<line class="reference" x1="{}" x2="{}" y1="{y}" y2="{y}"><title>{}: {}</title></line>'
                ).format(
                    round(left - 4, 1),
                    round(left + width + 4, 1),
                    reference_name,
                    _number(bar.reference, unit),
                    y=scale.y(bar.reference),
                )
            )
        parts.append(
            Markup('<text class="tick" x="{}" y="{}" text-anchor="middle">{}</text>').format(
                middle, HEIGHT - 8, bar.label
            )
        )
    description = "; ".join(
        f"{b.label}: {_number(b.value, unit)}"
        + (f" against {reference_name} {_number(b.reference, unit)}" if b.reference is not None else "")
        for b in bars
    )
    return _figure(ident, title, description + ".", Markup("").join(parts), headers, rows)
