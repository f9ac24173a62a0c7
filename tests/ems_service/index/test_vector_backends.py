"""Congruence of the two vector backends over one table: the same episodes and queries through FAISS and pgvector
give the same ids in the same order in exact mode, and recall@10 >= 0.95 through either approximate index (IVF,
HNSW), for every filter combination; deletes, relabels and a switch of backend keep them in step; the backend
builds and rebuilds its index as the table grows."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from condenser import Outcome, Step, Trajectory, condense
from ems_service import Settings
from ems_service.config import VectorSettings
from ems_service.db import upgrade
from ems_service.index import Query, build_backend
from ems_service.index.pgvector_schema import (
    DIMENSION,
    HNSW_INDEX,
    IVF_INDEX,
    IndexState,
    build_index,
    index_state,
    plan_index,
    target_lists,
)
from ems_service.repositories import Database, EpisodeRepository, IndexFeed
from tests.pgvector_server import reset_schema

N = 3000


class Store(IndexFeed):
    """What a backend reads (the feed), plus the episodes repository the tests write through."""

    def __init__(self, url: str) -> None:
        self.episodes = EpisodeRepository(Database(url))
        super().__init__(self.episodes.db, self.episodes)
        self.url = url

    def close(self) -> None:
        self.db.close()
DOMAINS = ["shop.com", "news.org", "air.travel", "bank.net", "mail.io"]


def _vectors(n: int, seed: int) -> np.ndarray:
    """Unit vectors in clusters (as sentence embeddings are), no two alike."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(40, DIMENSION))
    vecs = centers[rng.integers(0, 40, n)] + 0.6 * rng.normal(size=(n, DIMENSION))
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs.astype(np.float32)


def _episodes(n: int) -> list:
    out = []
    for i in range(n):
        domain = DOMAINS[i % len(DOMAINS)] if i % 11 else None
        traj = Trajectory(
            task=f"task number {i} on site {i % 50}", steps=[Step(action=f"click[{i}]", url=f"https://{domain or 'x.com'}/p")],
            outcome=Outcome(success=[True, False, None][i % 3]), domain=domain, task_id=f"t{i % 50}")
        out.append(condense(traj, namespace="ns"))
    return out


@pytest.fixture(scope="module")
def table(pgvector_server: str, tmp_path_factory: pytest.TempPathFactory):
    """One pgvector database holding N episodes (vectors written by the pgvector backend's INSERT)."""
    from sqlalchemy import text

    reset_schema(pgvector_server)
    upgrade(pgvector_server)
    store = Store(pgvector_server)
    settings = Settings(database_url=pgvector_server, data_dir=tmp_path_factory.mktemp("data"), _env_file=None,
                        vector={"backend": "pgvector"})
    build_backend(settings, store, model="m", dimension=DIMENSION)  # makes the store write the vector column
    vecs = _vectors(N, seed=0)
    eps = _episodes(N)
    ids = []
    for start in range(0, N, 500):
        ids += store.episodes.insert(eps[start:start + 500], vecs[start:start + 500], "m")
    with store.session() as s:  # as autovacuum would soon: the planner sees 3000 rows, not an empty table
        s.execute(text("ANALYZE episodes"))
    yield store, settings, ids, vecs
    store.close()


def _kind(table, kind: str) -> None:
    """Make `kind` the approximate index of the table (replacing the other), unless it is already."""
    store = table[0]
    with store.engine.connect() as conn:
        if index_state(conn).kind() == kind:
            return
    assert build_index(store.engine, kind, concurrently=False)


def _backends(table, search: str, exact_below: int = 5000, ef_search: int | None = None, *, kind: str = "ivfflat",
              **tuning):
    store, settings, _, _ = table
    if search != "exact":
        _kind(table, kind)
    vector = VectorSettings(backend="pgvector", search=search, index=kind, exact_below=exact_below,
                            **({} if ef_search is None else {"ef_search": ef_search}), **tuning)
    faiss = build_backend(settings.model_copy(update={"vector": VectorSettings()}), store, model="m",
                          dimension=DIMENSION)
    pg = build_backend(settings.model_copy(update={"vector": vector}), store, model="m", dimension=DIMENSION)
    faiss.start()
    pg.start()
    return faiss, pg


FILTERS = [dict(zip(("domain", "success", "exclude_task_id", "prefer_domain"), combo, strict=True))
           for combo in itertools.product([None, "news.org"], [None, True, False], [None, "t7"], [None, "shop.com"])]


