"""The evaluation protocol: leakage-free retrieval, risk, next-action and intervention figures per file.

Memory holds every episode of every input file; a query never sees runs of its own task (same task_id, or
the same task text when there is none). Risk models are fitted per file (and once pooled) with 5-fold
cross-validation grouped by task, so no score comes from a model that saw its run.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from coach import CoachConfig, Neighbour, PartialRun, RiskModel, advise, fit, next_action, run_features, seed_heuristic
from coach.rank import pool_size, rank
from condenser import Episode, Trajectory, condense, embed_text, normalize_action, task_on_site
from ems_service.dataset import read_jsonl
from ems_service.embeddings import Embedder
from ems_service.evaluation import advice as advice_checks
from ems_service.evaluation.metrics import brier, calibration_bins, mrr, precision_at_k, roc_auc, roc_curve
from ems_service.evaluation.templates import template_retrieval
from ems_service.index.base import IndexRow
from ems_service.index.faiss import NamespaceIndex

logger = logging.getLogger(__name__)

FIXED_T = (3, 5, 10)
ADVICE_T = (5, 8)  # the coach is asked after steps 5 and 8, as an agent's loop would
FRACTIONS = (0.25, 0.5, 0.75)
MEMORY_FRACTIONS = (0.1, 0.25, 0.5, 1.0)
SEED_HIGH, SEED_MODERATE = 0.6, 0.3
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class EvalConfig:
    seed: int = 0
    k: int = 8
    folds: int = 5
    domain_boost: float = 0.25
    healthy_budget: float = 0.1
    max_next_action_steps: int = 15
    coach: CoachConfig = field(default_factory=CoachConfig)


@dataclass
class Item:
    file: str
    index: int
    trajectory: Trajectory
    episode: Episode
    task_key: str
    family: str | None

    @property
    def success(self) -> bool | None:
        return self.trajectory.outcome.success


def task_key(t: Trajectory) -> str:
    """Runs of the same task: the same task_id, else the same task text (case, spacing and closing punctuation
    aside, and a closing "in <the run's site>": the data sets write one task both ways)."""
    return f"id:{t.task_id}" if t.task_id else "text:" + task_on_site(t.task, t.domain)


def _fold(key: str, folds: int, seed: int) -> int:
    return int(hashlib.sha256(f"{seed}:{key}".encode()).hexdigest(), 16) % folds


class _Vectors:
    """Embeds each distinct text once (the real embedder, batched)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.cache: dict[str, np.ndarray] = {}

    def prepare(self, texts: list[str], progress: Progress | None = None) -> None:
        todo = sorted({t for t in texts if t not in self.cache})
        step = 256
        for start in range(0, len(todo), step):
            chunk = todo[start : start + step]
            for text, vec in zip(chunk, self.embedder.embed(chunk), strict=True):
                self.cache[text] = vec
            if progress:
                progress("embedding", min(start + step, len(todo)), len(todo))

    def __getitem__(self, text: str) -> np.ndarray:
        return self.cache[text]


class _Memory:
    """A real FAISS index over a set of items; searches leave out the query's own task."""

    def __init__(self, items: list[Item], members: list[int], vectors: _Vectors, boost: float) -> None:
        self.items = items
        self.boost = boost
        self.index = NamespaceIndex(vectors.embedder.dimension)
        self.index.add([IndexRow(i, vectors[items[i].episode.embed_text], items[i].episode.domain,
                                 items[i].success, items[i].task_key) for i in members])

    def neighbours(self, query: np.ndarray, item: Item, k: int) -> list[Neighbour]:
        """As the coach retrieves: a pool by vector (own site preferred), re-ranked by template, top k."""
        hits = self.index.search_preferring_domain(query, pool_size(k), domain=item.trajectory.domain,
                                                   boost=self.boost, exclude_task_id=item.task_key)
        hits = rank(item.trajectory.task, item.trajectory.domain, hits, domain_boost=self.boost,
                    key=lambda h: (h.score, self.items[h.id].trajectory.task, self.items[h.id].episode.domain))[:k]
        out = []
        for hit in hits:
            ep = self.items[hit.id].episode
            out.append(Neighbour(id=hit.id, similarity=hit.score, success=ep.success, domain=ep.domain, task=ep.task,
                                 summary=ep.summary, trust=ep.trust, n_steps=ep.n_steps,
                                 error_patterns=ep.error_patterns,
                                 failure_categories=[c.value for c in ep.failure_categories],
                                 steps_brief=ep.steps_brief, agent=ep.agent, verified=ep.verified))
        return out


