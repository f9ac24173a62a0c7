"""The WebCoach EMS client SDK: add the coach to an agent in a few lines.

    from webcoach import Client, append_guidance

    with Client("http://127.0.0.1:8080") as ems:
        session = ems.start_session(task="Book a table for two", start_url="https://www.opentable.com")
        guidance = session.add_steps([{"action": "click('Reserve')", "url": "https://www.opentable.com/"}])
        messages = append_guidance(messages, guidance)  # a system message, only when the coach intervenes
        session.finish(success=True)

Models are the service's own (condenser.Trajectory / Step / Outcome, coach.Guidance); no service code is
imported. `webcoach.browser_use` hooks the coach into a browser-use Agent.
"""

from coach.models import Guidance
from condenser.models import Outcome, Step, Trajectory
from webcoach.client import ApiError, AsyncClient, AsyncSession, Client, Session
from webcoach.data import read_jsonl
from webcoach.messages import append_guidance
from webcoach.tracecontext import traceparent

__all__ = ["ApiError", "AsyncClient", "AsyncSession", "Client", "Guidance", "Outcome", "Session", "Step",
           "Trajectory", "append_guidance", "read_jsonl", "traceparent"]
