"""The pgvector column of the episodes table and its indexes.

`embedding_vec vector(384)` beside the float32 bytes every backend stores (the table stays the truth, so a
namespace can switch backends), kept inline (STORAGE PLAIN: an exact scan never de-toasts), and a partial index on
the rows still without one (found at start in time proportional to those alone): made by migration 0007
(`ensure`, idempotent).

The approximate index on the column's half-precision cast (half the size of float32; the backend re-scores the
candidates in float32) is kept by the backend on the primary (`plan_index` / `build_index`), of the kind
`EMS_VECTOR__INDEX` names:

- `ivfflat` (the default): k-means lists. It needs rows to train on, so it is built once a table has
  `IVF_MIN_ROWS`, and rebuilt (CONCURRENTLY, the old one serving meanwhile) when the table has outgrown its lists
  by 2x either way. Robust to what a fleet stores: many near-identical runs of one task (benchmarks/pgvector.py).
- `hnsw`: a graph, built once, even on an empty table. On such near-duplicate clusters larger than its candidate
  lists it strands queries in the wrong cluster (recall@10 below 0.9 at 1M whatever ef_search: benchmarks/results/pgvector.json).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, text

logger = logging.getLogger(__name__)

DIMENSION = 384  # the bundled MiniLM; another embedder needs a migration of its own
COLUMN = "embedding_vec"
HNSW_INDEX = "ix_episodes_embedding_hnsw"
IVF_INDEX = "ix_episodes_embedding_ivfflat"
MISSING_INDEX = "ix_episodes_embedding_missing"
HNSW_M, HNSW_EF_CONSTRUCTION = 16, 64  # pgvector's defaults (benchmarks/pgvector.py measures the recall)
IVF_MIN_ROWS = 1_000  # below this an IVF index has too little to train on (and auto mode scans exactly anyway)
IVF_ROWS_PER_LIST = 500  # lists = rows / 500 up to 1M rows (2,000 lists: 4 probes read ~2,000 rows), then
IVF_MAX_LISTS = 32_768  # 2 x sqrt(rows) (pgvector's advice past 1M, which keeps the k-means build tractable)
_CAST = f"({COLUMN}::halfvec({DIMENSION}))"  # the expression searches order by
_BUILD_LOCK = 0x656D7369  # pg_advisory_lock key: one replica builds at a time


def available(conn: Connection) -> bool:
    """Whether this PostgreSQL server has the pgvector extension installed (or can install it)."""
    return conn.execute(text("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")).first() is not None


def ensure(conn: Connection) -> bool:
    """Add the extension, column and indexes where missing; False when the server has no pgvector."""
    if not available(conn):
        logger.warning("this PostgreSQL has no pgvector extension: EMS_VECTOR__BACKEND=pgvector is unavailable "
                       "until it is installed and `webcoach db upgrade` runs again")
        return False
    if conn.execute(text("SELECT 1 FROM pg_extension WHERE extname = 'vector'")).first() is None:
        conn.execute(text("CREATE EXTENSION vector"))  # needs a role allowed to (or a DBA's CREATE EXTENSION first)
    conn.execute(text(f"ALTER TABLE episodes ADD COLUMN IF NOT EXISTS {COLUMN} vector({DIMENSION})"))
    conn.execute(text(f"ALTER TABLE episodes ALTER COLUMN {COLUMN} SET STORAGE PLAIN"))
    conn.execute(text(f"CREATE INDEX IF NOT EXISTS {MISSING_INDEX} ON episodes (namespace, id) "
                      f"WHERE {COLUMN} IS NULL"))
    return True


def target_lists(rows: int) -> int:
    """IVF lists for a table of `rows` rows (see IVF_ROWS_PER_LIST)."""
    if rows <= 1_000_000:
        return max(1, rows // IVF_ROWS_PER_LIST)
    return min(IVF_MAX_LISTS, int(2 * rows ** 0.5))


@dataclass(frozen=True)
class IndexState:
    """The approximate indexes on the vector column as they are, and the table's estimated rows."""

    rows: int
    kinds: dict[str, int | None]  # index name -> IVF lists (None for HNSW)
    partitioned: bool = False  # a coordinator's table over shards: each shard keeps its own index

    def kind(self) -> str | None:
        """The kind searches use now ('ivfflat' / 'hnsw'), or None when there is none yet (an exact scan)."""
        if IVF_INDEX in self.kinds:
            return "ivfflat"
        return "hnsw" if HNSW_INDEX in self.kinds else None