def _prefix(item: Item, t: int) -> PartialRun:
    tr = item.trajectory
    return PartialRun(task=tr.task, steps=tr.steps[:t], domain=tr.domain, start_url=tr.start_url, task_id=tr.task_id,
                      agent=tr.agent)


def _query_text(item: Item, t: int) -> str:
    tr = item.trajectory
    return embed_text(tr.task, tr.domain, tr.actions[:t])


def load_items(files: list[Path]) -> tuple[list[Item], dict[str, int]]:
    items: list[Item] = []
    rejected: dict[str, int] = {}
    for path in files:
        bad = 0
        for n, line in enumerate(read_jsonl(path)):
            if line.trajectory is None:
                bad += 1
                continue
            t = line.trajectory
            items.append(Item(path.name, n, t, condense(t), task_key(t), t.tags.get("task_family")))
        rejected[path.name] = bad
    return items, rejected


def _mean(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return round(float(np.mean(vals)), 4) if vals else None


def _round(v: float | None) -> float | None:
    return None if v is None else round(float(v), 4)


def evaluate(files: list[Path], *, embedder: Embedder, config: EvalConfig | None = None,
             progress: Progress | None = None) -> dict:
    """Run the whole protocol; returns the report (headline, files, pooled, curves)."""
    config = config or EvalConfig()
    started = time.perf_counter()
    items, rejected = load_items(files)
    if not items:
        raise ValueError("no valid episodes in the input files")
    names = list(dict.fromkeys(i.file for i in items))
    vectors = _Vectors(embedder)

    # Every text the protocol will embed, embedded once.
    risk_points = [(i, t, label) for i, it in enumerate(items) if it.success is not None
                   for t, label in [(t, f"t{t}") for t in FIXED_T if len(it.trajectory.steps) > t]
                   + [(max(1, int(round(f * len(it.trajectory.steps)))), f"f{int(f * 100)}") for f in FRACTIONS]]
    next_points = [(i, t) for i, it in enumerate(items) if it.success is True
                   for t in range(1, min(len(it.trajectory.steps), config.max_next_action_steps + 1))]
    half = {i: max(1, len(it.trajectory.steps) // 2) for i, it in enumerate(items)}
    texts = [it.episode.embed_text for it in items] + [_query_text(items[i], half[i]) for i in range(len(items))]
    advice_points = [(i, t) for i, it in enumerate(items) for t in ADVICE_T if len(it.trajectory.steps) > t]
    texts += [_query_text(items[i], t) for i, t, _ in risk_points] + [_query_text(items[i], t) for i, t in next_points]
    texts += [_query_text(items[i], t) for i, t in advice_points]
    vectors.prepare(texts, progress)

    memory = _Memory(items, list(range(len(items))), vectors, config.domain_boost)
    retrieval = _retrieval(items, memory, vectors, half, config, progress)
    rng = np.random.default_rng(config.seed)
    order = rng.permutation(len(items))
    curve = {}
    for frac in MEMORY_FRACTIONS:
        members = sorted(order[: max(1, int(round(frac * len(items))))].tolist())
        sub = memory if frac == 1.0 else _Memory(items, members, vectors, config.domain_boost)
        curve[str(frac)] = {name: _retrieval(items, sub, vectors, half, config, None, only=name)[name]["p5_domain"]
                            for name in names}
    risk = _risk(items, risk_points, memory, vectors, config, names, progress)
    nxt = _next_action(items, next_points, memory, vectors, config, names, progress)
    advice = _advice(items, advice_points, memory, vectors, config, names, risk["models"], progress)

    files_out: dict[str, dict] = {}
    for name in names + ["pooled"]:
        r = retrieval[name] if name in retrieval else {}
        files_out[name] = {
            **r, **risk["summary"][name], **nxt[name], **advice["summary"][name],
            "episodes": sum(1 for it in items if name in (it.file, "pooled")),
        }
    keys = ["p1_domain", "p5_domain", "mrr_domain", "p5_family", "auc_t3", "auc_t5", "auc_t10", "auc_t5_seed",
            "auc_t5_no_memory", "brier_t5", "next_action_coverage", "next_action_precision",
            "next_action_precision_frequency", "intervene_precision", "intervene_recall", "healthy_interrupted",
            "auc_t5_served", "advice_internals", "advice_grounded", "advice_foreign", "advice_most_common",
            "advice_distinct", "advice_with_action_or_error", "looping_warned", "scroll_repeats_interrupted",
            "walls_named",
            "advice_healthy_interrupted"]
    templates = template_retrieval(embedder)
    seconds = round(time.perf_counter() - started, 1)
    headline = {k: _mean([files_out[n].get(k) for n in names]) for k in keys}
    headline["template_p5_webarena"] = templates.get("p5_coach")
    headline["episodes"] = len(items)
    headline["tasks"] = len({it.task_key for it in items})  # runs of one task count once (`task_key`)
    headline["seconds"] = seconds
    for name in names:
        files_out[name]["seconds"] = seconds
    files_out["pooled"]["seconds"] = seconds
    return {
        "headline": headline,
        "files": {n: {k: files_out[n].get(k) for k in keys + ["episodes", "seconds"]} for n in names},
        "pooled": files_out["pooled"],
        "details": {n: files_out[n] for n in names},
        "memory_curve": curve,
        "messages": advice["messages"],
        "template_retrieval": templates,
        "served_model": risk["served"],
        "risk_curves": risk["curves"],
        "rejected_lines": rejected,
        "config": {"seed": config.seed, "k": config.k, "folds": config.folds,
                   "max_next_action_steps": config.max_next_action_steps, "coach": config.coach.__dict__,
                   "files": [str(f) for f in files], "embedding_model": embedder.name},
    }


def _retrieval(items: list[Item], memory: _Memory, vectors: _Vectors, half: dict[int, int], config: EvalConfig,
               progress: Progress | None, only: str | None = None) -> dict:
    per: dict[str, dict[str, list]] = defaultdict(lambda: {"domain": [], "family": [], "best": []})
    members = memory.index.ids()
    same_site: dict[str | None, Counter] = defaultdict(Counter)
    for j in members:
        same_site[items[j].episode.domain][items[j].task_key] += 1
    for i, it in enumerate(items):
        if only is not None and it.file != only:
            continue
        hits = memory.neighbours(vectors[_query_text(it, half[i])], it, 5)
        dom = [items[h.id].episode.domain == it.episode.domain for h in hits]
        site = same_site[it.episode.domain]
        available = sum(site.values()) - site[it.task_key]  # same-site runs of other tasks in memory
        for key in (it.file, "pooled"):
            per[key]["domain"].append(dom)
            per[key]["best"].append([True] * min(5, available))
            if it.family:
                per[key]["family"].append([items[h.id].family == it.family for h in hits])
    return {name: {"p1_domain": _round(precision_at_k(v["domain"], 1)), "p5_domain": _round(precision_at_k(v["domain"], 5)),
                   "mrr_domain": _round(mrr(v["domain"])), "p5_family": _round(precision_at_k(v["family"], 5)),
                   "p5_domain_achievable": _round(precision_at_k(v["best"], 5)),
                   "retrieval_queries": len(v["domain"])}
            for name, v in per.items()}


def _risk(items: list[Item], points: list[tuple[int, int, str]], memory: _Memory, vectors: _Vectors,
          config: EvalConfig, names: list[str], progress: Progress | None) -> dict:
    samples: list[dict[str, Any]] = []
    for n, (i, t, label) in enumerate(points):
        it = items[i]
        run = _prefix(it, t)
        nbs = memory.neighbours(vectors[_query_text(it, t)], it, config.k)
        samples.append({
            "item": i, "t": t, "label": label, "y": int(it.success is False), "file": it.file,
            "fold": _fold(it.task_key, config.folds, config.seed), "run": run, "neighbours": nbs,
            "features": run_features(run, nbs, min_similarity=config.coach.min_similarity),
            "features_nomem": run_features(run, [], min_similarity=config.coach.min_similarity),
            "seed": seed_heuristic(run),
        })
        if progress and n % 200 == 0:
            progress("risk features", n + 1, len(points))
    summary: dict[str, dict] = {}
    curves: dict[str, dict] = {}
    models: dict[tuple[str, int], RiskModel] = {}
    # what `webcoach calibrate` serves for a namespace holding all these files: one fit on every sample
    train = [s for s in samples if s["label"] in {f"t{t}" for t in FIXED_T}]
    try:
        served = fit([s["features"] for s in train], [s["y"] for s in train], healthy_budget=config.healthy_budget)
    except ValueError:
        served = RiskModel()
    for scope in names + ["pooled"]:
        scoped = [s for s in samples if scope in (s["file"], "pooled")]
        scores = _cross_validated(scoped, config, "features")
        for s in scoped:
            models[(scope, s["fold"])] = s["models"]["features"]
        nomem = _cross_validated(scoped, config, "features_nomem")
        out: dict[str, float | None] = {}
        for label in [f"t{t}" for t in FIXED_T] + [f"f{int(f * 100)}" for f in FRACTIONS]:
            idx = [j for j, s in enumerate(scoped) if s["label"] == label]
            y = [scoped[j]["y"] for j in idx]
            out[f"auc_{label}"] = _round(roc_auc([scores[j] for j in idx], y))
            out[f"brier_{label}"] = _round(brier([scores[j] for j in idx], y))
            out[f"auc_{label}_seed"] = _round(roc_auc([scoped[j]["seed"] for j in idx], y))
            out[f"auc_{label}_no_memory"] = _round(roc_auc([nomem[j] for j in idx], y))
            out[f"auc_{label}_default_weights"] = _round(
                roc_auc([RiskModel().score(scoped[j]["features"])[0] for j in idx], y))
            out[f"n_{label}"] = len(idx)
            out[f"failure_rate_{label}"] = _round(float(np.mean(y))) if y else None
        t5 = [j for j, s in enumerate(scoped) if s["label"] == "t5"]
        y5 = [scoped[j]["y"] for j in t5]
        out["auc_t5_served"] = _round(roc_auc([served.score(scoped[j]["features"])[0] for j in t5], y5))
        out.update(_interventions(scoped, t5, scores, config))
        curves[scope] = {
            "roc": {"coach": roc_curve([scores[j] for j in t5], y5) if len(set(y5)) > 1 else None,
                    "seed": roc_curve([scoped[j]["seed"] for j in t5], y5) if len(set(y5)) > 1 else None,
                    "no_memory": roc_curve([nomem[j] for j in t5], y5) if len(set(y5)) > 1 else None},
            "calibration": calibration_bins([scores[j] for j in t5], y5),
        }
        summary[scope] = out
    served_info = {"kind": served.kind, "threshold": served.threshold,
                   "weights": {n: round(w, 4) for n, w in served.weights.items()},
                   "dropped_for_sign": [n for n, w in served.weights.items() if w == 0.0]}
    return {"summary": summary, "curves": curves, "models": models, "served": served_info}


def _cross_validated(samples: list[dict], config: EvalConfig, key: str) -> list[float]:
    """Risk of each sample from a model fitted on the other folds (default weights when a fold cannot fit)."""
    scores = [0.0] * len(samples)
    train_labels = {f"t{t}" for t in FIXED_T}
    for fold in range(config.folds):
        train = [s for s in samples if s["fold"] != fold and s["label"] in train_labels]
        try:
            model = fit([s[key] for s in train], [s["y"] for s in train], healthy_budget=config.healthy_budget)
        except ValueError:
            model = RiskModel()
        for j, s in enumerate(samples):
            if s["fold"] == fold:
                scores[j] = model.score(s[key])[0]
                s.setdefault("models", {})[key] = model
    return scores


def _interventions(scoped: list[dict], t5: list[int], scores: list[float], config: EvalConfig) -> dict:
    """After step 5: does the coach intervene on runs that fail, and leave healthy runs alone?"""
    tp = fp = fn = healthy = healthy_hit = 0
    seed_tp = seed_fp = 0
    for j in t5:
        s = scoped[j]
        g = advise(s["run"], s["neighbours"], risk_model=s["models"]["features"], config=config.coach,
                   features=s["features"])
        fail = s["y"] == 1
        tp += g.intervene and fail
        fp += g.intervene and not fail
        fn += (not g.intervene) and fail
        healthy += not fail
        healthy_hit += g.intervene and not fail
        seed = s["seed"] >= SEED_HIGH
        seed_tp += seed and fail
        seed_fp += seed and not fail
    fails = tp + fn
    return {
        "intervene_precision": _round(tp / (tp + fp)) if tp + fp else None,
        "intervene_recall": _round(tp / fails) if fails else None,
        "healthy_interrupted": _round(healthy_hit / healthy) if healthy else None,
        "intervene_precision_seed": _round(seed_tp / (seed_tp + seed_fp)) if seed_tp + seed_fp else None,
        "intervene_recall_seed": _round(seed_tp / fails) if fails else None,
    }


def _next_action(items: list[Item], points: list[tuple[int, int]], memory: _Memory, vectors: _Vectors,
                 config: EvalConfig, names: list[str], progress: Progress | None) -> dict:
    by_domain: dict[str | None, list[tuple[str, list[str]]]] = defaultdict(list)
    for it in items:
        by_domain[it.episode.domain].append((it.task_key, [normalize_action(a) for a in it.trajectory.actions]))
    stats: dict[str, Counter[str]] = {n: Counter() for n in names + ["pooled"]}
    for n, (i, t) in enumerate(points):
        it = items[i]
        truth = normalize_action(it.trajectory.steps[t].action)
        run = _prefix(it, t)
        nbs = memory.neighbours(vectors[_query_text(it, t)], it, config.k)
        guess = next_action(run, nbs, min_similarity=config.coach.min_similarity)
        freq = Counter(acts[t] for key, acts in by_domain[it.episode.domain] if key != it.task_key and len(acts) > t)
        baseline = min(freq.items(), key=lambda kv: (-kv[1], kv[0]))[0] if freq else None
        targeted = " " in truth  # the true action names a target; bare `click`/`scroll` carry nothing to match
        for scope in (it.file, "pooled"):
            c = stats[scope]
            for prefix, count in (("", True), ("t_", targeted)):
                if not count:
                    continue
                c[prefix + "total"] += 1
                c[prefix + "spoke"] += guess is not None
                c[prefix + "hit"] += guess is not None and guess.norm == truth
                c[prefix + "freq_spoke"] += baseline is not None
                c[prefix + "freq_hit"] += baseline == truth
        if progress and n % 500 == 0:
            progress("next action", n + 1, len(points))
    out = {}
    for scope, c in stats.items():
        row: dict[str, float | None] = {}
        for prefix, tag in (("t_", ""), ("", "_all")):
            row[f"next_action_points{tag}"] = c[prefix + "total"]
            row[f"next_action_coverage{tag}"] = _round(c[prefix + "spoke"] / c[prefix + "total"]) if c[prefix + "total"] else None
            row[f"next_action_precision{tag}"] = _round(c[prefix + "hit"] / c[prefix + "spoke"]) if c[prefix + "spoke"] else None
            row[f"next_action_coverage_frequency{tag}"] = (
                _round(c[prefix + "freq_spoke"] / c[prefix + "total"]) if c[prefix + "total"] else None)
            row[f"next_action_precision_frequency{tag}"] = (
                _round(c[prefix + "freq_hit"] / c[prefix + "freq_spoke"]) if c[prefix + "freq_spoke"] else None)
        out[scope] = row
    return out


def _advice(items: list[Item], points: list[tuple[int, int]], memory: _Memory, vectors: _Vectors, config: EvalConfig,
            names: list[str], models: dict[tuple[str, int], RiskModel], progress: Progress | None) -> dict:
    """The coach asked after steps 5 and 8 of every run, as the agent would be; each message checked."""
    typed: dict[int, list[str]] = {}
    per: dict[str, list[dict]] = defaultdict(list)
    candidates: dict[str, list[tuple[str, int, int, dict]]] = {"failing": [], "healthy": []}
    for n, (i, t) in enumerate(points):
        it = items[i]
        run = _prefix(it, t)
        nbs = memory.neighbours(vectors[_query_text(it, t)], it, config.k)
        for nb in nbs:
            if nb.id not in typed:
                typed[nb.id] = advice_checks.typed_values(items[nb.id].trajectory.actions)
        model = models.get((it.file, _fold(it.task_key, config.folds, config.seed)))
        g = advise(run, nbs, risk_model=model, config=config.coach)
        rec = advice_checks.record(g, run, nbs, typed, it.success)
        per[it.file].append(rec)
        per["pooled"].append(rec)
        if g.intervene and it.success is not None:
            candidates["healthy" if it.success else "failing"].append((it.file, i, t, rec))
        if progress and n % 200 == 0:
            progress("advice", n + 1, len(points))
    messages = []
    for kind, pool in candidates.items():
        by_file: dict[str, list] = defaultdict(list)
        for c in pool:
            by_file[c[0]].append(c)
        picked: list = []
        ordered = [sorted(v, key=lambda c: hashlib.sha256(f"{c[1]}:{c[2]}".encode()).hexdigest()) for v in by_file.values()]
        while len(picked) < 5 and any(ordered):  # round-robin over files, a deterministic shuffle within each
            for lst in ordered:
                if lst and len(picked) < 5:
                    picked.append(lst.pop(0))
        for file, i, t, rec in picked:
            it = items[i]
            messages.append({"kind": kind, "file": file, "task": it.trajectory.task, "domain": it.episode.domain,
                             "after_step": t, "last_actions": [s.action for s in it.trajectory.steps[max(0, t - 3):t]],
                             "system_message": rec["text"]})
    return {"summary": {name: advice_checks.summarize_advice(per.get(name, [])) for name in names + ["pooled"]},
            "messages": messages}
