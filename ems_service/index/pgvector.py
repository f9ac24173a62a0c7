"""The pgvector backend (pgvector's home module): the vectors live in the episodes table and PostgreSQL searches them.

Nothing is held in the process: an API replica's memory and start-up time do not grow with the number of episodes,
and every replica (or a read-only one on a streaming standby) sees what the primary committed. A vector is written
by the episode's INSERT (IndexFeed.write_vectors_into), so it commits, is relabelled, deleted and evicted with its row.

Search: a filter that keeps at most `exact_below` rows (counted with a capped count) is scanned exactly; above it
the approximate index on the half-precision cast (IVF lists or an HNSW graph, `EMS_VECTOR__INDEX`; kept by
`maintain` on the primary, see pgvector_schema) gives `k * rerank` candidates, re-scored in float32 and re-sorted
(the pattern pgvector documents for an iterative scan, `relaxed_order`, which keeps reading lists or walking the
graph until the filtered query has its rows). When that scan ends short of its candidates (it gave up at
`ivf_max_probes` / `max_scan_tuples`: the filter's rows lie far from the query, e.g. another site's), the filtered
rows are scanned exactly instead, so a filter never costs recall. Exact mode gives the FAISS backend's ids in the
same order.

One band of filters is planned here rather than by PostgreSQL (auto mode, IVF index): those too large for an
exact scan yet so small that the query's `ivf_probes` nearest lists would hold fewer than half a pool of their rows
if the rows were spread like the table's (a site's rows at 1M). PostgreSQL prices the index under that assumption,
so it sorts every row of the filter instead (14 ms for a site of ~5,000 rows at 1M). Such a filter is first
searched among the `ivf_probes` lists' worth of the namespace's rows nearest the query, walked by the index with
the namespace alone (the rest of the filter is applied above a LIMIT); a full pool there shows its rows to lie near
the query (a run's own site: the same ids as an exact scan, without its sort), and anything less is answered by an
exact scan of its rows.

Round trips: the index settings a usual search needs are set once per pooled connection, for its session (`_tune`,
on checkout), so a search is one statement in autocommit; the statement reads the session's settings back
(`tuned`), and a connection whose settings are not these (a transaction-pooling PgBouncer handing over another
client's session) is searched with settings local to a transaction instead. Query vectors are sent in pgvector's
binary form.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
from pgvector.psycopg.vector import register_vector_info
from pgvector.sqlalchemy import VECTOR
from psycopg.types import TypeInfo
from sqlalchemy import Column, Connection, MetaData, Table, TextClause, bindparam, event, text
from sqlalchemy.exc import SQLAlchemyError

from ems_service.errors import DimensionMismatch, NotReady
from ems_service.index.base import Hit, IndexRow, Query, merge_preferring
from ems_service.index.pgvector_schema import (
    COLUMN,
    DIMENSION,
    IVF_INDEX,
    IndexState,
    build_index,
    column_dimension,
    index_state,
    plan_index,
)
from ems_service.tables import EpisodeRecord

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from ems_service.config import VectorSettings
    from ems_service.repositories.index_feed import IndexFeed

logger = logging.getLogger(__name__)

_BACKFILL_BATCH = 1000
_PLANS_KEPT = 4096  # filters whose capped count is remembered for count_ttl_s
_BUILD_RETRY_S = 3600  # after a failed index build
_ADAPTED = "ems_pgvector_dumper"  # a pooled connection's record: it sends numpy vectors as pgvector's binary
_TUNED = "ems_pgvector_settings"  # a pooled connection's record: the settings its session holds (see _tune)
_SETTING_NAMES = ("ivfflat.probes", "ivfflat.iterative_scan", "ivfflat.max_probes", "hnsw.ef_search",
                  "hnsw.iterative_scan", "hnsw.max_scan_tuples", "enable_sort")
# the session's settings now, in that order, as one text (NULL when one is unknown to the session)
_SETTINGS_NOW = " || ',' || ".join(f"current_setting('{name}', true)" for name in _SETTING_NAMES)


def episodes_with_vectors() -> Table:
    """The episodes table as this backend writes it: every mapped column plus the vector column."""
    return Table("episodes", MetaData(), *(c._copy() for c in EpisodeRecord.__table__.columns),
                 Column(COLUMN, VECTOR(DIMENSION)))


class PgvectorBackend:
    """VectorBackend over PostgreSQL + pgvector (see the module docstring)."""

    name = "pgvector"

    def __init__(self, store: IndexFeed, settings: VectorSettings, *, model: str, dimension: int) -> None:
        if store.engine.dialect.name != "postgresql":
            raise NotReady("EMS_VECTOR__BACKEND=pgvector needs PostgreSQL with the pgvector extension "
                           f"(EMS_DATABASE_URL is {store.engine.dialect.name}); use the faiss backend on SQLite")
        if dimension != DIMENSION:
            raise DimensionMismatch(f"the pgvector column holds {DIMENSION}-d vectors but the embedder {model} makes "
                                    f"{dimension}-d ones: a migration for that dimension is needed")
        self.store = store
        self.settings = settings
        self.model = model
        self._counts: dict[str, tuple[int, float]] = {}
        self._plans: OrderedDict[tuple, tuple[str, float]] = OrderedDict()  # filter -> (plan, when counted)
        self._lock = threading.Lock()
        self._expected = ",".join(self._settings_for(settings.ef_search)[n] for n in _SETTING_NAMES)
        self._vector_type: TypeInfo | None = None  # pgvector's type, fetched once for the dumpers
        self._tune_listener = self._tune
        event.listen(store.engine, "checkout", self._tune_listener)
        self.standby = False
        self.kind: str | None = None  # the approximate index searches use now (None: none yet, exact scans)
        self._retry_at = 0.0  # after a failed build, when to try again
        self._index_bytes = 0
        self._lists = 0  # the IVF index's lists (0: none)
        self._rows_per_list = 1  # the table's rows over the IVF lists (the `near` plan's walk)
        store.write_vectors_into(episodes_with_vectors(), COLUMN)

    # -- life cycle -------------------------------------------------------------------------------------------

    def start(self) -> None:
        """Check the schema, then give rows stored without a vector (under another backend) theirs."""
        with self.store.engine.connect() as conn:
            dim = column_dimension(conn)
            self.standby = bool(conn.execute(text("SELECT pg_is_in_recovery()")).scalar())
        if dim is None:
            raise NotReady("the database has no pgvector column: install the pgvector extension in PostgreSQL, "
                           "then run `webcoach db upgrade`")
        if dim != DIMENSION:
            raise DimensionMismatch(f"the pgvector column holds {dim}-d vectors, this build {DIMENSION}-d")
        self._check_models()
        if self.standby:
            logger.info("pgvector backend on a standby: read-only, searches what the primary committed")
            self._look()
            return
        filled = self._backfill()
        if filled:
            logger.info("pgvector backend: %d stored vectors copied into the vector column", filled)
        self._look()

    def _check_models(self) -> None:
        """The newest row of each namespace must hold this embedder's vectors (a cheap look, not a scan): the
        namespaces by a loose index scan, then one row each, so start-up does not grow with the episodes."""
        with self.store.session() as s:
            rows = s.execute(text(
                "WITH RECURSIVE ns AS ((SELECT namespace FROM episodes ORDER BY namespace LIMIT 1) UNION ALL "
                "SELECT (SELECT e.namespace FROM episodes e WHERE e.namespace > ns.namespace ORDER BY e.namespace "
                "LIMIT 1) FROM ns WHERE ns.namespace IS NOT NULL) "
                "SELECT ns.namespace, last.embedding_model, last.embedding_dim FROM ns CROSS JOIN LATERAL "
                "(SELECT embedding_model, embedding_dim FROM episodes e WHERE e.namespace = ns.namespace "
                "ORDER BY e.id DESC LIMIT 1) last WHERE ns.namespace IS NOT NULL")).all()
        for ns, model, dim in rows:
            if model != self.model or dim != DIMENSION:
                raise DimensionMismatch(
                    f"namespace {ns!r} holds vectors of {model} ({dim}-d) but the embedder is {self.model} "
                    f"({DIMENSION}-d): re-embed with `webcoach export` + `webcoach import`")

    def _backfill(self) -> int:
        """Copy the stored float32 bytes of rows without a vector into the column, a batch per transaction."""
        filled = 0
        while True:
            with self.store.session() as s:
                rows = s.execute(text(
                    f"SELECT id, embedding FROM episodes WHERE {COLUMN} IS NULL AND embedding_dim = :dim "
                    "ORDER BY namespace, id LIMIT :n FOR UPDATE SKIP LOCKED"),
                    {"dim": DIMENSION, "n": _BACKFILL_BATCH}).all()
                if not rows:
                    return filled
                s.execute(text(f"UPDATE episodes SET {COLUMN} = :v WHERE id = :id").bindparams(
                    bindparam("v", type_=VECTOR(DIMENSION))),
                    [{"id": r.id, "v": np.frombuffer(r.embedding, dtype=np.float32, count=DIMENSION)} for r in rows])
            filled += len(rows)

    def maintain(self) -> None:
        """On the primary: build the configured approximate index once the table can train it, rebuild it when the
        table has outgrown it (pgvector_schema.plan_index), CONCURRENTLY, so searches and writes go on."""
        state = self._look()
        if self.standby or plan_index(state, self.settings.index) is None or time.monotonic() < self._retry_at:
            return
        try:
            built = build_index(self.store.engine, self.settings.index)
        except SQLAlchemyError as exc:  # e.g. a role without CREATE on the table: searches go on, exact or not
            self._retry_at = time.monotonic() + _BUILD_RETRY_S
            logger.warning("pgvector: building the %s index failed (%s); next try in %d s, or `webcoach db index`",
                           self.settings.index, type(getattr(exc, "orig", None) or exc).__name__, _BUILD_RETRY_S)
            return
        if built:
            self._look()

    def _look(self) -> IndexState:
        """The index as it is now (kind, size on disk), for searches' describe and maintenance's plan."""
        with self.store.engine.connect() as conn:
            state = index_state(conn)
            self._index_bytes = int(conn.execute(text(
                "SELECT coalesce(sum(pg_relation_size(to_regclass(n))), 0) FROM unnest(CAST(:names AS text[])) n"),
                {"names": list(state.kinds)}).scalar() or 0)
        self.kind = state.kind()
        self._lists = state.kinds.get(IVF_INDEX) or 0
        self._rows_per_list = max(1, state.rows // max(1, self._lists))
        return state

    def close(self) -> None:
        """Nothing held but the connections' settings hook."""
        if event.contains(self.store.engine, "checkout", self._tune_listener):
            event.remove(self.store.engine, "checkout", self._tune_listener)

    def follow(self, *, lookback: int) -> tuple[int, int]:
        """Nothing to follow: every process searches the same table."""
        return 0, 0

    # -- writes (the rows carry their vectors already) ------------------------------------------------------

    def add(self, namespace: str, rows: list[IndexRow]) -> None:
        with self._lock:
            if namespace in self._counts:
                n, at = self._counts[namespace]
                self._counts[namespace] = (n + len(rows), at)

    def remove(self, namespace: str, ids: list[int]) -> None:
        with self._lock:
            self._counts.pop(namespace, None)
            self._plans.clear()

    # -- reads ------------------------------------------------------------------------------------------------

    def count(self, namespace: str) -> int:
        """Rows of `namespace`, counted at most once per `count_ttl_s` (plus this process's adds since)."""
        now = time.monotonic()
        with self._lock:
            cached = self._counts.get(namespace)
        if cached is not None and now - cached[1] <= self.settings.count_ttl_s:
            return cached[0]
        return self._count(namespace, now)

    def _count(self, namespace: str, now: float) -> int:
        with self.store.session() as s:
            n = int(s.execute(text("SELECT count(*) FROM episodes WHERE namespace = :ns"), {"ns": namespace}).scalar())  # type: ignore[arg-type]  # count(*): never NULL
        with self._lock:
            self._counts[namespace] = (n, now)
        return n

    def ids(self, namespace: str) -> set[int]:
        with self.store.session() as s:
            return set(s.scalars(text(f"SELECT id FROM episodes WHERE namespace = :ns AND {COLUMN} IS NOT NULL"),
                                 {"ns": namespace}))

    def sizes(self) -> dict[str, int]:
        with self._lock:
            return {ns: n for ns, (n, _) in self._counts.items()}

    def describe(self, namespace: str) -> dict[str, object]:
        index = {"ivfflat": f"pgvector IVF (halfvec, inner product, {self.settings.ivf_probes} probes)",
                 "hnsw": f"pgvector HNSW (halfvec, inner product, ef_search {self.settings.ef_search})",
                 None: "pgvector exact scan (no approximate index yet)"}[self.kind]
        kind = {"exact": "pgvector exact scan", "index": index,
                "auto": f"{index}; exact at or below {self.settings.exact_below}"}[self.settings.search]
        return {"index_type": kind, "index_size": self._count(namespace, time.monotonic()), "index_bytes": 0,
                "index_disk_bytes": self._index_bytes, "start": "standby (read-only)" if self.standby else "primary"}

    def search(self, namespace: str, query: Query) -> list[Hit]:
        if query.k <= 0:
            return []
        if query.prefer_domain and query.domain is None and query.boost > 0:
            every = self._search(namespace, query)
            same = self._search(namespace, _with_domain(query, query.prefer_domain))
            return merge_preferring(same, every, boost=query.boost, k=query.k)
        return self._search(namespace, query)

    def _search(self, namespace: str, query: Query) -> list[Hit]:
        q = _query_vector(query.vector)
        pool = query.k * self.settings.rerank
        with self.store.reads() as conn:  # autocommit: one round trip a search on the usual paths
            plan = self._plan(conn, namespace, query, pool)
            if plan == "exact":
                return _hits(conn.execute(*self._exact_statement(namespace, query, q)))
            if self._tuned_for(pool):  # plan "index" or "near"
                rows = conn.execute(*self._walk_statement(namespace, query, q, pool, near=plan == "near",
                                                          checked=True)).all()
                if not rows or rows[0].tuned == self._expected:
                    if rows and rows[0].pooled >= pool:
                        return _hits(rows)
                    return _hits(conn.execute(*self._exact_statement(namespace, query, q)))  # see below
                # the connection's settings are not this backend's (a pooler handed another session's): tuned below
        with self.store.session() as s:  # the settings set for this transaction alone
            sql, params = self._statement(s, namespace, query)
            rows = s.execute(sql, params).all()
            if params["pool"] and (not rows or rows[0].pooled < params["pool"]):  # pool 0: an exact plan
                # The scan ended before it had `pool` candidates: either fewer rows exist (an exact scan of them
                # is cheap), or the iterative scan gave up (ivfflat.max_probes, hnsw.max_scan_tuples) because the
                # filter's rows lie far from the query (a site other than the query's), or a small filter's rows
                # are not dense in the nearest lists (see the module docstring). Only an exact scan of the
                # filtered rows then has the true nearest ones.
                rows = s.execute(*self._exact_statement(namespace, query, q)).all()
        return _hits(rows)

    def explain(self, namespace: str, query: Query) -> str:
        """PostgreSQL's plan of the search `query` would run (to see whether the approximate index is used)."""
        with self.store.session() as s:
            sql, params = self._statement(s, namespace, query)
            return "\n".join(s.scalars(text("EXPLAIN " + sql.text), params))

    # -- the session's settings (see _tune) -----------------------------------------------------------------

    def _settings_for(self, pool: int) -> dict[str, str]:
        """pgvector's settings for a search with a candidate pool of `pool` (sorting on: a session's own choice)."""
        tuning = self.settings
        return {"ivfflat.probes": str(tuning.ivf_probes), "ivfflat.iterative_scan": "relaxed_order",
                "ivfflat.max_probes": str(max(tuning.ivf_probes, tuning.ivf_max_probes)),
                "hnsw.ef_search": str(max(tuning.ef_search, min(pool, 1000))),
                "hnsw.iterative_scan": "relaxed_order", "hnsw.max_scan_tuples": str(tuning.max_scan_tuples),
                "enable_sort": "on"}

    def _tuned_for(self, pool: int) -> bool:
        """Whether the settings `_tune` gives each connection are those a search with this pool needs."""
        return max(self.settings.ef_search, min(pool, 1000)) == self.settings.ef_search

    def _tune(self, dbapi_conn: Any, record: Any, _proxy: Any) -> None:
        """On checkout, once per connection: the index settings of a usual search, for the session, so that such a
        search is one statement in autocommit (no BEGIN, set_config, COMMIT round trips). Each search checks them
        (`tuned`), so a connection whose session another client changed (a transaction-pooling PgBouncer) only
        costs the slower, transaction-local path."""
        if record.info.get(_TUNED) == self._expected:
            return
        names = self._settings_for(self.settings.ef_search)
        try:
            autocommit = dbapi_conn.autocommit
            dbapi_conn.autocommit = True
            try:
                if not record.info.get(_ADAPTED):  # numpy query vectors go out in pgvector's binary form
                    if self._vector_type is None:
                        self._vector_type = TypeInfo.fetch(dbapi_conn, "vector")
                    register_vector_info(dbapi_conn, self._vector_type)
                    record.info[_ADAPTED] = True
                dbapi_conn.execute("SELECT " + ", ".join(["set_config(%s, %s, false)"] * len(names)),
                                   [x for pair in names.items() for x in pair])
            finally:
                dbapi_conn.autocommit = autocommit
        except Exception as exc:  # noqa: BLE001 - the search checks its settings and takes the tuned path
            logger.debug("pgvector: the session settings were not set (%s)", type(exc).__name__)
            return
        record.info[_TUNED] = self._expected

    # -- statements -------------------------------------------------------------------------------------------

    def _statement(self, s: Session, namespace: str, query: Query) -> tuple[TextClause, dict]:
        """The search's SQL and parameters with the index settings set for the session's transaction (a pool
        beyond the session's ef_search, a connection not tuned by `_tune`); `pool` is 0 for a plan that scans
        exactly."""
        q = _query_vector(query.vector)
        pool = query.k * self.settings.rerank
        plan = self._plan(s, namespace, query, pool)
        if plan == "exact":
            sql, params = self._exact_statement(namespace, query, q)
            return sql, {**params, "pool": 0}
        names = self._settings_for(pool)
        s.execute(text("SELECT " + ", ".join(f"set_config(:n{i}, :v{i}, true)" for i in range(len(names)))),
                  {**{f"n{i}": n for i, n in enumerate(names)}, **{f"v{i}": v for i, v in enumerate(names.values())}})
        return self._walk_statement(namespace, query, q, pool, near=plan == "near", checked=False)

    def _walk_statement(self, namespace: str, query: Query, q: np.ndarray, pool: int, *, near: bool,
                        checked: bool) -> tuple[TextClause, dict]:
        """`pool` candidates by the approximate index (half precision), re-scored in float32.

        `near`: the candidates are the filter's rows among the `ivf_probes` lists' worth of the namespace's rows
        nearest the query (a LIMIT the filter cannot be pushed below, so PostgreSQL walks the index with the
        namespace alone; see the module docstring). In a namespace much smaller than the table the walk covers
        more of it than its share of 4 lists: it finds the pool more easily, from rows nearer to exhaustive.
        `checked` adds the session's settings as `tuned` (see _tune). The parameter is cast to `vector` wherever it
        occurs: PostgreSQL gives a parameter one type, and a first `CAST(:q AS halfvec)` would make the re-scoring
        half precision."""
        where, params = _where(namespace, query)
        order = f"{COLUMN}::halfvec({DIMENSION}) <#> CAST(:q AS vector({DIMENSION}))::halfvec({DIMENSION})"
        if near:  # the namespace's rows nearest the query (one shard when namespaces are partitioned)
            walked, filtered = _where(namespace, Query(query.vector, query.k))[0], " AND ".join(_filters(query)[0])
            candidates = (f"SELECT id, v FROM (SELECT id, {COLUMN} AS v, domain, success, task_id FROM episodes "
                          f"WHERE {walked} ORDER BY {order} LIMIT :scan) nearest WHERE {filtered} LIMIT :pool")
            params["scan"] = self.settings.ivf_probes * self._rows_per_list
        else:
            candidates = f"SELECT id, {COLUMN} AS v FROM episodes WHERE {where} ORDER BY {order} LIMIT :pool"
        tuned = f", {_SETTINGS_NOW} AS tuned" if checked else ""
        return text(f"WITH c AS MATERIALIZED ({candidates}) SELECT id, -(v <#> CAST(:q AS vector({DIMENSION}))) "
                    f"AS score, (SELECT count(*) FROM c) AS pooled{tuned} FROM c "
                    f"ORDER BY v <#> CAST(:q AS vector({DIMENSION})), id LIMIT :k"), \
            {**params, "q": q, "k": query.k, "pool": pool}

    def _exact_statement(self, namespace: str, query: Query, q: np.ndarray) -> tuple[TextClause, dict]:
        """An exact scan of the rows the filter keeps (the FAISS backend's ids in the same order)."""
        where, params = _where(namespace, query)
        return text(f"SELECT id, -({COLUMN} <#> CAST(:q AS vector({DIMENSION}))) AS score FROM episodes "
                    f"WHERE {where} ORDER BY {COLUMN} <#> CAST(:q AS vector({DIMENSION})), id LIMIT :k"), \
            {**params, "q": q, "k": query.k}

    def _plan(self, s: Session | Connection, namespace: str, query: Query, pool: int) -> str:
        """How to search: 'exact' (by mode, or auto when the filter keeps at most `exact_below` rows), 'near' (auto,
        IVF: a filter too small for PostgreSQL to price the index right, see the module docstring) or 'index'."""
        mode = self.settings.search
        if mode != "auto":
            return "exact" if mode == "exact" else "index"
        # the rows a filter keeps below which its rows, spread like the table's, would not fill half a pool in the
        # nearest `ivf_probes` lists
        small = pool * self._lists // (2 * self.settings.ivf_probes) if self.kind == "ivfflat" else 0
        if query.domain is None and query.success is None:
            small = 0  # no filter (or only a task left out): PostgreSQL picks the index
        cap = max(self.settings.exact_below, small)
        # A capped count, unfiltered too (a namespace's full count at 1M rows took ~50 ms), of the filter without
        # its left-out task: that removes a task's few runs, and keying on it would count again for every session
        # (the coach leaves out each run's own task). The count can only be high; any plan returns the same rows.
        key = (namespace, query.domain, query.success, cap)
        now = time.monotonic()
        with self._lock:
            known = self._plans.get(key)
        if known is not None and now - known[1] <= self.settings.count_ttl_s:
            return known[0]
        # the filter's rows, with a vector or not (only rows stored under another backend lack one until start
        # backfills them): the (namespace, domain) index answers it alone once the table is vacuumed
        counted, count_params = _where(namespace, Query(query.vector, query.k, domain=query.domain,
                                                        success=query.success), with_vector=False)
        rows = int(s.execute(text(f"SELECT count(*) FROM (SELECT 1 FROM episodes WHERE {counted} LIMIT :cap) c"),  # type: ignore[arg-type]  # count(*): never NULL
                             {**count_params, "cap": cap + 1}).scalar())
        plan = "exact" if rows <= self.settings.exact_below else "near" if rows <= small else "index"
        with self._lock:  # a stale plan costs time, not recall (a walk that falls short is redone exactly)
            self._plans[key] = (plan, now)
            self._plans.move_to_end(key)
            if len(self._plans) > _PLANS_KEPT:
                self._plans.popitem(last=False)
        return plan