def _queries(vecs: np.ndarray, n: int = 12) -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    # a query near stored episodes (cosine ~0.9 to its source), as a task text is near the runs of its task
    noise = 0.5 / np.sqrt(DIMENSION) * rng.normal(size=(n, DIMENSION)).astype(np.float32)
    picked = vecs[rng.choice(len(vecs), n, replace=False)] + noise
    return list(picked / np.linalg.norm(picked, axis=1, keepdims=True))


def _query(q: np.ndarray, flt: dict, k: int = 10) -> Query:
    return Query(q, k, domain=flt["domain"], success=flt["success"], exclude_task_id=flt["exclude_task_id"],
                 prefer_domain=flt["prefer_domain"], boost=0.25 if flt["prefer_domain"] else 0.0)


def test_exact_mode_gives_the_faiss_ids_in_the_same_order(table):
    faiss, pg = _backends(table, "exact")
    assert pg.ids("ns") == faiss.ids("ns") == set(table[2])
    compared = 0
    for flt in FILTERS:
        for q in _queries(table[3]):
            a, b = faiss.search("ns", _query(q, flt)), pg.search("ns", _query(q, flt))
            assert [h.id for h in a] == [h.id for h in b], flt
            assert np.allclose([h.score for h in a], [h.score for h in b], atol=1e-5)
            compared += 1
    assert compared == len(FILTERS) * 12


@pytest.mark.parametrize("kind", ["ivfflat", "hnsw"])
@pytest.mark.parametrize("search", ["index", "auto"])
def test_index_mode_recall_at_10_for_every_filter(table, search, kind):
    # auto: every filter here keeps more than 100 rows (IVF: the default 4 probes of the table's 6 lists)
    faiss, pg = _backends(table, search, exact_below=100, kind=kind)
    worst = 1.0
    for flt in FILTERS:
        found = wanted = 0
        for q in _queries(table[3]):
            truth = {h.id for h in faiss.search("ns", _query(q, flt))}
            got = [h.id for h in pg.search("ns", _query(q, flt))]
            assert len(got) == len(set(got)) == min(10, len(truth) or 10) or not truth
            found += len(truth & set(got))
            wanted += len(truth)
        worst = min(worst, found / wanted)
        assert found / wanted >= 0.95, (flt, found / wanted)
    print(f"pgvector {kind} {search}: worst recall@10 over {len(FILTERS)} filter combinations = {worst:.3f}")


@pytest.mark.parametrize("kind", ["ivfflat", "hnsw"])
@pytest.mark.parametrize("search", ["index", "auto"])
def test_a_filtered_walk_that_gives_up_is_answered_by_an_exact_scan(table, search, kind):
    """An iterative scan that stops (ivfflat.max_probes, hnsw.max_scan_tuples) before it has its candidates (the
    filter's rows lie far from the query) must not return what it happened to pass: the filtered rows are scanned
    exactly."""

    store = table[0]
    faiss, pg = _backends(table, search, exact_below=100, ef_search=40, max_scan_tuples=60, kind=kind,
                          ivf_probes=1, ivf_max_probes=1)
    flt = {"domain": "news.org", "success": False, "exclude_task_id": None, "prefer_domain": None}  # ~1 row in 16
    gave_up = 0
    for q in _queries(table[3], 40):
        query = _query(q, flt)
        with store.session() as s:  # the walk alone, as the backend first runs it
            sql, params = pg._statement(s, "ns", query)
            walked = s.execute(sql, params).all()
        if walked and walked[0].pooled >= params["pool"]:
            continue
        gave_up += 1
        got, truth = pg.search("ns", query), faiss.search("ns", query)
        assert {h.id for h in got} == {h.id for h in truth}
        assert np.allclose([h.score for h in got], [h.score for h in truth], atol=1e-5)
    print(f"the walk gave up for {gave_up} of 40 queries")
    assert gave_up >= 10, "the walk must give up for some queries, or this test tests nothing"


