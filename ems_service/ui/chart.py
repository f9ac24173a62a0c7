"""The risk chart of a live session as plain numbers for an inline SVG: no script, no chart library, nothing
fetched. The template draws it; this module only places points on the canvas."""

from __future__ import annotations

from dataclasses import dataclass

WIDTH, HEIGHT = 880, 260
LEFT, RIGHT, TOP, BOTTOM = 44, 16, 14, 34


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    n_steps: int
    risk: float
    intervene: bool


@dataclass(frozen=True)
class Line:
    y: float
    label: str


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    points: list[Point]
    path: str  # the polyline's `points` attribute
    y_ticks: list[Line]
    x_ticks: list[tuple[float, int]]
    thresholds: list[Line]  # the coach's moderate and high risk lines
    plot: tuple[float, float, float, float]  # left, top, right, bottom


def _x_ticks(last: int) -> list[int]:
    step = max(1, -(-last // 8))  # at most ~8 labels
    return list(range(0, last + 1, step)) if last else [0]


def risk_chart(trace: list[dict], *, moderate: float, high: float) -> Chart:
    """Place each {n_steps, risk, intervene} of a session's trace: x = steps seen, y = failure risk (0..1)."""
    right, bottom = WIDTH - RIGHT, HEIGHT - BOTTOM
    last = max((int(p["n_steps"]) for p in trace), default=0)
    span = max(last, 1)

    def x(n: float) -> float:
        return round(LEFT + (right - LEFT) * n / span, 1)

    def y(risk: float) -> float:
        return round(bottom - (bottom - TOP) * min(max(risk, 0.0), 1.0), 1)

    points = [Point(x(int(p["n_steps"])), y(float(p["risk"])), int(p["n_steps"]), float(p["risk"]),
                    bool(p.get("intervene"))) for p in trace]
    return Chart(
        width=WIDTH, height=HEIGHT, points=points, path=" ".join(f"{p.x},{p.y}" for p in points),
        y_ticks=[Line(y(v), f"{v:.2f}".rstrip("0").rstrip(".")) for v in (0.0, 0.25, 0.5, 0.75, 1.0)],
        x_ticks=[(x(n), n) for n in _x_ticks(last)],
        thresholds=[Line(y(moderate), "moderate"), Line(y(high), "high")],
        plot=(LEFT, TOP, right, bottom),
    )
