"""lessons, experience facts, episode intent and verified flag

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("episodes") as batch:
        batch.add_column(sa.Column("intent", sa.String(16), nullable=False, server_default="other"))
        batch.add_column(sa.Column("verified", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.create_table(
        "lessons",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("namespace", sa.String(128), nullable=False),
        sa.Column("lesson", sa.Text(), nullable=False),
        sa.Column("category", sa.String(32), nullable=False),
        sa.Column("failed_command", sa.String(64)),
        sa.Column("error_pattern", sa.Text()),
        sa.Column("domain", sa.String(255)),
        sa.Column("use_count", sa.Integer(), nullable=False, server_default="1"),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("last_used", TS, nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("triggered_domains", sa.JSON(), nullable=False),
        sa.Column("recovery", sa.JSON(), nullable=False),
        sa.Column("generic", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.PrimaryKeyConstraint("id", name="pk_lessons"),
    )
    op.create_index("ix_lessons_namespace_command", "lessons", ["namespace", "failed_command"])
    op.create_table(
        "experience_facts",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("namespace", sa.String(128), nullable=False),
        sa.Column("domain", sa.String(255), nullable=False),
        sa.Column("intent", sa.String(16), nullable=False),
        sa.Column("facts", sa.JSON(), nullable=False),
        sa.Column("verified", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("updated_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_experience_facts"),
        sa.UniqueConstraint("namespace", "domain", "intent", name="uq_experience_facts_key"),
    )


def downgrade() -> None:
    op.drop_table("experience_facts")
    op.drop_index("ix_lessons_namespace_command", table_name="lessons")
    op.drop_table("lessons")
    with op.batch_alter_table("episodes") as batch:
        batch.drop_column("verified")
        batch.drop_column("intent")
