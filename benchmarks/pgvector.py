"""The two vector backends side by side on one PostgreSQL table, at 100k and 1M episodes.

Run: `python -m benchmarks.pgvector [--sizes 100000,1000000] [--out benchmarks/results/pgvector.json]`.

A local PostgreSQL 18 + pgvector (ems_service.localpg, its own data dir under /tmp, shared_buffers 3 GB so that the
index fits, as pgvector advises) is built by the migrations and filled with the dev set (a real ingest through the
service) and copies of its rows with perturbed vectors (benchmarks.data: dev-set MiniLM vectors, not uniform noise;
a copy keeps cosine ~0.96 with its siblings, looser than two real runs of one task in the dev set, median 0.985),
by COPY with the indexes dropped, then indexed as the backend indexes (pgvector_schema.build_index, not
concurrently, as a bulk load should): IVF first, then HNSW in its place. For each size, with the same queries (real
task texts, embedded):

- search p50 / p99 in process, per backend call: FAISS (the service's index kind at that size: IVF-SQ8 above
  20k) and pgvector: the IVF index at 1-8 probes, `auto` (the default: IVF, 4 probes, exact for small filters),
  `exact`, and the HNSW index at ef_search 40-1000; unfiltered, filtered to the query's own site (what the
  coach's same-site search asks) and filtered to another site (the largest, 2.3% of the rows: the iterative
  scan's bad case, where the filter's rows lie far from the query);
- recall@10 against exact float32 brute force (numpy) with the same filter, two ways: ann-benchmarks' k-nn recall
  (a hit counts when its distance is within 1e-3 of the true 10th's; the copies of one episode differ by ~1e-4 in
  score, so the exact id set is decided by noise) and the true top-10 id set;
- ingest: episodes/s of the store's INSERT plus the backend's add, 32 prepared episodes a batch (embedding
  excluded: it is the same for both);
- a real `webcoach serve` API replica per backend: seconds to ready and its RSS after 200 searches.

`--repeat N` measures the configured search (`auto`) N times over (each a fresh backend; its p50 / p99 are the
medians of the N, every run kept under `runs`): on this VM one run's p99 of 300 searches moves 30-40% between runs
of the same code. `--modes` measures a subset (e.g. `auto` alone for a re-run of the headline at 1M).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from benchmarks.common import percentiles
from benchmarks.data import REPLICATED, SIGMA, dev_vectors
from ems_service import Embedder, Runtime, Settings
from ems_service.db import upgrade
from ems_service.index import Query
from ems_service.index.pgvector_schema import COLUMN, HNSW_INDEX, IVF_INDEX, build_index, target_lists
from ems_service.localpg import LocalPostgres, free_port


def psycopg_connect(url: str):
    import psycopg
    from sqlalchemy.engine import make_url

    u = make_url(url)
    return psycopg.connect(f"host={u.host} port={u.port} user={u.username} dbname={u.database}", autocommit=True)

K = 10
EPSILON = 1e-3  # ann-benchmarks' distance threshold for k-nn recall
SHARED_BUFFERS = "3GB"  # the HNSW index (about 1.1 GB at 1M) and the hot rows fit, as pgvector advises
EF_SWEEP = (40, 200, 1000)  # hnsw.ef_search measured (the candidate pool is k x rerank = 40)
PROBE_SWEEP = (1, 2, 4, 8)  # ivfflat.probes measured


def _fill(url: str, n: int, *, seed: int = 0) -> float:
    """Grow namespace default to n rows: COPY copies of its real rows with perturbed vectors; seconds."""
    import psycopg
    from psycopg.types.json import Jsonb
    from sqlalchemy.engine import make_url

    from ems_service.tables import EpisodeRecord

    started = time.perf_counter()
    u = make_url(url)
    conninfo = f"host={u.host} port={u.port} user={u.username} dbname={u.database}"
    cols = [c.name for c in EpisodeRecord.__table__.columns if c.name != "id"]
    json_cols = {c.name for c in EpisodeRecord.__table__.columns if c.type.__class__.__name__ == "JSON"}
    with psycopg.connect(conninfo, autocommit=True) as conn:
        originals = conn.execute(f"SELECT {', '.join(cols)} FROM episodes WHERE namespace = 'default'").fetchall()
        have = len(originals)
        if n <= have:
            return 0.0
        for index in (HNSW_INDEX, IVF_INDEX):
            conn.execute(f"DROP INDEX IF EXISTS {index}")
        base = np.stack([np.frombuffer(r[cols.index("embedding")], dtype=np.float32) for r in originals])
        rng = np.random.default_rng(seed)
        from tqdm import tqdm

        bar = tqdm(total=n - have, desc=f"COPY to {n:,}", unit="row", leave=False)
        chunk = 20_000
        for start in range(have, n, chunk):
            stop = min(n, start + chunk)
            src = np.arange(start, stop) % have
            noisy = base[src] + rng.normal(scale=SIGMA, size=(stop - start, base.shape[1]))
            noisy = (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)
            with conn.cursor() as cur, cur.copy(f"COPY episodes ({', '.join(cols)}, {COLUMN}) FROM STDIN") as copy:
                for j, i in enumerate(src):
                    row = list(originals[i])
                    row[cols.index("trajectory_hash")] = f"{row[cols.index('trajectory_hash')][:40]}-{start + j}"
                    row[cols.index("embedding")] = noisy[j].tobytes()
                    row[cols.index("trajectory")] = b""
                    for c in json_cols:
                        row[cols.index(c)] = Jsonb(row[cols.index(c)])
                    copy.write_row([*row, "[" + ",".join(map(str, noisy[j].tolist())) + "]"])
            bar.update(stop - start)
        bar.close()
        conn.execute("SET maintenance_work_mem = '4GB'")
        conn.execute("VACUUM ANALYZE episodes")  # as after any bulk load (and as autovacuum soon would)
    return time.perf_counter() - started


def _index(url: str, kind: str) -> float:
    """Build the `kind` index as the backend does (pgvector_schema.build_index, replacing the other kind), not
    concurrently (a bulk load); the seconds it took."""
    from sqlalchemy import create_engine

    engine = create_engine(url)
    started = time.perf_counter()
    build_index(engine, kind, concurrently=False, memory="4GB")
    engine.dispose()
    return time.perf_counter() - started


def _scores(vectors: np.ndarray, mask: np.ndarray | None, q: np.ndarray) -> np.ndarray:
    scores = vectors @ q
    return scores if mask is None else np.where(mask, scores, -np.inf)


def _recalls(scores: np.ndarray, ids: np.ndarray, hits: list) -> tuple[int, int, int]:
    """(true top-k found by id, found within ann-benchmarks' distance threshold, wanted).

    ann-benchmarks counts a returned item when its distance is at most the true k-th distance + 1e-3: near-ties
    (copies of one episode differ by ~1e-4 in score here) then do not decide recall by noise."""
    top = np.argpartition(-scores, K)[:K]
    top = top[np.isfinite(scores[top])]
    truth = {int(ids[i]) for i in top}
    kth = float(scores[top].min()) if len(top) else np.inf
    within = sum(1 for h in hits if h.score >= kth - EPSILON)
    return len(truth & {h.id for h in hits}), min(within, len(truth)), len(truth)


def _measure(backend, queries: np.ndarray, ids: np.ndarray, vectors: np.ndarray, domains: np.ndarray,
             filters: list[str | None], passes: int) -> dict:
    """Latency over `passes` rounds of the queries (query i filtered to filters[i]) after a warm-up round of them
    all, as ann-benchmarks repeats its queries: the steady state of a serving replica, whose pages are in memory
    and whose plans are counted. The warm-up round is timed apart (`first_pass`): it holds the first reads of each
    filter's rows from disk (a small site's few hundred rows lie on as many table pages) and each filter's first
    capped count. Recall on the first timed round."""
    first = []
    for q, domain in zip(queries, filters, strict=True):
        started = time.perf_counter()
        backend.search("default", Query(q, K, domain=domain))
        first.append(time.perf_counter() - started)
    times, by_id, by_distance, wanted = [], 0, 0, 0
    for p in range(passes):
        for q, domain in zip(queries, filters, strict=True):
            started = time.perf_counter()
            hits = backend.search("default", Query(q, K, domain=domain))
            times.append(time.perf_counter() - started)
            if p == 0:
                mask = None if domain is None else domains == domain
                found, near, want = _recalls(_scores(vectors, mask, q), ids, hits)
                by_id, by_distance, wanted = by_id + found, by_distance + near, wanted + want
    return {**percentiles(times), "recall10": round(by_distance / max(1, wanted), 4),
            "recall10_ids": round(by_id / max(1, wanted), 4), "queries": len(times),
            "first_pass": {k: v for k, v in percentiles(first).items() if k in ("p50_ms", "p99_ms")}}


def _table(url: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ids, float32 vectors and domains of every row, for the brute-force truth."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    ids, vecs, doms = [], [], []
    with engine.connect() as conn:
        result = conn.execution_options(stream_results=True, max_row_buffer=20_000).execute(
            text("SELECT id, embedding, domain FROM episodes ORDER BY id"))
        for r in result:
            ids.append(r.id)
            vecs.append(np.frombuffer(r.embedding, dtype=np.float32))
            doms.append(r.domain or "")
    engine.dispose()
    return np.array(ids), np.stack(vecs), np.array(doms, dtype=object)


def _ingest_rate(rt: Runtime, n_batches: int = 8) -> float:
    """Episodes/s of INSERT + index add for batches of 32 prepared (already embedded) episodes."""
    from condenser import Outcome, Step, Trajectory, condense

    rng = np.random.default_rng(3)
    batches = []
    for b in range(n_batches):
        eps = [condense(Trajectory(task=f"bench ingest {time.time_ns()} {b} {i}", steps=[Step(action="click[1]")],
                                   outcome=Outcome(success=True), domain="bench.example"), namespace="default")
               for i in range(32)]
        vec = rng.normal(size=(32, 384)).astype(np.float32)
        batches.append((eps, vec / np.linalg.norm(vec, axis=1, keepdims=True)))
    from ems_service.index import IndexRow

    started = time.perf_counter()
    for eps, vec in batches:
        ids = rt.episodes.insert(eps, vec, rt.embedder.name)
        rt.vectors.add("default", [IndexRow(i, v, e.domain, e.success, e.task_id) for i, v, e in
                                   zip(ids, vec, eps, strict=True)])
    return round(n_batches * 32 / (time.perf_counter() - started), 1)


def _serve(url: str, work: Path, backend: str, texts: list[str]) -> dict:
    """A real API replica: seconds to ready, RSS after searches."""
    import httpx

    from ems_service.embedded import ServeProcess

    env = {**os.environ, "EMS_DATABASE_URL": url, "EMS_DATA_DIR": str(work / f"serve-{backend}"),
           "EMS_VECTOR__BACKEND": backend, "HF_HUB_OFFLINE": "1", "EMS_LOG_LEVEL": "WARNING",
           "EMS_INDEX__CAPACITY": "5000000", "EMS_COACH__REFIT_EVERY": "0"}
    with ServeProcess(env) as server:
        ready = server.wait_ready(timeout=1800)
        with httpx.Client(base_url=server.url, timeout=60) as client:
            for t in texts[:200]:
                client.post("/v1/search", json={"text": t, "k": K})
        rss = int(next(ln.split()[1] for ln in Path(f"/proc/{server.proc.pid}/status").read_text().splitlines()
                       if ln.startswith("VmRSS"))) / 1024
    return {"ready_s": round(ready, 2), "rss_mb": round(rss, 1)}


ALL_MODES = ("faiss_ivf", *(f"pgvector_ivf_p{p}" for p in PROBE_SWEEP), "pgvector_auto", "pgvector_exact",
             *(f"pgvector_hnsw_ef{ef}" for ef in EF_SWEEP))


def _median_of_runs(runs: list[dict]) -> dict:
    """One measure from repeated runs: the median of each latency percentile, the lowest recall, every run kept."""
    out = dict(runs[0])
    for path in ("unfiltered", "own_site", "other_site"):
        out[path] = {**runs[0][path],
                     **{key: round(statistics.median(r[path][key] for r in runs), 3)
                        for key in runs[0][path] if key.endswith("_ms")},
                     **{key: min(r[path][key] for r in runs) for key in ("recall10", "recall10_ids")}}
    if len(runs) > 1:
        out["runs"] = [{path: {k: r[path][k] for k in ("p50_ms", "p99_ms", "first_pass")}
                        for path in ("unfiltered", "own_site", "other_site")} for r in runs]
    return out


def run(sizes: list[int], work: Path, *, wanted: tuple[str, ...] = ALL_MODES, repeat: int = 1) -> dict:
    embedder = Embedder()
    dev = dev_vectors(embedder)
    from benchmarks.common import DATA, DEV_FILES
    from ems_service.dataset import read_jsonl

    texts = [ln.trajectory.task for name in DEV_FILES for ln in read_jsonl(DATA / name) if ln.trajectory][::3]
    server = LocalPostgres(work / "pg", free_port())
    server.start()
    with psycopg_connect(server.url()) as conn:
        conn.execute(f"ALTER SYSTEM SET shared_buffers = '{SHARED_BUFFERS}'")
    server.stop()
    server.start()
    out: dict = {"data": REPLICATED, "k": K, "postgres": {"shared_buffers": SHARED_BUFFERS},
                 "recall": f"recall10: ann-benchmarks' k-nn recall (distance within the true 10th's + {EPSILON}); "
                           "recall10_ids: the true top-10 ids", "sizes": {}}
    try:
        url = server.create_database("bench")
        upgrade(url)
        settings = Settings(database_url=url, data_dir=work / "data", _env_file=None,
                            vector={"backend": "pgvector"}, coach={"refit_every": 0}, index={"capacity": 5_000_000})
        rt = Runtime(settings, embedder=embedder).start(background=False)
        runs = [ln.trajectory for name in DEV_FILES for ln in read_jsonl(DATA / name) if ln.trajectory]
        rt.ingest.ingest(namespace="default", trajectories=runs)
        rt.close()
        for n in sizes:
            fill_s = _fill(url, n)
            ivf_s = _index(url, "ivfflat")
            ids, vectors, domains = _table(url)
            top_domain = statistics.mode([d for d in domains if d])
            queries = dev.queries[:100]
            own = [(q, d) for q, d in zip(dev.queries, dev.query_domains, strict=True) if d][:100]
            other = [q for q, d in zip(dev.queries, dev.query_domains, strict=True) if d != top_domain][:100]
            row: dict = {"n": len(ids), "fill_s": round(fill_s, 1), "ivf_build_s": round(ivf_s, 1),
                         "ivf_lists": target_lists(len(ids)),
                         "own_site": "each query filtered to its own run's site (the coach's same-site search)",
                         "other_site": f"every query filtered to {top_domain} ({int((domains == top_domain).sum()):,} "
                                       "rows), a site other than its own"}

            def measure_modes(backend: str, modes: list[str], *, serve: bool = True, row: dict = row,
                              table: tuple = (ids, vectors, domains),
                              sets: tuple = (queries, own, other, top_domain)) -> None:
                queries, own, other, top_domain = sets
                for mode in modes:
                    vs: dict = {"backend": backend}
                    if mode.startswith("ivf_p"):
                        vs.update(search="index", index="ivfflat", ivf_probes=int(mode.removeprefix("ivf_p")))
                    elif mode.startswith("hnsw_ef"):
                        vs.update(search="index", index="hnsw", ef_search=int(mode.removeprefix("hnsw_ef")))
                    elif backend == "pgvector":
                        vs["search"] = mode
                    cfg = settings.model_copy(update={"vector": settings.vector.model_copy(update=vs)})
                    key = f"{backend}_{mode}"
                    if key not in wanted:
                        continue
                    runs = []
                    for _ in range(repeat if key == "pgvector_auto" else 1):
                        rt = Runtime(cfg, embedder=embedder)
                        started = time.perf_counter()
                        rt.start(background=False)
                        if backend == "faiss":
                            rt.vectors.namespace("default").wait_for_build()  # the kind served at this size
                        start_s = time.perf_counter() - started
                        few = 5 if mode == "exact" else 100
                        passes = 1 if mode == "exact" else 3

                        def measure(qs: list, filters: list, passes: int, rt: Runtime = rt) -> dict:
                            return _measure(rt.vectors, np.stack(qs), *table, filters, passes)

                        runs.append({"start_s": round(start_s, 2),
                                     "unfiltered": measure(list(queries[:few]), [None] * few, passes),
                                     "own_site": measure([q for q, _ in own[:few]], [d for _, d in own[:few]],
                                                         passes),
                                     "other_site": measure(other[:few], [top_domain] * len(other[:few]),
                                                           min(passes, 2))})
                        if key in ("faiss_ivf", "pgvector_auto") and len(runs) == 1:
                            runs[0]["ingest_eps"] = _ingest_rate(rt)
                        rt.close()
                    row[key] = _median_of_runs(runs)
                if serve and any(m.startswith(backend) for m in wanted):
                    row[f"serve_{backend}"] = _serve(url, work, backend, texts)

            measure_modes("faiss", ["ivf"])
            measure_modes("pgvector", [*(f"ivf_p{p}" for p in PROBE_SWEEP), "auto", "exact"])
            if any(m.startswith("pgvector_hnsw") for m in wanted):
                row["hnsw_build_s"] = round(_index(url, "hnsw"), 1)
                measure_modes("pgvector", [f"hnsw_ef{ef}" for ef in EF_SWEEP], serve=False)
            out["sizes"][str(n)] = row
            print(json.dumps({str(n): row}), flush=True)
    finally:
        server.stop()
    return out


def headline(result: dict) -> dict:
    """The issue's keys from the largest size measured (1M when run in full), for the configured search (`auto`
    over the default index): the worse of the unfiltered and the own-site search; the other-site filter (a site far
    from the query, the iterative scan's bad case), the id-set recall, and HNSW's best recall beside them."""
    from ems_service.config import VectorSettings

    largest = result["sizes"][max(result["sizes"], key=int)]
    top = largest["pgvector_auto"]
    served = (top["unfiltered"], top["own_site"])
    hnsw = max((largest[f"pgvector_hnsw_ef{ef}"] for ef in EF_SWEEP if f"pgvector_hnsw_ef{ef}" in largest),
               key=lambda m: m["unfiltered"]["recall10"], default=None)
    return {"pgvector_search_p99_ms_1m": max(m["p99_ms"] for m in served),
            "pgvector_recall10_1m": min(m["recall10"] for m in served),
            "pgvector_recall10_ids_1m": min(m["recall10_ids"] for m in served),
            **({"pgvector_first_pass_p99_ms_1m": max(m["first_pass"]["p99_ms"] for m in served)}
               if all("first_pass" in m for m in served) else {}),  # cold pages and counts (see _measure)
            "pgvector_other_site_p99_ms_1m": top["other_site"]["p99_ms"],
            "pgvector_other_site_recall10_1m": top["other_site"]["recall10"],
            "api_rss_mb_1m_pgvector": largest["serve_pgvector"]["rss_mb"],
            "pgvector_index": VectorSettings().index, "ivf_probes": VectorSettings().ivf_probes,
            **({} if hnsw is None else {"pgvector_hnsw_best_recall10_1m": hnsw["unfiltered"]["recall10"],
                                        "pgvector_hnsw_best_p99_ms_1m": hnsw["unfiltered"]["p99_ms"]})}


def markdown(result: dict) -> str:
    """The README's tables from a result file (`--table`)."""
    sizes = sorted(result["sizes"], key=int)
    cols = ["faiss_ivf", *(f"pgvector_ivf_p{p}" for p in PROBE_SWEEP), "pgvector_auto",
            *(f"pgvector_hnsw_ef{ef}" for ef in EF_SWEEP), "pgvector_exact"]
    names = ["FAISS (IVF-SQ8)", *(f"pgvector IVF {p} probes" for p in PROBE_SWEEP), "pgvector auto (IVF)",
             *(f"pgvector HNSW ef {ef}" for ef in EF_SWEEP), "pgvector exact"]
    measured = [(c, name) for c, name in zip(cols, names, strict=True)
                if all(c in result["sizes"][n] for n in sizes)]  # a run of some --modes only
    cols, names = [c for c, _ in measured], [name for _, name in measured]
    lines = [f"| {' / '.join(f'{int(n) // 1000}k' if int(n) < 10**6 else f'{int(n) // 10**6}M' for n in sizes)} "
             f"| {' | '.join(names)} |", "|---" * (len(cols) + 1) + "|"]
    for path, label in (("unfiltered", "unfiltered"), ("own_site", "own site"), ("other_site", "other site (2.3%)")):
        cells = [" · ".join(f"{result['sizes'][n][c][path]['p50_ms']:.1f} / {result['sizes'][n][c][path]['p99_ms']:.1f}"
                            for n in sizes) for c in cols]
        lines.append(f"| {label} p50 / p99 ms | {' | '.join(cells)} |")
        if all("first_pass" in result["sizes"][n][c][path] for n in sizes for c in cols):
            cells = [" · ".join("{p50_ms:.1f} / {p99_ms:.1f}".format(**result["sizes"][n][c][path]["first_pass"])
                                for n in sizes) for c in cols]
            lines.append(f"| {label}, first pass p50 / p99 ms | {' | '.join(cells)} |")
        cells = [" · ".join(f"{result['sizes'][n][c][path]['recall10']:.3f} ({result['sizes'][n][c][path]['recall10_ids']:.3f})"
                            for n in sizes) for c in cols]
        lines.append(f"| {label} recall@10 (by id) | {' | '.join(cells)} |")
    lines += ["", f"| | {' | '.join(f'FAISS {n}' for n in sizes)} | {' | '.join(f'pgvector {n}' for n in sizes)} |",
              "|---" * (2 * len(sizes) + 1) + "|"]
    rows = [("backend start (s)", lambda r, b: r[f"{b}_ivf" if b == "faiss" else f"{b}_auto"]["start_s"]),
            ("`webcoach serve` ready (s)", lambda r, b: r[f"serve_{b}"]["ready_s"]),
            ("API replica RSS after 200 searches (MB)", lambda r, b: r[f"serve_{b}"]["rss_mb"]),
            ("ingest, INSERT + index, 32 a batch (episodes/s)",
             lambda r, b: r[f"{b}_ivf" if b == "faiss" else f"{b}_auto"]["ingest_eps"])]
    def cell(get: Callable[[dict, str], float], row: dict, backend: str) -> str:
        try:
            return f"{get(row, backend):,}"
        except KeyError:  # not measured in this run (--modes)
            return "-"

    for label, get in rows:
        cells = [cell(get, result["sizes"][n], b) for b in ("faiss", "pgvector") for n in sizes]
        lines.append(f"| {label} | {' | '.join(cells)} |")
    for key, label in (("ivf_build_s", "IVF build after the load (s)"), ("hnsw_build_s", "HNSW build (s)")):
        lines.append(f"| {label} | {' | '.join([''] * len(sizes))} | "
                     f"{' | '.join(str(result['sizes'][n].get(key, '-')) for n in sizes)} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/pgvector.json"))
    parser.add_argument("--headline-only", action="store_true", help="recompute the headline of --out (after a "
                                                                     "change of the default ef_search)")
    parser.add_argument("--table", action="store_true", help="print the README's tables from --out")
    parser.add_argument("--modes", default=",".join(ALL_MODES),
                        help=f"what to measure, comma separated (default all: {', '.join(ALL_MODES)})")
    parser.add_argument("--repeat", type=int, default=1, help="runs of pgvector_auto (medians reported)")
    args = parser.parse_args()
    if args.table:
        print(markdown(json.loads(args.out.read_text())))
        return
    if args.headline_only:
        result = json.loads(args.out.read_text())
        result["headline"] = headline(result)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
        print(json.dumps(result["headline"]))
        return
    with tempfile.TemporaryDirectory(prefix="webcoach-pgbench-", dir="/tmp") as tmp:
        work = Path(tmp)
        work.chmod(0o755)
        modes = tuple(m for m in args.modes.split(",") if m)
        unknown = sorted(set(modes) - set(ALL_MODES))
        if unknown:
            parser.error(f"unknown mode(s) {', '.join(unknown)}; choose from {', '.join(ALL_MODES)}")
        result = run([int(s) for s in args.sizes.split(",")], work, wanted=modes, repeat=max(1, args.repeat))
    result["headline"] = headline(result)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["headline"]))


if __name__ == "__main__":
    main()
