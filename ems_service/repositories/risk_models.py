"""Risk models: the model fitted per namespace (weights, standardization, held-out metrics)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ems_service.repositories.database import Database, utcnow
from ems_service.tables import RiskModelRecord


@dataclass(frozen=True)
class StoredRiskModel:
    namespace: str
    model: dict
    metrics: dict
    n_episodes: int
    fitted_at: datetime


class RiskModelRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    def get(self, namespace: str) -> StoredRiskModel | None:
        with self.db.session() as s:
            row = s.get(RiskModelRecord, namespace)
            return None if row is None else StoredRiskModel(row.namespace, row.model, row.metrics, row.n_episodes,
                                                            row.fitted_at)

    def save(self, namespace: str, *, model: dict, metrics: dict, n_episodes: int) -> None:
        """Store (or replace) the namespace's fitted model."""
        with self.db.session() as s:
            row = s.get(RiskModelRecord, namespace)
            if row is None:
                row = RiskModelRecord(namespace=namespace)
                s.add(row)
            row.model, row.metrics = model, metrics
            row.n_episodes, row.fitted_at = n_episodes, utcnow()
