"""episodes, the deletion change log and memory events

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "episodes",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("namespace", sa.String(128), nullable=False),
        sa.Column("trajectory_hash", sa.String(64), nullable=False),
        sa.Column("task", sa.Text(), nullable=False),
        sa.Column("domain", sa.String(255)),
        sa.Column("url_pattern", sa.Text()),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("embed_text", sa.Text(), nullable=False),
        sa.Column("success", sa.Boolean()),
        sa.Column("label_source", sa.String(16), nullable=False),
        sa.Column("status", sa.String(64)),
        sa.Column("trust", sa.Float(), nullable=False),
        sa.Column("error_patterns", sa.JSON(), nullable=False),
        sa.Column("failure_categories", sa.JSON(), nullable=False),
        sa.Column("n_steps", sa.Integer(), nullable=False),
        sa.Column("actions", sa.JSON(), nullable=False),
        sa.Column("agent", sa.String(255)),
        sa.Column("model", sa.String(255)),
        sa.Column("task_id", sa.String(255)),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("last_retrieved_at", TS),
        sa.Column("retrieval_count", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("seen_count", sa.Integer(), nullable=False, server_default="1"),
        sa.Column("embedding", sa.LargeBinary(), nullable=False),
        sa.Column("embedding_model", sa.String(255), nullable=False),
        sa.Column("embedding_dim", sa.Integer(), nullable=False),
        sa.Column("trajectory", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_episodes"),
        sa.UniqueConstraint("namespace", "trajectory_hash", name="uq_episodes_namespace_hash"),
    )
    op.create_index("ix_episodes_namespace_id", "episodes", ["namespace", "id"])
    op.create_index("ix_episodes_namespace_domain", "episodes", ["namespace", "domain"])
    op.create_table(
        "episode_deletions",
        sa.Column("seq", BigId, primary_key=True, autoincrement=True),
        sa.Column("namespace", sa.String(128), nullable=False),
        sa.Column("episode_id", sa.BigInteger(), nullable=False),
        sa.Column("reason", sa.String(32), nullable=False),
        sa.Column("deleted_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("seq", name="pk_episode_deletions"),
    )
    op.create_index("ix_episode_deletions_namespace_seq", "episode_deletions", ["namespace", "seq"])
    op.create_table(
        "events",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("namespace", sa.String(128), nullable=False),
        sa.Column("type", sa.String(64), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_events"),
    )
    op.create_index("ix_events_namespace_type_id", "events", ["namespace", "type", "id"])


def downgrade() -> None:
    op.drop_table("events")
    op.drop_table("episode_deletions")
    op.drop_table("episodes")
