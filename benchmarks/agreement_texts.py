"""Write `ems_service/agreement_texts.jsonl`: the texts on which `webcoach embedder export` measures each ONNX
graph's agreement with the torch model (shipped with the package, so the Docker build checks it too).

Run: `python -m benchmarks.agreement_texts`. 100 texts per dev file, spread evenly over the file: 60 episode
texts (what ingest embeds) and 40 partial-run query texts (what the coach embeds mid-run), rendered by the
service's own functions. The benchmark (`python -m benchmarks.embedder`) measures agreement on every dev text.
"""

from __future__ import annotations

import json

from benchmarks.common import DATA, DEV_FILES, ROOT
from condenser import condense
from condenser.redact import redact_task_and_actions
from condenser.summary import embed_text
from ems_service.dataset import read_jsonl

TARGET = ROOT / "ems_service" / "agreement_texts.jsonl"
PER_FILE = 100


def texts() -> list[str]:
    out: list[str] = []
    for name in DEV_FILES:
        runs = [ln.trajectory for ln in read_jsonl(DATA / name) if ln.trajectory]
        picked = [runs[i * len(runs) // PER_FILE] for i in range(min(PER_FILE, len(runs)))]
        for k, run in enumerate(picked):
            if k % 5 < 3:
                out.append(condense(run).embed_text)
            else:  # a run cut after about half its steps, as the coach sees it
                part = run.model_copy(update={"steps": run.steps[: max(1, len(run.steps) // 2)]})
                task, actions = redact_task_and_actions(part)
                out.append(embed_text(task, part.domain, actions))
    return out


def main() -> None:
    rows = texts()
    TARGET.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in rows), encoding="utf-8")
    print(f"{len(rows)} texts -> {TARGET.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
