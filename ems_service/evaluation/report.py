"""Writing the evaluation: report.json, report.md (side-by-side tables) and PNG plots (matplotlib's home)."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def _fmt(v: object) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def _table(header: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def markdown(report: dict) -> str:
    """The report as Markdown tables: headline, then per file and pooled, each figure next to its baseline."""
    scopes = list(report["files"]) + ["pooled"]
    d = {**report["details"], "pooled": report["pooled"]}
    h = report["headline"]
    out = ["# WebCoach EMS evaluation", "",
           f"{h['episodes']} episodes from {', '.join(report['files'])}; {h.get('seconds')} s; "
           f"embedding model {report['config']['embedding_model']}; seed {report['config']['seed']}.",
           "Headline = mean of the per-file figures (– where a file has no labels for a figure).", "",
           "## Headline", "", _table(["metric", "value"], [[k, v] for k, v in h.items()]), "",
           "## Retrieval (query = task + first 50% of steps; own task excluded)", "",
           _table(["scope", "P@1 domain", "P@5 domain", "P@5 achievable", "MRR domain", "P@5 task_family", "queries"],
                  [[s, d[s].get("p1_domain"), d[s].get("p5_domain"), d[s].get("p5_domain_achievable"),
                    d[s].get("mrr_domain"), d[s].get("p5_family"), d[s].get("retrieval_queries")] for s in scopes]), "",
           "P@5 achievable = the share of the top 5 that could be from the same site at all (same-site runs of "
           "other tasks in memory, at most 5).", "",
           "P@5 (domain) against memory size:", "",
           _table(["memory"] + list(report["files"]),
                  [[f"{float(frac) * 100:.0f}%"] + [v.get(n) for n in report["files"]]
                   for frac, v in report["memory_curve"].items()]), "",
           "## Failure risk: ROC AUC (coach, fitted with 5-fold CV by task) vs. baselines", ""]
    rows = []
    for s in scopes:
        for label in ["t3", "t5", "t10", "f25", "f50", "f75"]:
            rows.append([s, label + (" (fraction: leaks run length)" if label.startswith("f") else ""),
                         d[s].get(f"n_{label}"), d[s].get(f"failure_rate_{label}"), d[s].get(f"auc_{label}"),
                         d[s].get(f"auc_{label}_default_weights"), d[s].get(f"auc_{label}_seed"),
                         d[s].get(f"auc_{label}_no_memory"), d[s].get(f"brier_{label}")])
    out += [_table(["scope", "cut", "runs", "failure rate", "AUC coach", "AUC default weights", "AUC seed heuristic",
                    "AUC no memory", "Brier coach"], rows), "",
            "## Intervention after step 5 (runs longer than 5 steps)", "",
            _table(["scope", "precision", "recall", "healthy interrupted", "seed precision", "seed recall"],
                   [[s, d[s].get("intervene_precision"), d[s].get("intervene_recall"), d[s].get("healthy_interrupted"),
                     d[s].get("intervene_precision_seed"), d[s].get("intervene_recall_seed")] for s in scopes]), "",
            "## Next action (successful runs; normalized verb + target)", "",
            "Headline: steps whose true action names a target (`click gift cards`, `type boston`); `all` also "
            "counts bare verbs (`click[82]` -> `click`, `scroll`), which any guess of the majority verb matches.", "",
            _table(["scope", "steps", "points", "coach coverage", "coach precision", "frequency coverage",
                    "frequency precision"],
                   [[s, tag or "targeted", d[s].get(f"next_action_points{tag}"), d[s].get(f"next_action_coverage{tag}"),
                     d[s].get(f"next_action_precision{tag}"), d[s].get(f"next_action_coverage_frequency{tag}"),
                     d[s].get(f"next_action_precision_frequency{tag}")] for s in scopes for tag in ("", "_all")]), "",
            "## Advice: what the agent reads (coach asked after steps 5 and 8)", "",
            "internals = share of interventions showing scores, feature words or identity; grounded = naming the "
            "run's own site or a site it was on, a label it acted on, a page it was on, or its repeated action; foreign = carrying an "
            "element id, coordinate, the host of a site neither the task's nor visited by the run, or a value typed by "
            "a retrieved run; most common = share of the most frequent message; looping = runs not labelled "
            "successful whose last three actions are identical; walls = a consent, login or captcha wall visible in "
            "the last step; scroll repeats = the last three actions are the same scroll (reading down a page; not "
            "counted as looping).", "",
            _table(["scope", "prefixes", "interventions", "internals", "grounded", "foreign", "most common",
                    "distinct", "with action/error", "looping runs", "looping warned", "scroll repeats",
                    "scroll repeats interrupted", "walls", "walls named", "healthy interrupted"],
                   [[s, d[s].get("advice_prefixes"), d[s].get("advice_interventions"), d[s].get("advice_internals"),
                     d[s].get("advice_grounded"), d[s].get("advice_foreign"), d[s].get("advice_most_common"),
                     d[s].get("advice_distinct"), d[s].get("advice_with_action_or_error"), d[s].get("looping_runs"),
                     d[s].get("looping_warned"), d[s].get("scroll_repeats"), d[s].get("scroll_repeats_interrupted"),
                     d[s].get("walls_in_view"), d[s].get("walls_named"),
                     d[s].get("advice_healthy_interrupted")] for s in scopes]), "",
            "## Template retrieval on the WebArena task list (webarena-verified)", "",
            _template_line(report.get("template_retrieval") or {}), "",
            "## Risk model that `webcoach calibrate` would serve (one fit on every file)", "",
            "AUC after step 5 per file with that model: "
            + ", ".join(f"{s} {_fmt(d[s].get('auc_t5_served'))}" for s in report["files"])
            + f". Features dropped because their fitted sign contradicted their words: "
            f"{', '.join((report.get('served_model') or {}).get('dropped_for_sign', [])) or 'none'}.", "",
            "## Ten system messages, verbatim (five failing, five healthy dev runs)", ""]
    for m in report.get("messages", []):
        out += [f"**{m['kind']}** · {m['file']} · {m['domain']} · after step {m['after_step']} · task: {m['task'][:160]}",
                "", "last actions: " + " / ".join(f"`{a[:60]}`" for a in m["last_actions"]), "", "```",
                m["system_message"], "```", ""]
    out += ["Plots: roc_t5.png, calibration_t5.png, p5_memory.png."]
    return "\n".join(out) + "\n"


def _template_line(t: dict) -> str:
    if not t.get("available"):
        return f"not measured: {t.get('reason', 'no task list')}"
    return (f"{t['tasks']} tasks, {t['templates']} templates, {t['queries']} queries (templates with 2+ tasks). "
            f"P@5 same template: coach ranking {t['p5_coach']:.3f}, plain vector kNN {t['p5_vector_knn']:.3f}, "
            f"achievable {t['p5_achievable']:.3f}.")


def plots(report: dict, out: Path) -> list[Path]:
    scopes = list(report["files"]) + ["pooled"]
    paths = []
    fig, axes = plt.subplots(1, len(scopes), figsize=(4 * len(scopes), 4), squeeze=False)
    for ax, scope in zip(axes[0], scopes, strict=True):
        curves = report["risk_curves"][scope]["roc"]
        for name, curve in curves.items():
            if curve:
                ax.plot(curve[0], curve[1], label=name)
        ax.plot([0, 1], [0, 1], "k:", lw=0.8)
        ax.set_title(f"ROC after step 5: {scope}", fontsize=9)
        ax.set_xlabel("false positive rate")
        ax.set_ylabel("true positive rate")
        if any(curves.values()):
            ax.legend(fontsize=7)
        else:
            ax.text(0.5, 0.5, "one outcome only:\nno ROC", ha="center", va="center", fontsize=8)
    fig.tight_layout()
    paths.append(out / "roc_t5.png")
    fig.savefig(paths[-1], dpi=100)
    plt.close(fig)

    fig, axes = plt.subplots(1, len(scopes), figsize=(4 * len(scopes), 4), squeeze=False)
    for ax, scope in zip(axes[0], scopes, strict=True):
        bins = report["risk_curves"][scope]["calibration"]
        ax.plot([0, 1], [0, 1], "k:", lw=0.8)
        if bins:
            ax.plot([b["predicted"] for b in bins], [b["observed"] for b in bins], "o-")
        ax.set_title(f"Calibration after step 5: {scope}", fontsize=9)
        ax.set_xlabel("predicted failure risk")
        ax.set_ylabel("observed failure rate")
    fig.tight_layout()
    paths.append(out / "calibration_t5.png")
    fig.savefig(paths[-1], dpi=100)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(5, 4))
    fracs = list(report["memory_curve"])
    for name in report["files"]:
        ax.plot([float(f) * 100 for f in fracs], [report["memory_curve"][f][name] for f in fracs], "o-", label=name)
    ax.set_xlabel("memory size (% of episodes)")
    ax.set_ylabel("P@5 same domain")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7)
    fig.tight_layout()
    paths.append(out / "p5_memory.png")
    fig.savefig(paths[-1], dpi=100)
    plt.close(fig)
    return paths


def write(report: dict, out: Path) -> list[Path]:
    """Write report.json, report.md and the plots into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=2, sort_keys=False))
    (out / "report.md").write_text(markdown(report))
    return [out / "report.json", out / "report.md"] + plots(report, out)
