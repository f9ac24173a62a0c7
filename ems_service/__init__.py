"""ems_service: the WebCoach EMS service (FastAPI app, repositories, vector backends, embedder, CLI)."""

from ems_service.app import create_app
from ems_service.config import Settings
from ems_service.embedded import EmbeddedServer
from ems_service.embeddings import Embedder
from ems_service.runtime import Runtime

__all__ = ["EmbeddedServer", "Embedder", "Runtime", "Settings", "create_app"]
