"""The advice checks of `webcoach eval` applied to the coach of an older commit (the "before" column).

Run from a worktree of that commit, with this checkout's checks loaded by path:

    git worktree add /tmp/before 1b04c9d
    cd /tmp/before && PYTHONPATH=/tmp/before HF_HUB_OFFLINE=1 /path/to/main/.venv/bin/python \
        /path/to/main/benchmarks/advice_before.py /path/to/main > before_advice.json

The old coach is asked after steps 5 and 8 of every run, as in the eval, with a risk model fitted per file on
prefixes after 3, 5 and 10 steps (one fit per file, not cross-validated: the old protocol kept no per-fold
models), and its messages are judged by the new `ems_service/evaluation/advice.py`.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import defaultdict
from pathlib import Path


def _load(name: str, path: Path):  # a module loaded by path
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(main_checkout: Path) -> dict:
    import condenser

    if not hasattr(condenser, "registrable_domain"):  # the checks need it; older commits lack it
        condenser.registrable_domain = _load("sites_new", main_checkout / "condenser" / "sites.py").registrable_domain
    checks = _load("advice_checks", main_checkout / "ems_service" / "evaluation" / "advice.py")
    from coach import RiskModel, advise, fit, run_features
    from ems_service import Embedder
    from ems_service.dataset import dev_data_dir
    from ems_service.evaluation import protocol as old

    data = dev_data_dir()
    files = [data / f"{n}.jsonl" for n in ("mind2web_demos", "online_mind2web_abp", "webcanvas")]
    items, _ = old.load_items(files)
    vectors = old._Vectors(Embedder())
    points = [(i, t) for i, it in enumerate(items) for t in (5, 8) if len(it.trajectory.steps) > t]
    fitting = [(i, t) for i, it in enumerate(items) if it.success is not None for t in (3, 5, 10)
               if len(it.trajectory.steps) > t]
    vectors.prepare([it.episode.embed_text for it in items] + [old._query_text(items[i], t) for i, t in points + fitting])
    memory = old._Memory(items, list(range(len(items))), vectors, 0.25)
    models = {}
    for name in {it.file for it in items}:
        samples = [(run_features(old._prefix(items[i], t), memory.neighbours(vectors[old._query_text(items[i], t)],
                                                                            items[i], 8), min_similarity=0.55),
                    int(items[i].success is False)) for i, t in fitting if items[i].file == name]
        try:
            models[name] = fit([x for x, _ in samples], [y for _, y in samples], healthy_budget=0.1)
        except ValueError:
            models[name] = RiskModel()
    per: dict[str, list] = defaultdict(list)
    typed: dict[int, list[str]] = {}
    for i, t in points:
        it = items[i]
        run = old._prefix(it, t)
        nbs = memory.neighbours(vectors[old._query_text(it, t)], it, 8)
        for nb in nbs:
            typed.setdefault(nb.id, checks.typed_values(items[nb.id].trajectory.actions))
        rec = checks.record(advise(run, nbs, risk_model=models[it.file]), run, nbs, typed, it.success)
        per[it.file].append(rec)
        per["pooled"].append(rec)
    return {name: checks.summarize_advice(records) for name, records in per.items()}


if __name__ == "__main__":
    json.dump(main(Path(sys.argv[1]).resolve()), sys.stdout, indent=1)
    print()