def index_state(conn: Connection) -> IndexState:
    """What `plan_index` decides from: pg_class's row estimate (kept by autovacuum / ANALYZE; counted when the table
    was never analyzed) and the ANN indexes with their lists."""
    rows, relkind = conn.execute(text(
        "SELECT reltuples, relkind FROM pg_class WHERE oid = to_regclass('episodes')")).one()
    if relkind == "p":  # partitioned (over postgres_fdw shards): no index here, no count across the shards
        return IndexState(0, {}, partitioned=True)
    if rows is None or rows < 0:
        rows = conn.execute(text("SELECT count(*) FROM episodes")).scalar()
    found = conn.execute(text(
        "SELECT c.relname, am.amname, c.reloptions FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "JOIN pg_am am ON am.oid = c.relam WHERE i.indrelid = to_regclass('episodes') "
        "AND am.amname IN ('ivfflat', 'hnsw') AND i.indisvalid")).all()
    kinds: dict[str, int | None] = {}
    for name, am, options in found:
        lists = next((int(o.split("=", 1)[1]) for o in options or [] if o.startswith("lists=")), 100)
        kinds[name] = lists if am == "ivfflat" else None
    return IndexState(int(rows or 0), kinds)


def plan_index(state: IndexState, kind: str) -> int | None:
    """What `build_index` should make for `kind`: IVF lists (0 for HNSW), or None when the index is right as it is
    (or is not this table's to keep: a partitioned coordinator's shards keep their own)."""
    if state.partitioned:
        return None
    if kind == "hnsw":
        return None if set(state.kinds) == {HNSW_INDEX} else 0
    if state.rows < IVF_MIN_ROWS:
        return None  # nothing to train on yet; auto mode scans exactly
    want = target_lists(state.rows)
    have = state.kinds.get(IVF_INDEX)
    if have is not None and want / 2 <= have <= want * 2 and set(state.kinds) == {IVF_INDEX}:
        return None
    return want


def build_index(engine: Engine, kind: str, *, lists: int | None = None, concurrently: bool = True,
                memory: str = "1GB") -> bool:
    """Make the `kind` index (IVF with `lists`, default for the table's rows), then drop every other ANN index.

    CREATE INDEX CONCURRENTLY under a new name while the old index keeps serving, then a swap; under an advisory
    lock so that of several API replicas on one primary only one builds (False: another holds it). `memory` is the
    build's maintenance_work_mem (an HNSW graph built past it slows down many times)."""
    if kind not in ("ivfflat", "hnsw"):  # both go into the DDL's text
        raise ValueError(f"the vector index is ivfflat or hnsw, not {kind!r}")
    if lists is not None and not 1 <= int(lists) <= IVF_MAX_LISTS:
        raise ValueError(f"IVF lists must be 1..{IVF_MAX_LISTS:,}, not {lists}")
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        if not conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": _BUILD_LOCK}).scalar():
            return False
        try:
            conn.execute(text("SELECT set_config('maintenance_work_mem', :m, false)"), {"m": memory})
            name = HNSW_INDEX if kind == "hnsw" else IVF_INDEX
            if kind == "hnsw":
                options = f"m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION}"
            else:
                lists = lists or target_lists(index_state(conn).rows)
                options = f"lists = {lists}"
            how = "CONCURRENTLY " if concurrently else ""
            conn.execute(text(f"DROP INDEX {how}IF EXISTS {name}_new"))  # a build cut short leaves it invalid
            conn.execute(text(f"CREATE INDEX {how}{name}_new ON episodes USING {kind} "
                              f"({_CAST} halfvec_ip_ops) WITH ({options})"))
            for old in (HNSW_INDEX, IVF_INDEX):
                conn.execute(text(f"DROP INDEX {how}IF EXISTS {old}"))
            conn.execute(text(f"ALTER INDEX {name}_new RENAME TO {name}"))
            conn.execute(text("ANALYZE episodes"))
        finally:
            conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _BUILD_LOCK})
    logger.info("pgvector: %s index built%s", kind, f" ({lists} lists)" if kind == "ivfflat" else "")
    return True


def build_at(url: str, kind: str, *, lists: int | None = None) -> IndexState | None:
    """`webcoach db index`: build the `kind` index on the database at `url` now; its state after, or None when
    another process holds the build lock. NotReady when the database has no pgvector column."""
    from sqlalchemy import create_engine

    from ems_service.errors import NotReady

    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            if not available(conn) or column_dimension(conn) is None:
                raise NotReady("this database has no pgvector column: install pgvector, then `webcoach db upgrade`")
        if not build_index(engine, kind, lists=lists):
            return None
        with engine.connect() as conn:
            return index_state(conn)
    finally:
        engine.dispose()


def column_dimension(conn: Connection) -> int | None:
    """The declared dimension of the vector column, or None when the column does not exist."""
    row = conn.execute(text(
        "SELECT atttypmod FROM pg_attribute WHERE attrelid = to_regclass('episodes') AND attname = :col "
        "AND NOT attisdropped"), {"col": COLUMN}).first()
    return None if row is None else int(row[0])


def include_object(obj: object, name: str | None, type_: str, reflected: bool, compare_to: object) -> bool:
    """Alembic's autogenerate filter: the pgvector column and its indexes are made here, not by the ORM models
    (SQLite has no such column), so a comparison with the models must not propose dropping them."""
    return not (reflected and compare_to is None and name in (COLUMN, HNSW_INDEX, IVF_INDEX, MISSING_INDEX))
