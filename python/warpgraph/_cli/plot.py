"""`--plot FILE`: throughput per workload (warpgraph / LangGraph / floor) and stored bytes
against history length. `.png` through matplotlib (the `warpgraph[bench]` extra); `.html`
is one self-contained file (inline SVG, no scripts, no external resources)."""

from __future__ import annotations

import html
import math
from typing import Any

SIDES = ("warpgraph", "langgraph", "floor")
COLORS = {"warpgraph": "#1f77b4", "langgraph": "#ff7f0e", "floor": "#7f7f7f"}
PLOT_EXTENSIONS = (".png", ".html")
PNG_HINT = "pip install 'warpgraph[bench]'"


def _bars(report: dict[str, Any]) -> list[tuple[str, dict[str, float]]]:
    out = []
    for r in report["results"]:
        label = (
            r["workload"]
            if r["metric"] in ("steps", "tasks", "subgraphs", "checkpoints")
            else f"{r['workload']}: {r['metric']}"
        )
        vals = {s: r["sides"][s]["median"] for s in SIDES if s in r["sides"]}
        out.append((label, {k: v for k, v in vals.items() if v}))
    return out


def _title(report: dict[str, Any]) -> str:
    c = report["config"]
    return f"warpgraph bench: saver {c['saver']}, durability {c['durability']}"


def write_plot(report: dict[str, Any], path: str) -> None:
    if path.lower().endswith(".png"):
        write_png(report, path)
    else:
        write_html(report, path)


def write_png(report: dict[str, Any], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bars = _bars(report)
    storage = [s for s in report["storage"] if s["series"]]
    ncols = 2 if storage else 1
    fig, axes = plt.subplots(1, ncols, figsize=(7 * ncols, max(3.0, 0.45 * len(bars) + 1.5)))
    ax = axes[0] if ncols == 2 else axes
    sides = [s for s in SIDES if any(s in v for _, v in bars)]
    height = 0.8 / max(1, len(sides))
    for j, side in enumerate(sides):
        ys = [i + j * height for i in range(len(bars))]
        ax.barh(
            ys, [v.get(side, 0) for _, v in bars], height=height, label=side, color=COLORS[side]
        )
    ax.set_yticks([i + 0.4 - height / 2 for i in range(len(bars))])
    ax.set_yticklabels([b[0] for b in bars])
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("throughput per second (units per workload; log scale)")
    ax.set_title(_title(report))
    ax.legend(loc="lower right")
    if storage:
        ax2 = axes[1]
        for entry in storage:
            for side, points in entry["series"].items():
                if points:
                    ax2.plot(
                        [p[0] for p in points],
                        [p[1] / 1024 for p in points],
                        marker="o",
                        label=side,
                        color=COLORS.get(side),
                    )
        ax2.set_xlabel("checkpoints in the thread")
        ax2.set_ylabel("KiB stored")
        ax2.set_title("stored bytes against history length")
        ax2.legend()
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=110)
    plt.close(fig)


def _svg_bars(bars: list[tuple[str, dict[str, float]]]) -> str:
    width, label_w, row_h = 760, 260, 14
    sides = [s for s in SIDES if any(s in v for _, v in bars)]
    values = [v for _, d in bars for v in d.values() if v > 0]
    if not values:
        return "<p>no throughput results</p>"
    lo, hi = math.log10(min(values)) - 0.3, math.log10(max(values)) + 0.1
    group_h = row_h * len(sides) + 8
    height = group_h * len(bars) + 30
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">']
    for i, (label, vals) in enumerate(bars):
        y0 = 10 + i * group_h
        parts.append(
            f'<text x="0" y="{y0 + group_h / 2}" font-size="12">{html.escape(label)}</text>'
        )
        for j, side in enumerate(sides):
            v = vals.get(side)
            if not v:
                continue
            w = (math.log10(v) - lo) / (hi - lo) * (width - label_w - 80)
            y = y0 + j * row_h
            parts.append(
                f'<rect x="{label_w}" y="{y}" width="{max(w, 1):.1f}" '
                f'height="{row_h - 2}" fill="{COLORS[side]}"><title>{side}: {v:.4g}/s'
                "</title></rect>"
            )
            parts.append(
                f'<text x="{label_w + w + 4:.1f}" y="{y + row_h - 4}" font-size="10">{v:.3g}</text>'
            )
    legend_y = height - 8
    for j, side in enumerate(sides):
        parts.append(
            f'<rect x="{label_w + j * 110}" y="{legend_y - 9}" width="10" height="10" '
            f'fill="{COLORS[side]}"/><text x="{label_w + j * 110 + 14}" y="{legend_y}" '
            f'font-size="11">{side}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _svg_lines(storage: list[dict[str, Any]]) -> str:
    series = [(side, pts) for e in storage for side, pts in e["series"].items() if pts]
    if not series:
        return ""
    width, height, pad = 760, 320, 50
    xs = [p[0] for _, pts in series for p in pts]
    ys = [p[1] for _, pts in series for p in pts]
    xmax, ymax = max(xs) or 1, max(ys) or 1

    def pos(p: list[int]) -> str:
        x = pad + p[0] / xmax * (width - 2 * pad)
        y = height - pad - p[1] / ymax * (height - 2 * pad)
        return f"{x:.1f},{y:.1f}"

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">',
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" '
        + 'stroke="black"/>',
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="black"/>',
        f'<text x="{width / 2 - 60}" y="{height - 15}" font-size="12">checkpoints in the '
        + f"thread (max {xmax})</text>",
        f'<text x="5" y="{pad - 15}" font-size="12">bytes stored (max {ymax:,})</text>',
    ]
    for k, (side, pts) in enumerate(series):
        color = COLORS.get(side, "black")
        parts.append(
            f'<polyline fill="none" stroke="{color}" stroke-width="2" '
            f'points="{" ".join(pos(p) for p in pts)}"/>'
        )
        parts.append(
            f'<text x="{width - pad - 100}" y="{pad + 15 * k}" font-size="11" '
            f'fill="{color}">{side}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def write_html(report: dict[str, Any], path: str) -> None:
    from warpgraph._cli.bench.machine import header_lines

    head = "".join(f"<li>{html.escape(line)}</li>" for line in header_lines(report["machine"]))
    lines = _svg_lines(report["storage"])
    doc = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(_title(report))}</title></head><body>"
        f"<h1>{html.escape(_title(report))}</h1><ul>{head}</ul>"
        f"<p><code>{html.escape(' '.join(report['command']))}</code></p>"
        "<h2>Throughput per second (median of the repeats, log scale)</h2>"
        f"{_svg_bars(_bars(report))}"
        + (f"<h2>Stored bytes against history length</h2>{lines}" if lines else "")
        + "</body></html>\n"
    )
    with open(path, "w", encoding="utf-8") as f:
        f.write(doc)
