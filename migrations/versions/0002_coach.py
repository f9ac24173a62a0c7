"""coach: per-episode step briefs, live sessions and fitted risk models

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("episodes") as batch:
        batch.add_column(sa.Column("steps_brief", sa.JSON(), nullable=False, server_default="[]"))
    op.create_table(
        "sessions",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("namespace", sa.String(128), nullable=False),
        sa.Column("trajectory", sa.JSON(), nullable=False),
        sa.Column("n_steps", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("status", sa.String(16), nullable=False, server_default="open"),
        sa.Column("advice_log", sa.JSON(), nullable=False),
        sa.Column("last_guidance", sa.JSON()),
        sa.Column("episode_id", sa.BigInteger()),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_sessions"),
    )
    op.create_index("ix_sessions_namespace_updated_at", "sessions", ["namespace", "updated_at"])
    op.create_table(
        "risk_models",
        sa.Column("namespace", sa.String(128), nullable=False),
        sa.Column("model", sa.JSON(), nullable=False),
        sa.Column("metrics", sa.JSON(), nullable=False),
        sa.Column("n_episodes", sa.Integer(), nullable=False),
        sa.Column("fitted_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("namespace", name="pk_risk_models"),
    )


def downgrade() -> None:
    op.drop_table("risk_models")
    op.drop_index("ix_sessions_namespace_updated_at", table_name="sessions")
    op.drop_table("sessions")
    with op.batch_alter_table("episodes") as batch:
        batch.drop_column("steps_brief")
