"""The memory dashboard at /ui: small server-rendered pages (Jinja2, one stylesheet, no script) over the same
service methods as the REST routes, behind an API-key login."""

from __future__ import annotations

from fastapi import FastAPI

from ems_service.config import Settings
from ems_service.ui.app import DashboardGate, build_dashboard


def mount_ui(app: FastAPI, settings: Settings) -> FastAPI:
    """Serve the dashboard at /ui in front of `app` (call after the API's own middleware is added); returns the
    dashboard app, whose `state.runtime` the composition root sets beside the API's."""
    dashboard = build_dashboard(limits=settings.limits)
    app.add_middleware(DashboardGate, dashboard=dashboard)
    return dashboard


__all__ = ["mount_ui"]
