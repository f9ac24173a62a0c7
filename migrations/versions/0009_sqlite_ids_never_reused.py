"""SQLite never hands out an episode id again (AUTOINCREMENT)

An SQLite INTEGER PRIMARY KEY gives a new row the largest id in the table plus one, so deleting the newest episode
and posting another gave the new one the deleted one's id: a verifier vouching for "episode 695" by id could vouch
for a writer's run that took that id a moment before (a red team's finding). With AUTOINCREMENT, SQLite keeps the
largest id it ever gave (sqlite_sequence) and never gives it again. The table is rebuilt once with its rows and ids
(alembic's batch mode). PostgreSQL's identity column never reuses ids: left as it is.

Revision ID: 0009
Revises: 0008
"""

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        with op.batch_alter_table("episodes", recreate="always", table_kwargs={"sqlite_autoincrement": True}):
            pass


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        with op.batch_alter_table("episodes", recreate="always", table_kwargs={"sqlite_autoincrement": False}):
            pass
