"""SQLAlchemy table models (the schema itself is created only by the Alembic migrations)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
    true,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# SQLite only autoincrements an INTEGER PRIMARY KEY; PostgreSQL gets a BIGINT identity.
BigId = BigInteger().with_variant(Integer, "sqlite")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class EpisodeRecord(Base):
    """One condensed episode: one row, one vector. `id` is also the FAISS id."""

    __tablename__ = "episodes"
    __table_args__ = (
        UniqueConstraint("namespace", "trajectory_hash", name="uq_episodes_namespace_hash"),
        Index("ix_episodes_namespace_id", "namespace", "id"),
        Index("ix_episodes_namespace_domain", "namespace", "domain"),
        {"sqlite_autoincrement": True},  # an id is never given again (migration 0009): a vouch by id is for one run
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    namespace: Mapped[str] = mapped_column(String(128))
    trajectory_hash: Mapped[str] = mapped_column(String(64))
    task: Mapped[str] = mapped_column(Text)
    domain: Mapped[str | None] = mapped_column(String(255))
    url_pattern: Mapped[str | None] = mapped_column(Text)
    summary: Mapped[str] = mapped_column(Text)
    embed_text: Mapped[str] = mapped_column(Text)
    success: Mapped[bool | None] = mapped_column(Boolean)
    label_source: Mapped[str] = mapped_column(String(16))
    status: Mapped[str | None] = mapped_column(String(64))
    trust: Mapped[float] = mapped_column(Float)
    error_patterns: Mapped[list] = mapped_column(JSON)
    failure_categories: Mapped[list] = mapped_column(JSON)
    n_steps: Mapped[int] = mapped_column(Integer)
    actions: Mapped[list] = mapped_column(JSON)
    steps_brief: Mapped[list] = mapped_column(JSON, server_default="[]")
    intent: Mapped[str] = mapped_column(String(16), server_default="other")
    verified: Mapped[bool] = mapped_column(Boolean, server_default=false())
    agent: Mapped[str | None] = mapped_column(String(255))
    model: Mapped[str | None] = mapped_column(String(255))
    task_id: Mapped[str | None] = mapped_column(String(255))
    source: Mapped[str] = mapped_column(String(16))
    tags: Mapped[dict] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_retrieved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    retrieval_count: Mapped[int] = mapped_column(Integer, default=0)
    seen_count: Mapped[int] = mapped_column(Integer, default=1)
    embedding: Mapped[bytes] = mapped_column(LargeBinary)
    embedding_model: Mapped[str] = mapped_column(String(255))
    embedding_dim: Mapped[int] = mapped_column(Integer)
    trajectory: Mapped[bytes] = mapped_column(LargeBinary)


class DeletionRecord(Base):
    """Change log of deleted episodes, so an index snapshot can catch up on deletions."""

    __tablename__ = "episode_deletions"
    __table_args__ = (Index("ix_episode_deletions_namespace_seq", "namespace", "seq"),)

    seq: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    namespace: Mapped[str] = mapped_column(String(128))
    episode_id: Mapped[int] = mapped_column(BigInteger)
    reason: Mapped[str] = mapped_column(String(32))
    deleted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class EventRecord(Base):
    """A memory event (eviction, dedup, ...), readable by operators."""

    __tablename__ = "events"
    __table_args__ = (Index("ix_events_namespace_type_id", "namespace", "type", "id"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    namespace: Mapped[str] = mapped_column(String(128))
    type: Mapped[str] = mapped_column(String(64))
    data: Mapped[dict] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class SessionRecord(Base):
    """A live run: its partial trajectory, the advice given so far (for the cooldown) and the last guidance."""

    __tablename__ = "sessions"
    __table_args__ = (Index("ix_sessions_namespace_updated_at", "namespace", "updated_at"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    namespace: Mapped[str] = mapped_column(String(128))
    trajectory: Mapped[dict] = mapped_column(JSON)
    n_steps: Mapped[int] = mapped_column(Integer, server_default="0")
    status: Mapped[str] = mapped_column(String(16), server_default="open")
    advice_log: Mapped[list] = mapped_column(JSON)
    last_guidance: Mapped[dict | None] = mapped_column(JSON)
    episode_id: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class RiskModelRecord(Base):
    """The risk model fitted for a namespace (weights, standardization, held-out metrics)."""

    __tablename__ = "risk_models"

    namespace: Mapped[str] = mapped_column(String(128), primary_key=True)
    model: Mapped[dict] = mapped_column(JSON)
    metrics: Mapped[dict] = mapped_column(JSON)
    n_episodes: Mapped[int] = mapped_column(Integer)
    fitted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class LessonRecord(Base):
    """A short lesson: seed, or learned from failure -> recovery patterns at ingest."""

    __tablename__ = "lessons"
    __table_args__ = (Index("ix_lessons_namespace_command", "namespace", "failed_command"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    namespace: Mapped[str] = mapped_column(String(128))
    lesson: Mapped[str] = mapped_column(Text)
    category: Mapped[str] = mapped_column(String(32))
    failed_command: Mapped[str | None] = mapped_column(String(64))
    error_pattern: Mapped[str | None] = mapped_column(Text)
    domain: Mapped[str | None] = mapped_column(String(255))
    use_count: Mapped[int] = mapped_column(Integer, server_default="1")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_used: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    source: Mapped[str] = mapped_column(String(16))
    triggered_domains: Mapped[list] = mapped_column(JSON)
    recovery: Mapped[list] = mapped_column(JSON)
    generic: Mapped[bool] = mapped_column(Boolean, server_default=false())
    # a hand-added lesson by a writer waits for a verifier or admin before it may enter tier 1
    approved: Mapped[bool] = mapped_column(Boolean, server_default=true())


class FactRecord(Base):
    """Facts about a (domain, intent): selectors, interaction hints, blockers, anti-patterns."""

    __tablename__ = "experience_facts"
    __table_args__ = (UniqueConstraint("namespace", "domain", "intent", name="uq_experience_facts_key"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    namespace: Mapped[str] = mapped_column(String(128))
    domain: Mapped[str] = mapped_column(String(255))
    intent: Mapped[str] = mapped_column(String(16))
    facts: Mapped[dict] = mapped_column(JSON)
    verified: Mapped[bool] = mapped_column(Boolean, server_default=false())
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ApiKeyRecord(Base):
    """An API key: only its sha256 is stored; it grants one namespace and one role (admin, writer, verifier)."""

    __tablename__ = "api_keys"
    __table_args__ = (UniqueConstraint("key_hash", name="uq_api_keys_key_hash"),
                      CheckConstraint("role IN ('admin', 'writer', 'verifier')", name="role"))

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    namespace: Mapped[str] = mapped_column(String(128))
    key_hash: Mapped[str] = mapped_column(String(64))
    prefix: Mapped[str] = mapped_column(String(16))
    role: Mapped[str] = mapped_column(String(16), server_default="writer")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