def test_a_small_filter_dense_near_the_query_is_served_by_the_nearest_lists_and_a_spread_one_exactly(table):
    """Auto mode, IVF: a filter above exact_below whose rows, spread like the table's, would not fill half a pool in
    the query's nearest lists is first searched in those lists alone by the index (PostgreSQL would sort every row
    of the filter). Rows clustered near the query fill the pool there: the index answers, with the exact ids. Rows
    spread over the table, or clustered far from the query, do not: an exact scan answers, with the exact ids."""
    store, _, _, vecs = table
    rng = np.random.default_rng(11)
    center = vecs[7] + 0.3 * rng.normal(size=DIMENSION).astype(np.float32)  # off the table's clusters
    center /= np.linalg.norm(center)
    close = center + (0.2 / np.sqrt(DIMENSION)) * rng.normal(size=(200, DIMENSION)).astype(np.float32)
    spread = _vectors(150, seed=12)
    vectors = np.concatenate([close / np.linalg.norm(close, axis=1, keepdims=True), spread]).astype(np.float32)
    episodes = []
    for i in range(350):
        site = "close.site" if i < 200 else "spread.site"
        traj = Trajectory(task=f"dense filter task {i}", steps=[Step(action="click[1]", url=f"https://{site}/p")],
                          outcome=Outcome(success=True), domain=site)
        episodes.append(condense(traj, namespace="ns"))
    added = store.episodes.insert(episodes, vectors, "m")
    assert build_index(store.engine, "ivfflat", lists=60, concurrently=False)  # 4 probes read ~1/15 of the rows
    try:
        faiss, pg = _backends(table, "auto", exact_below=100)
        exact_runs = []
        real_exact = pg._exact_statement
        pg._exact_statement = lambda ns, query, q: exact_runs.append(query.domain) or real_exact(ns, query, q)  # type: ignore[method-assign]
        query = center + (0.2 / np.sqrt(DIMENSION)) * rng.normal(size=DIMENSION).astype(np.float32)
        query /= np.linalg.norm(query)
        for site in ("close.site", "spread.site"):
            flt = {"domain": site, "success": None, "exclude_task_id": None, "prefer_domain": None}
            for q in (query, spread[3]):
                got, truth = pg.search("ns", _query(q, flt)), faiss.search("ns", _query(q, flt))
                assert [h.id for h in got] == [h.id for h in truth], site
        # close.site's rows fill the pool in the lists nearest its own query, not in those of a query far from it;
        # spread.site's rows never do
        assert exact_runs == ["close.site", "spread.site", "spread.site"]
        assert IVF_INDEX in pg.explain("ns", _query(query, {"domain": "close.site", "success": None,
                                                             "exclude_task_id": None, "prefer_domain": None}))
    finally:
        store.episodes.delete("ns", added, reason="test")
        assert build_index(store.engine, "ivfflat", concurrently=False)  # the table's own lists again


def test_auto_counts_a_filter_once_per_count_ttl(table):
    """The capped count that picks auto's plan is remembered per filter for count_ttl_s, so repeated searches with
    one filter (an agent's own site) pay one count, whatever task each leaves out (the coach leaves out every
    session's own); a delete forgets it."""
    from sqlalchemy import event

    store, _, ids, vecs = table
    _, pg = _backends(table, "auto", exact_below=100, count_ttl_s=3600)
    counts = []

    def seen(conn, cursor, statement, *args) -> None:
        counts.extend([statement] if "LIMIT %(cap)s" in statement else [])

    event.listen(store.engine, "before_cursor_execute", seen)
    try:
        flt = {"domain": "news.org", "success": True, "exclude_task_id": None, "prefer_domain": None}
        first = [pg.search("ns", _query(q, flt)) for q in vecs[:5]]
        assert len(counts) == 1
        assert [pg.search("ns", _query(q, flt)) for q in vecs[:5]] == first
        task_of = {episode_id: f"t{i % 50}" for i, episode_id in enumerate(ids)}
        for task in {task_of[h.id] for h in first[0][:3]}:  # one session each, its own task (a near one) left out
            hits = pg.search("ns", _query(vecs[0], {**flt, "exclude_task_id": task}))
            assert len(hits) == 10 and task not in {task_of[h.id] for h in hits}
        assert len(counts) == 1
        pg.search("ns", _query(vecs[0], {**flt, "success": False}))
        assert len(counts) == 2
        pg.remove("ns", [])
        pg.search("ns", _query(vecs[0], flt))
        assert len(counts) == 3
    finally:
        event.remove(store.engine, "before_cursor_execute", seen)


