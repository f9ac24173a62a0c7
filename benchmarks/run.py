"""The whole benchmark suite: `make bench` / `webcoach bench`.

Writes benchmarks/results/latest.json (every figure, plus a flat `headline` object) and latest.md (tables).
Sizes default to 10k / 100k / 1M; `--sizes 10000,100000` gives a shorter run. Medians from one run on this
machine; every figure names the data it used.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from benchmarks import core, load, peers, scale, search
from benchmarks import embedder as embedder_bench
from benchmarks import pgvector as pgvector_bench
from benchmarks.common import DATA, ROOT
from benchmarks.data import dev_vectors
from condenser import condense
from ems_service import Settings
from ems_service.dataset import read_jsonl
from ems_service.index.faiss import ApproxConfig

RESULTS = ROOT / "benchmarks" / "results"


def log(message: str) -> None:
    print(f"[bench {datetime.now():%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def _at(rows: list[dict], n: int) -> dict | None:
    return next((r for r in rows if r["n"] == n), None)


def headline(out: dict) -> dict:
    approx = ApproxConfig()
    kind = lambda n: "ivf_sq8" if n >= approx.above else "flat"  # noqa: E731 - what the service serves at n
    s100, s1m = _at(out["search"], 100_000), _at(out["search"], 1_000_000)
    sc100 = _at(out["scale"]["sizes"], 100_000) or {}
    sc1m = _at(out["scale"]["sizes"], 1_000_000) or {}
    ours_ingest = out["ingest"]["service_eps"]
    peer_search, peer_ingest = {}, {}
    for name, peer in out.get("peers", {}).get("peers", {}).items():
        if "ingest_eps" in peer:
            peer_ingest[name] = round(ours_ingest / peer["ingest_eps"], 2)
        for size, res in sorted(peer.get("search", {}).items(), key=lambda kv: -int(kv[0].split("_")[0])):
            if "p50_ms" not in res:
                continue
            if size.endswith("_by_text"):  # mem0: text query = embed + search, against ours on the dev set
                peer_search[name] = round(res["p50_ms"] / out["core_search"]["embed_and_search"]["p50_ms"], 2)
            else:
                ours = _at(out["search"], int(size))
                if ours:
                    peer_search[name] = round(res["p50_ms"] / ours[kind(int(size))]["search"]["p50_ms"], 2)
            break
    return {
        "ingest_ratio_to_embedder": out["ingest"]["ratio"],
        "search_p99_ms_100k": s100[kind(100_000)]["search"]["p99_ms"] if s100 else None,
        "search_p99_ms_1m": s1m[kind(1_000_000)]["search"]["p99_ms"] if s1m else None,
        "recall10_1m": s1m["ivf_sq8"]["recall10"] if s1m else None,
        "coach_p50_ms_100k": sc100.get("http", {}).get("coach", {}).get("p50_ms"),
        "coach_p50_ms_1m": sc1m.get("http", {}).get("coach", {}).get("p50_ms"),
        "coach_rps_16_100k": next((c["throughput_rps"] for c in sc100.get("http", {}).get("concurrency", {})
                                   .get("coach", []) if c["clients"] == 16), None),
        "mixed_p99_ms_32": out.get("load", {}).get("all", {}).get("p99_ms"),
        "restart_s_1m": sc1m.get("restart", {}).get("from_snapshot", {}).get("ready_s"),
        "bytes_per_episode_1m": s1m["ivf_sq8"]["bytes_per_episode"] if s1m else None,
        "embedder_speedup": out["embedder"]["embedder_speedup"],
        "embedder_cosine_min": out["embedder"]["embedder_cosine_min"],
        "peer_search_ratio": peer_search,
        "peer_ingest_ratio": peer_ingest,
        **(pgvector_bench.headline(out["pgvector"]) if out.get("pgvector") else {}),
    }


def _p(d: dict | None, key: str = "p50_ms") -> str:
    return "-" if not d or key not in d else f"{d[key]:.2f}"


def _peer_search(v: dict) -> str:
    """One size of a peer: latency, then the index searched, recall@10 and a second pass with an index, if given."""
    if "skipped" in v:
        return v["skipped"]
    cell = " / ".join(f"{v[k]:.2f}" for k in ("p50_ms", "p95_ms", "p99_ms"))
    notes = [v["index"]] if "index" in v else []
    if "recall10" in v:
        notes.append(f"recall@10 {v['recall10']}")
    if notes:
        cell += f" ({', '.join(notes)})"
    for key, w in v.items():
        if key.startswith("with_"):
            cell += (f"; {key.removeprefix('with_').upper()} built in {w['build_s']} s: " +
                     " / ".join(f"{w[k]:.2f}" for k in ("p50_ms", "p95_ms", "p99_ms")) + f", recall@10 {w['recall10']}")
    return cell


def markdown(out: dict) -> str:
    h = out["headline"]
    lines = [f"# Benchmarks ({out['started']}, {out['machine']})", "", "## Headline", "", "| key | value |",
             "|---|---|"]
    lines += [f"| {k} | {json.dumps(v)} |" for k, v in h.items()]
    e, i = out["embedder"], out["ingest"]
    lines += ["", "## Embedder (dev texts)", "",
              "| backend | single p50 ms | batch-32 texts/s | speed-up (min of both) | min / mean cosine vs torch |",
              "|---|---|---|---|---|",
              f"| torch | {e['torch']['single_p50_ms']} | {e['torch']['batch32_texts_per_s']} | 1 | 1 |"]
    lines += [f"| {name}{' (default)' if name == e['default'] else ''} | {r['single_p50_ms']} | "
              f"{r['batch32_texts_per_s']} | {r['speedup']} | {r['min_cosine']} / {r['mean_cosine']} |"
              for name, r in e.items() if name.startswith("onnx_")]
    lines += ["", f"Cosine over {e['agreement_texts']} dev texts; timings on {e['texts']} of them.", "",
              "## Ingest (webcanvas.jsonl, service path vs raw embedder, same texts and batch)", "",
              f"{i['service_eps']} episodes/s vs {i['raw_embedder_eps']} ({i['ratio']}x), batch {i['batch']}.", "",
              "## Search in-process (top-10; recall@10 vs exact)", "",
              "| N | index | p50 ms | p95 ms | p99 ms | domain-filter p50 ms | recall@10 | bytes/episode |",
              "|---|---|---|---|---|---|---|---|"]
    for row in out["search"]:
        for kind in ("flat", "ivf_sq8"):
            r = row[kind]
            lines.append(f"| {row['n']:,} | {kind} | {_p(r['search'])} | {_p(r['search'], 'p95_ms')} | "
                         f"{_p(r['search'], 'p99_ms')} | {_p(r['search_domain_filter'])} | "
                         f"{r.get('recall10', 1.0)} | {r['bytes_per_episode']} |")
    lines += ["", f"Data: {out['search'][0]['data'] if out['search'] else '-'}.", "",
              "## Service over HTTP (`webcoach serve`, 1 worker)", "",
              "| N | index | search p50 / p95 / p99 ms | coach p50 / p95 ms | coach embed / search / risk / guidance p50 ms |",
              "|---|---|---|---|---|"]
    for row in out["scale"]["sizes"]:
        http = row["http"]
        coach = http.get("coach")
        split = coach["split"] if coach else {}
        lines.append(
            f"| {row['n']:,} | {http['index_type']} | {_p(http['search'])} / {_p(http['search'], 'p95_ms')} / "
            f"{_p(http['search'], 'p99_ms')} | {_p(coach)} / {_p(coach, 'p95_ms')} | "
            + " / ".join(_p(split.get(k)) for k in ("embed", "search", "risk", "guidance")) + " |")
    lines += ["", "## Restart (fresh process, model already loaded)", "",
              "| N | from snapshot s | from stored vectors s (exact serving) | until IVF built s | RSS bytes/episode |",
              "|---|---|---|---|---|"]
    for row in out["scale"]["sizes"]:
        if "restart" in row:
            warm, cold = row["restart"]["from_snapshot"], row["restart"]["from_stored_vectors"]
            runs = ", ".join(str(r) for r in warm.get("ready_s_runs", []))
            lines.append(f"| {row['n']:,} | {warm['ready_s']}{f' (median of {runs})' if runs else ''} | "
                         f"{cold['ready_s']} | {cold['index_ready_s']} | "
                         f"{warm['rss_bytes_per_episode']} |")
    for row in out["scale"]["sizes"]:
        if "concurrency" in row["http"]:
            lines += ["", f"## Concurrency at {row['n']:,} episodes (embedder micro-batching on; off)", "",
                      "| route | clients | requests/s | p50 ms | p99 ms | errors |", "|---|---|---|---|---|---|"]
            off = row["http"].get("concurrency_unbatched", {})
            for route, levels in row["http"]["concurrency"].items():
                for i, c in enumerate(levels):
                    o = off.get(route, [])[i] if i < len(off.get(route, [])) else None
                    cell = [f"{c[k]:.1f}" + (f"; {o[k]:.1f}" if o else "") for k in ("throughput_rps", "p50_ms", "p99_ms")]
                    lines.append(f"| {route} | {c['clients']} | {' | '.join(cell)} | {c['errors']} |")
    if out.get("load"):
        a = out["load"]["all"]
        load_ = out["load"]
        lines += ["", f"## Mixed load: {load_['clients']} clients, {load_['seconds']} s", "",
                  f"every HTTP call: p50 {a['p50_ms']:.1f} ms, p99 {a['p99_ms']:.1f} ms, "
                  f"{load_['throughput_rps']} calls/s, {load_['total_errors']} errors", "",
                  "| route | requests | p50 ms | p95 ms | p99 ms |", "|---|---|---|---|---|",
                  *(f"| {name}{' (4 calls)' if name == 'session' else ''} | {r['requests']} | {r['p50_ms']:.1f} | "
                    f"{r['p95_ms']:.1f} | {r['p99_ms']:.1f} |" for name, r in load_["routes"].items())]
    if out.get("peers"):
        lines += ["", "## Peers (same data, same run)", "", "| peer | ingest eps | search p50 / p95 / p99 ms |",
                  "|---|---|---|"]
        for name, peer in out["peers"]["peers"].items():
            if "skipped" in peer:
                lines.append(f"| {name} | skipped: {peer['skipped']} | |")
                continue
            cells = "; ".join(f"{n}: " + _peer_search(v) for n, v in peer["search"].items())
            lines.append(f"| {name} | {peer['ingest_eps']} | {cells} |")
        lines += ["", f"This service ingests {out['ingest']['service_eps']} episodes/s on the same texts."]
    if out.get("pgvector"):
        lines += ["", "## pgvector beside FAISS (benchmarks.pgvector)", "", pgvector_bench.markdown(out["pgvector"])]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="webcoach bench")
    parser.add_argument("--sizes", default="10000,100000,1000000", help="N values, comma separated")
    parser.add_argument("--skip-peers", action="store_true")
    parser.add_argument("--skip-pgvector", action="store_true", help="leave out the pgvector backend beside FAISS "
                                                                     "(benchmarks.pgvector at the sizes >= 100k)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    started = time.perf_counter()
    out: dict = {"started": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
                 "machine": f"{platform.machine()}, {platform.processor() or platform.system()}, python "
                            f"{platform.python_version()}"}
    from ems_service.runtime import build_embedder

    emb = build_embedder(Settings(data_dir=tempfile.mkdtemp(), _env_file=None))
    out["embedder_backend"] = emb.backend
    log("embedder backends")
    out["embedder"] = embedder_bench.run(emb.backend)
    log("ingest")
    out["ingest"] = core.ingest_rate(emb, "webcanvas.jsonl")
    log("search at the dev-set size")
    out["core_search"] = core.search_latency(emb)
    dev = dev_vectors(emb)
    log(f"search at {sizes}")
    out["search"] = search.run(dev, sizes, log=log)
    log("service at scale")
    out["scale"] = scale.run(emb, sizes, log=log)
    log("mixed load: 32 clients, 60 s")
    out["load"] = load.run("sqlite", clients=32, seconds=60)
    if not args.skip_peers:
        log("peers")
        runs = [ln.trajectory for ln in read_jsonl(DATA / "webcanvas.jsonl") if ln.trajectory]
        out["peers"] = peers.run(emb, dev, [condense(t).embed_text for t in runs], trajectories=runs,
                                 sizes=tuple(n for n in sizes if n <= 100_000), log=log)
    if not args.skip_pgvector and any(n >= 100_000 for n in sizes):
        log("pgvector beside FAISS")
        with tempfile.TemporaryDirectory(prefix="webcoach-pgbench-", dir="/tmp") as work:
            Path(work).chmod(0o755)  # PostgreSQL runs as its own user (ems_service.localpg)
            out["pgvector"] = pgvector_bench.run([n for n in sizes if n >= 100_000], Path(work))
    out["headline"] = headline(out)
    out["elapsed_s"] = round(time.perf_counter() - started)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "latest.json").write_text(json.dumps(out, indent=2) + "\n")
    (args.out / "latest.md").write_text(markdown(out))
    log(f"wrote {args.out / 'latest.json'} and latest.md in {out['elapsed_s']}s")
    print(json.dumps(out["headline"], indent=2))
    return out


if __name__ == "__main__":
    main()
