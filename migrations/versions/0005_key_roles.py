"""key roles (admin, writer, verifier) instead of an admin flag; lessons awaiting approval

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("api_keys") as batch:
        batch.add_column(sa.Column("role", sa.String(16), nullable=False, server_default="writer"))
    op.execute("UPDATE api_keys SET role = 'admin' WHERE admin")
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_column("admin")
        batch.create_check_constraint(op.f("ck_api_keys_role"), "role IN ('admin', 'writer', 'verifier')")
    with op.batch_alter_table("lessons") as batch:
        batch.add_column(sa.Column("approved", sa.Boolean(), nullable=False, server_default=sa.true()))


def downgrade() -> None:
    with op.batch_alter_table("lessons") as batch:
        batch.drop_column("approved")
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_constraint(op.f("ck_api_keys_role"), type_="check")
        batch.add_column(sa.Column("admin", sa.Boolean(), nullable=False, server_default=sa.false()))
    # a verifier becomes a plain key: the old schema has no role between writer and admin
    op.execute("UPDATE api_keys SET admin = (role = 'admin')")
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_column("role")
