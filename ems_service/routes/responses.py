"""A route's response model written as JSON as it stands.

FastAPI validates what a route returns against its `response_model` before writing it, and for a sync route it runs
that validation in the thread pool: a second thread hand-off per request (the first runs the route), for a model the
route has just built from the same class. A hot route returns `ModelJSON(model)` instead, keeping `response_model`
for the OpenAPI schema; the JSON is pydantic's own dump of the model (what FastAPI would have written), and the
model stays on the response for the MCP tools, which call the route functions in-process.
"""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import Response
from pydantic import BaseModel


class ModelJSON(Response):
    """`model` as an application/json response (`status_code`, extra `headers`), not validated again."""

    media_type = "application/json"

    def __init__(self, model: BaseModel, *, status_code: int = 200, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(model.model_dump_json(), status_code=status_code, headers=headers)
        self.model = model  # what a caller of the route function in-process (the MCP tools) reads