def test_deletes_and_relabels_keep_both_backends_in_step(table):
    store, _, ids, vecs = table
    faiss, pg = _backends(table, "exact")
    victims = ids[:25]
    store.episodes.delete("ns", victims, reason="test")
    faiss.remove("ns", victims)
    store.episodes.relabel("ns", ids[30], success=True, label_source="judge", verified=True, trust=1.0)
    row = store.episodes.get("ns", ids[30])
    from ems_service.index import IndexRow

    faiss.add("ns", [IndexRow(row.id, vecs[30], row.domain, True, row.task_id)])
    assert pg.ids("ns") == faiss.ids("ns") == set(ids[25:])
    for flt in ({"domain": None, "success": True, "exclude_task_id": None, "prefer_domain": None},
                FILTERS[0]):
        for q in [vecs[0], vecs[30]]:
            assert [h.id for h in faiss.search("ns", _query(q, flt))] == [h.id for h in pg.search("ns", _query(q, flt))]
    assert ids[30] in [h.id for h in pg.search("ns", _query(vecs[30], {**FILTERS[0], "success": True}))]


def test_rows_stored_under_faiss_get_their_vectors_when_pgvector_starts(table):
    """A namespace that grew under the FAISS backend switches to pgvector: start copies the stored vectors."""
    store, settings, _, vecs = table
    plain = Store(store.url)  # writes no vector column, as under the FAISS backend
    try:
        extra = plain.episodes.insert(_episodes(N + 40)[N:], _vectors(40, seed=9), "m")
    finally:
        plain.close()
    faiss, pg = _backends(table, "exact")
    assert set(extra) <= pg.ids("ns") and pg.ids("ns") == faiss.ids("ns")
    q = _vectors(40, seed=9)[3]
    assert pg.search("ns", _query(q, FILTERS[0]))[0].id == extra[3]
    store.episodes.delete("ns", extra, reason="test")


def test_the_pgvector_backend_refuses_sqlite_and_a_database_without_the_column(tmp_path):
    from ems_service.errors import NotReady

    url = f"sqlite:///{tmp_path / 'ems.db'}"
    upgrade(url)
    store = Store(url)
    try:
        settings = Settings(database_url=url, data_dir=tmp_path, _env_file=None, vector={"backend": "pgvector"})
        with pytest.raises(NotReady, match="needs PostgreSQL with the pgvector extension"):
            build_backend(settings, store, model="m", dimension=DIMENSION)
    finally:
        store.close()



@pytest.mark.parametrize(("kind", "name"), [("ivfflat", IVF_INDEX), ("hnsw", HNSW_INDEX)])
def test_index_mode_uses_the_index_and_exact_mode_does_not(table, kind, name):
    q = _queries(table[3], 1)[0]
    for search, used in (("exact", False), ("index", True)):
        # a small ef_search / one probe: at 3,000 rows the planner prefers a scan once the index would read most of
        # the table (the plan a large table gets is the one under test)
        _, pg = _backends(table, search, ef_search=40, kind=kind, ivf_probes=1)
        for flt in FILTERS[:8]:
            plan = pg.explain("ns", _query(q, flt))
            assert (name in plan) is used, (search, flt, plan)
        if used:
            assert pg.describe("ns")["index_type"].startswith(f"pgvector {'IVF' if kind == 'ivfflat' else 'HNSW'}")
            assert pg.describe("ns")["index_disk_bytes"] > 0


def test_the_index_plan_follows_the_table():
    """IVF: none below 1,000 rows, lists by the rows once there, rebuilt when the table has outgrown them 2x either
    way; HNSW once; a switch of kind replaces the other."""
    assert plan_index(IndexState(999, {}), "ivfflat") is None
    assert plan_index(IndexState(3000, {}), "ivfflat") == 6 == target_lists(3000)
    assert plan_index(IndexState(3000, {IVF_INDEX: 4}), "ivfflat") is None
    assert plan_index(IndexState(13_000, {IVF_INDEX: 6}), "ivfflat") == 26
    assert plan_index(IndexState(1_000_000, {IVF_INDEX: 2000}), "ivfflat") is None
    assert target_lists(4_000_000) == 4000 and target_lists(10**9) == 32_768
    assert plan_index(IndexState(3000, {HNSW_INDEX: None}), "ivfflat") == 6
    assert plan_index(IndexState(0, {}), "hnsw") == 0
    assert plan_index(IndexState(10**6, {HNSW_INDEX: None}), "hnsw") is None
    assert plan_index(IndexState(10**6, {IVF_INDEX: 2000}), "hnsw") == 0
    assert plan_index(IndexState(0, {}, partitioned=True), "ivfflat") is None  # the shards keep their own
    assert plan_index(IndexState(0, {}, partitioned=True), "hnsw") is None


