"""`Store`: the name ems_service.index (and benchmarks/data.py) give the database they read, kept so those modules
(owned by another session) need no edit. It is the index feed; new code imports ems_service.repositories."""

from ems_service.repositories.index_feed import IndexFeed as Store

__all__ = ["Store"]
