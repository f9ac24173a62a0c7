"""Template retrieval on the WebArena task list: do runs of the same task template come back first?

The task list (tasks only, no runs) and its template ids come from the `webarena-verified` package
(installed without its dependencies by `make install`; only its JSON asset is read, the package is never
imported). Memory = every other task (task + site embedded as an episode with no steps); a query is a task
as the coach would ask at step 0; ranking = the coach's (coach.rank: vector similarity + own site +
template similarity over a pool). P@5 = share of the top 5 with the query's template id, over tasks whose
template has at least one other task; "achievable" = the best any ranking could reach.
"""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path

import numpy as np

from coach.rank import pool_size, rank
from condenser import embed_text
from ems_service.embeddings import Embedder

ASSET = Path("assets") / "dataset" / "webarena-verified.json"


def webarena_tasks() -> list[dict] | None:
    """The WebArena-Verified task list shipped by the package, or None when it is not installed."""
    spec = importlib.util.find_spec("webarena_verified")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / ASSET
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def template_retrieval(embedder: Embedder, *, k: int = 5, boost: float = 0.25) -> dict:
    """P@k of same-template tasks, with the coach's ranking and with plain vector kNN, on the WebArena list."""
    tasks = webarena_tasks()
    if tasks is None:
        return {"available": False, "reason": "webarena-verified is not installed (make install adds it)"}
    texts = [t["intent"] for t in tasks]
    sites = [(t.get("sites") or ["unknown"])[0] for t in tasks]
    templates = [t["intent_template_id"] for t in tasks]
    vectors = embedder.embed([embed_text(task, site, []) for task, site in zip(texts, sites, strict=True)])
    sims = vectors @ vectors.T
    counts = Counter(templates)
    coach_p, knn_p, best = [], [], []
    for i in range(len(tasks)):
        if counts[templates[i]] < 2:
            continue
        row = sims[i].copy()
        row[i] = -np.inf
        order = np.argsort(-row, kind="stable")
        pool = [int(j) for j in order[: pool_size(k)]]
        ranked = rank(texts[i], sites[i], pool, key=lambda j: (float(sims[i, j]), texts[j], sites[j]),
                      domain_boost=boost)
        coach_p.append(np.mean([templates[j] == templates[i] for j in ranked[:k]]))
        knn_p.append(np.mean([templates[int(j)] == templates[i] for j in order[:k]]))
        best.append(min(k, counts[templates[i]] - 1) / k)
    return {"available": True, "tasks": len(tasks), "templates": len(counts), "queries": len(coach_p),
            f"p{k}_coach": round(float(np.mean(coach_p)), 4), f"p{k}_vector_knn": round(float(np.mean(knn_p)), 4),
            f"p{k}_achievable": round(float(np.mean(best)), 4)}
