"""Small types shared by the generated resources and the client."""
from __future__ import annotations

from typing import NamedTuple


class Session(NamedTuple):
    """A participant session (from `client.access.create_session`), for the participant operations."""
    session_id: str
    engagement_id: str
