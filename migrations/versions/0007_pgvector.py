"""pgvector: the episodes' vectors as a column PostgreSQL searches (HNSW), for EMS_VECTOR__BACKEND=pgvector

PostgreSQL only, and only where the server has the pgvector extension (`pg_available_extensions`); SQLite and a
PostgreSQL without it are left as they are, and `webcoach db upgrade` on the same database adds the column once
the extension is installed (ems_service.index.pgvector_schema.ensure). The column is filled by the pgvector
backend: in the INSERT of each new episode, and at its start for rows stored while another backend served.

Revision ID: 0007
Revises: 0006
"""

from alembic import op

from ems_service.index.pgvector_schema import COLUMN, HNSW_INDEX, MISSING_INDEX, ensure

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == "postgresql":
        ensure(conn)


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == "postgresql":
        op.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
        op.execute(f"DROP INDEX IF EXISTS {MISSING_INDEX}")
        op.execute(f"ALTER TABLE episodes DROP COLUMN IF EXISTS {COLUMN}")
