"""The insights report as files: report.json, and report.html with its plots drawn by matplotlib as inline SVG (one
self-contained page: no script, no external asset, viewable offline)."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# one colour per outcome, in OUTCOMES order (colour-blind safe: Okabe–Ito)
_COLOURS = {
    "answered": "#009E73",
    "not_recorded": "#E69F00",
    "couldnt_find": "#D55E00",
    "operation_requested": "#56B4E9",
    "unavailable": "#999999",
}
_TOP_FIELDS = 12


def write_report(report: dict[str, Any], out_dir: str | Path) -> tuple[Path, Path]:
    """Write report.html and report.json into `out_dir`; returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    html, data = out / "report.html", out / "report.json"
    data.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", "utf-8")
    html.write_text(render_html(report), "utf-8")
    return html, data


def render_html(report: dict[str, Any]) -> str:
    """The report as one HTML page."""
    import jinja2
    from markupsafe import Markup

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ask_engine", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    plots = {
        "per_day": Markup(per_day_svg(report["per_day"], report["outcome_labels"])) if report["per_day"] else None,
        "fields": Markup(fields_svg(report["missing_fields"])) if report["missing_fields"] else None,
    }
    return env.get_template("insights.html.j2").render(r=report, plots=plots, colours=_COLOURS)


def _svg(figure: Any) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    text = buffer.getvalue()
    return text[text.index("<svg") :]  # inline: no XML declaration or doctype


def _figure(width: float, height: float) -> Any:
    import matplotlib

    # Text stays text (no glyph paths): smaller, and searchable in the page; fixed ids keep the output stable.
    matplotlib.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "ask-engine-insights"})
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=96)


def per_day_svg(days: Sequence[dict[str, Any]], labels: dict[str, str]) -> str:
    """Questions per day, stacked by outcome."""
    figure = _figure(9, 3.2)
    axes = figure.add_subplot()
    names = [d["day"] for d in days]
    bottom = [0] * len(days)
    for outcome, colour in _COLOURS.items():
        values = [int(d.get(outcome, 0)) for d in days]
        if any(values):
            axes.bar(names, values, bottom=bottom, color=colour, label=labels.get(outcome, outcome), width=0.7)
            bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    axes.set_ylabel("questions")
    axes.set_title("Questions per day, by outcome", loc="left", fontsize=11)
    axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=9)
    axes.spines[["top", "right"]].set_visible(False)
    if len(names) > 10:
        axes.tick_params(axis="x", labelrotation=45)
    return _svg(figure)


def fields_svg(types: Sequence[dict[str, Any]]) -> str:
    """The most asked-for unrecorded fields, as horizontal bars labelled "product type · field"."""
    rows = sorted(
        ((f["questions"], f"{t['product_type']} · {f['field']}") for t in types for f in t["fields"]),
        key=lambda r: (-r[0], r[1]),
    )[:_TOP_FIELDS]
    rows.reverse()
    figure = _figure(9, 0.8 + 0.32 * len(rows))
    axes = figure.add_subplot()
    axes.barh([label for _, label in rows], [n for n, _ in rows], color=_COLOURS["not_recorded"], height=0.6)
    axes.set_xlabel("questions")
    axes.set_title("Fields shoppers ask for that are not recorded", loc="left", fontsize=11)
    axes.spines[["top", "right"]].set_visible(False)
    axes.xaxis.get_major_locator().set_params(integer=True)
    return _svg(figure)