def test_maintain_builds_the_configured_index_on_the_primary_and_one_builder_at_a_time(table):
    """The backend's maintenance builds the missing index (the table has rows to train it), reports it, and leaves a
    right one alone; while another process holds the build lock it builds nothing."""
    from sqlalchemy import text

    store, settings, _, _ = table
    with store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        for name in (IVF_INDEX, HNSW_INDEX):
            conn.execute(text(f"DROP INDEX IF EXISTS {name}"))
    pg = build_backend(settings.model_copy(update={"vector": VectorSettings(backend="pgvector")}), store,
                       model="m", dimension=DIMENSION)
    pg.start()
    assert pg.kind is None and "no approximate index yet" in pg.describe("ns")["index_type"]
    with store.engine.connect() as holder:  # another replica building
        holder.execute(text("SELECT pg_advisory_lock(1701671785)"))
        try:
            pg.maintain()
            assert pg.kind is None
        finally:
            holder.execute(text("SELECT pg_advisory_unlock(1701671785)"))
            holder.commit()
    pg.maintain()
    assert pg.kind == "ivfflat"
    with store.engine.connect() as conn:
        state = index_state(conn)
    assert state.kinds == {IVF_INDEX: target_lists(state.rows)}
    before = state.kinds
    pg.maintain()
    with store.engine.connect() as conn:
        assert index_state(conn).kinds == before


def test_pgvector_start_refuses_a_namespace_whose_newest_vectors_are_another_models(table):
    from ems_service.errors import DimensionMismatch

    store, settings, _, _ = table
    plain = Store(store.url)
    try:
        episode = condense(Trajectory(task="another model's run", steps=[Step(action="click[1]")]), namespace="ns2")
        (row,) = plain.episodes.insert([episode], _vectors(1, seed=11), "other-model")
    finally:
        plain.close()
    try:
        with pytest.raises(DimensionMismatch, match="other-model"):
            _backends(table, "exact")
    finally:
        store.episodes.delete("ns2", [row], reason="test")


def test_a_search_is_one_statement_and_a_session_tuned_by_another_client_is_searched_in_a_transaction(table):
    """On a connection the backend tuned (its session holds the index settings), an `index` search is one statement
    in autocommit: no BEGIN, no set_config, no COMMIT. A connection whose session another client changed (a
    transaction-pooling PgBouncer hands over sessions) is detected by the statement itself and searched again with
    settings local to a transaction: the same ids as on a tuned connection."""
    from sqlalchemy import event

    store, _, _, vecs = table
    faiss, pg = _backends(table, "index", ivf_probes=4)
    queries = [Query(q, 10, domain=None) for q in _queries(vecs, 6)]
    try:
        tuned = [pg.search("ns", q) for q in queries]  # plans counted, connections tuned
        statements: list[str] = []

        def seen(conn, cursor, statement, *args) -> None:
            statements.append(statement)
            if not conn.connection.driver_connection.autocommit:  # a transaction: psycopg sends BEGIN itself
                statements.append("BEGIN")

        event.listen(store.engine, "before_cursor_execute", seen)
        try:
            again = [pg.search("ns", q) for q in queries]
        finally:
            event.remove(store.engine, "before_cursor_execute", seen)
        assert [[h.id for h in hits] for hits in again] == [[h.id for h in hits] for hits in tuned]
        assert len(statements) == len(queries), statements
        assert not any("set_config" in s or s.strip().upper() in {"BEGIN", "COMMIT"} for s in statements)

        def another_clients_session(dbapi_conn, record, proxy) -> None:
            autocommit = dbapi_conn.autocommit
            dbapi_conn.autocommit = True
            dbapi_conn.execute("SET ivfflat.probes = 1")  # after the backend's own checkout hook
            dbapi_conn.execute("SET ivfflat.iterative_scan = off")
            dbapi_conn.autocommit = autocommit

        event.listen(store.engine, "checkout", another_clients_session)
        event.listen(store.engine, "before_cursor_execute", seen)
        statements.clear()
        try:
            handed_over = [pg.search("ns", q) for q in queries]
        finally:
            event.remove(store.engine, "before_cursor_execute", seen)
            event.remove(store.engine, "checkout", another_clients_session)
        assert [[h.id for h in hits] for hits in handed_over] == [[h.id for h in hits] for hits in tuned]
        assert sum("set_config" in s for s in statements) == len(queries)  # each search tuned its transaction
    finally:
        pg.close()
        faiss.close()
