"""derived task ids for episodes stored without one (leave-task-out works for every stored run)

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

from condenser import derive_task_id

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_BATCH = 1000


def upgrade() -> None:
    conn = op.get_bind()
    episodes = sa.table("episodes", sa.column("id", sa.BigInteger), sa.column("task", sa.Text),
                        sa.column("task_id", sa.String))
    last = 0
    while True:  # in id order, a batch at a time: a large table is never held in memory
        rows = conn.execute(sa.select(episodes.c.id, episodes.c.task).where(
            episodes.c.task_id.is_(None), episodes.c.id > last).order_by(episodes.c.id).limit(_BATCH)).all()
        if not rows:
            break
        conn.execute(episodes.update().where(episodes.c.id == sa.bindparam("row_id")).values(
            task_id=sa.bindparam("derived")), [{"row_id": r.id, "derived": derive_task_id(r.task)} for r in rows])
        last = rows[-1].id


def downgrade() -> None:
    pass  # a derived id is a valid task id; nothing to undo
