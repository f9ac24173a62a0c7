"""Alembic migrations: the only way the schema is created or changed (SQLite and PostgreSQL)."""