def _query_vector(vector: np.ndarray) -> np.ndarray:
    """A query vector as the parameter the statements bind: float32, sent in pgvector's binary form (the dumper
    `_tune` registers; formatting 384 floats as text took 0.5 ms a search)."""
    v = np.asarray(vector, dtype=np.float32).reshape(-1)
    if v.shape[0] != DIMENSION:
        raise DimensionMismatch(f"query dimension {v.shape[0]} != index dimension {DIMENSION}")
    return v


def _hits(rows: Iterable[Any]) -> list[Hit]:
    return [Hit(int(r.id), float(r.score)) for r in rows]


def _with_domain(query: Query, domain: str) -> Query:
    return Query(query.vector, query.k, domain=domain, success=query.success, exclude_task_id=query.exclude_task_id)


def _where(namespace: str, query: Query, *, with_vector: bool = True) -> tuple[str, dict]:
    """The filter as SQL (fixed text, values bound) with its parameters."""
    filters, params = _filters(query)
    return " AND ".join(["namespace = :ns", *([f"{COLUMN} IS NOT NULL"] if with_vector else []), *filters]), \
        {"ns": namespace, **params}


def _filters(query: Query) -> tuple[list[str], dict[str, object]]:
    """The query's filters beyond its namespace, as SQL clauses (fixed text, values bound) with their parameters."""
    clauses: list[str] = []
    params: dict[str, object] = {}
    if query.domain is not None:
        clauses.append("domain = :domain")
        params["domain"] = query.domain
    if query.success is not None:
        clauses.append("success = :success")
        params["success"] = query.success
    if query.exclude_task_id is not None:
        clauses.append("task_id IS DISTINCT FROM :task")
        params["task"] = query.exclude_task_id
    return clauses, params
