"""The pgvector column of the episodes table and its indexes (made by migration 0007; idempotent).

`embedding_vec vector(384)` beside the float32 bytes every backend stores (the table stays the truth, so a
namespace can switch backends), kept inline (STORAGE PLAIN: an exact scan never de-toasts), with an HNSW index on
its half-precision cast (half the size of a float32 graph; the backend re-scores the candidates in float32) and a
partial index on the rows still without one (found at start in time proportional to those alone).
"""

from __future__ import annotations

import logging

from sqlalchemy import Connection, text

logger = logging.getLogger(__name__)

DIMENSION = 384  # the bundled MiniLM; another embedder needs a migration of its own
COLUMN = "embedding_vec"
HNSW_INDEX = "ix_episodes_embedding_hnsw"
MISSING_INDEX = "ix_episodes_embedding_missing"
HNSW_M, HNSW_EF_CONSTRUCTION = 16, 64  # pgvector's defaults (benchmarks/pgvector.py measures the recall)


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
    conn.execute(text(
        f"CREATE INDEX IF NOT EXISTS {HNSW_INDEX} ON episodes USING hnsw "
        f"(({COLUMN}::halfvec({DIMENSION})) halfvec_ip_ops) WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})"))
    conn.execute(text(f"CREATE INDEX IF NOT EXISTS {MISSING_INDEX} ON episodes (namespace, id) "
                      f"WHERE {COLUMN} IS NULL"))
    return True


def column_dimension(conn: Connection) -> int | None:
    """The declared dimension of the vector column, or None when the column does not exist."""
    row = conn.execute(text(
        "SELECT atttypmod FROM pg_attribute WHERE attrelid = to_regclass('episodes') AND attname = :col "
        "AND NOT attisdropped"), {"col": COLUMN}).first()
    return None if row is None else int(row[0])


def include_object(obj: object, name: str | None, type_: str, reflected: bool, compare_to: object) -> bool:
    """Alembic's autogenerate filter: the pgvector column and its indexes are made here, not by the ORM models
    (SQLite has no such column), so a comparison with the models must not propose dropping them."""
    return not (reflected and compare_to is None and name in (COLUMN, HNSW_INDEX, MISSING_INDEX))
