"""Small types shared by the generated resources and the client."""
from __future__ import annotations

from typing import Any, Mapping, NamedTuple, Optional, Protocol


class Session(NamedTuple):
    """A participant session (from `client.access.create_session`), for the participant operations."""
    session_id: str
    engagement_id: str


class Caller(Protocol):
    """What a generated resource needs of its client: `Client.call`. Named here so that the generated
    resources do not import the client that inherits from them."""

    def call(self, operation_id: str, *, path: Optional[Mapping[str, Any]] = None, query: Optional[Mapping[str, Any]] = None,
             body: Any = None, idempotency_key: Optional[str] = None, headers: Optional[Mapping[str, str]] = None,
             session: Optional[Session] = None) -> Any: ...
