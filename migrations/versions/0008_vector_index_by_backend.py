"""The approximate vector index is kept by the pgvector backend, of the kind EMS_VECTOR__INDEX names

Migration 0007 made an HNSW index on every PostgreSQL with pgvector. The backend now builds the configured kind on
the primary once the table has rows to train on (IVF, the default) and rebuilds it as the table grows
(ems_service.index.pgvector_schema.plan_index); `webcoach db index` builds it at once. Until then searches scan
exactly. SQLite and a PostgreSQL without pgvector are left as they are.

Revision ID: 0008
Revises: 0007
"""

from alembic import op

from ems_service.index.pgvector_schema import HNSW_EF_CONSTRUCTION, HNSW_INDEX, HNSW_M, IVF_INDEX

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == "postgresql" and conn.exec_driver_sql(
            "SELECT 1 FROM pg_extension WHERE extname = 'vector'").first() is not None:
        op.execute(f"DROP INDEX IF EXISTS {IVF_INDEX}")
        op.execute(f"CREATE INDEX IF NOT EXISTS {HNSW_INDEX} ON episodes USING hnsw "
                   f"((embedding_vec::halfvec(384)) halfvec_ip_ops) "
                   f"WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})")
