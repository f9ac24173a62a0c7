"""End to end on the real dev data: ingest all three files, then held-out webcanvas runs find their site."""

from __future__ import annotations

import pytest

from ems_service.dataset import to_trajectory
from tests.conftest import DEV_FILES, dev_records


@pytest.mark.slow
def test_three_dev_files_and_held_out_retrieval(client):
    held_out = []
    total = 0
    for name in DEV_FILES:
        records = dev_records(name)
        if name == "webcanvas.jsonl":
            held_out = records[::8]
            records = [r for i, r in enumerate(records) if i % 8]
        for start in range(0, len(records), 250):
            chunk = [to_trajectory(r).model_dump(mode="json") for r in records[start : start + 250]]
            res = client.post("/v1/episodes:batch", json={"episodes": chunk}).json()["results"]
            assert all(r["error"] is None for r in res)
        total += len(records)
    stats = client.get("/v1/stats").json()
    assert stats["episodes"] + stats["deduplicated"] == total
    assert stats["index_size"] == stats["episodes"]

    same_domain_first = 0
    for record in held_out:
        half = max(1, len(record["steps"]) // 2)
        query = {"task": record["task"], "steps": record["steps"][:half]}
        res = client.post("/v1/search", json={"trajectory": query, "k": 5}).json()["results"]
        same_domain_first += res[0]["domain"] == record["domain"]
    rate = same_domain_first / len(held_out)
    assert rate >= 0.9, f"same-domain top-1 rate {rate:.2f} on {len(held_out)} held-out runs"
