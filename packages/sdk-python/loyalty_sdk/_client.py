"""The client: `Client(base_url, api_key=...)`, one attribute per resource
(`client.points.grant(body=...)`), the same policy as the TypeScript SDK
(packages/sdk/src/client.ts): the credential each operation needs, generated
idempotency keys that retries reuse, and bounded retries.
"""
from __future__ import annotations

import email.utils
import http.client
import json
import random
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
import warnings
from typing import Any, Callable, Dict, Mapping, NamedTuple, Optional

from ._errors import LoyaltyConnectionError, LoyaltyValidationError, error_from_response
from ._generated import API_VERSION, OPERATIONS, GeneratedResources
from ._types import Session

DEFAULT_MAX_RETRIES = 2
MAX_RETRIES_LIMIT = 10
DEFAULT_MAX_RETRY_AFTER_SECONDS = 60.0
DEFAULT_TIMEOUT_SECONDS = 30.0
BACKOFF_BASE_SECONDS = 0.5
BACKOFF_CAP_SECONDS = 8.0
IDEMPOTENT_METHODS = frozenset(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'])
USER_AGENT = 'loyalty-sdk-python/0.1.0'


class RetryInfo(NamedTuple):
    operation: str
    retry: int          # 1 for the first retry
    delay_seconds: float
    status: int         # the HTTP status that caused it, 0 for a network failure
    reason: str         # rate_limited, unavailable or network


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Retry-After in seconds, from a number of seconds or an HTTP date; None when missing or unreadable."""
    if value is None or value.strip() == '':
        return None
    text = value.strip()
    if text.isdigit():
        return float(int(text))
    try:
        at = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if at is None:
        return None
    return float(max(0, int(-(-(at.timestamp() - (time.time() if now is None else now)) // 1))))


def backoff_seconds(retry: int) -> float:
    """0.5 s, 1 s, 2 s, ... capped at 8 s, with half of it jittered."""
    ceiling = min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2 ** (retry - 1))
    return ceiling / 2 + random.random() * ceiling / 2


def _header_key(headers: Mapping[str, str], name: str) -> Optional[str]:
    for key in headers:
        if key.lower() == name:
            return key
    return None


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(',', ':'))
    return str(value)


class _Prepared(NamedTuple):
    method: str
    url: str
    headers: Dict[str, str]
    body: Optional[bytes]
    idempotent: bool


class Client(GeneratedResources):
    """The service's typed client.

    Client(base_url, api_key=None, bearer_token=None, tenant=None, session=None,
           max_retries=2, timeout=30.0, max_retry_after=60.0, headers=None,
           on_retry=None, generate_idempotency_key=None)

    `api_key` is sent as X-API-Key; `bearer_token` (an API key used as a bearer
    credential) as `Authorization: Bearer ...`, with `tenant` as X-Service-Tenant.
    """

    def __init__(self, base_url: str, *, api_key: Optional[str] = None, bearer_token: Optional[str] = None,
                 tenant: Optional[str] = None, session: Optional[Session] = None, max_retries: int = DEFAULT_MAX_RETRIES,
                 timeout: float = DEFAULT_TIMEOUT_SECONDS, max_retry_after: float = DEFAULT_MAX_RETRY_AFTER_SECONDS,
                 headers: Optional[Mapping[str, str]] = None, on_retry: Optional[Callable[[RetryInfo], None]] = None,
                 generate_idempotency_key: Optional[Callable[[], str]] = None, api_version: Optional[str] = None) -> None:
        if not isinstance(base_url, str) or not base_url:
            raise LoyaltyValidationError('base_url', 'must be a non-empty string')
        parsed = urllib.parse.urlparse(base_url)
        if parsed.scheme not in ('http', 'https') or not parsed.netloc:
            raise LoyaltyValidationError('base_url', f'must be an absolute http(s) URL, got {base_url!r}')
        for name, value in (('api_key', api_key), ('bearer_token', bearer_token)):
            if value is not None and (not isinstance(value, str) or value == ''):
                raise LoyaltyValidationError(name, 'must be a non-empty string')
        if not isinstance(max_retries, int) or isinstance(max_retries, bool) or max_retries < 0:
            raise LoyaltyValidationError('max_retries', 'must be a whole number of 0 or more')
        if api_version is not None and (not isinstance(api_version, str) or not re.match(r'^\d{4}-\d{2}-\d{2}$', api_version)):
            raise LoyaltyValidationError('api_version', f'must be a date (YYYY-MM-DD) such as {API_VERSION}, got {api_version!r}')
        self.base_url = base_url.rstrip('/')
        # The Loyalty-Version sent with every request (default: the version this SDK was generated against).
        self.api_version = api_version or API_VERSION
        self.api_key = api_key
        self.bearer_token = bearer_token
        self.tenant = tenant
        self.session = session
        self.max_retries = min(max_retries, MAX_RETRIES_LIMIT)
        self.timeout = timeout
        self.max_retry_after = max_retry_after
        self.headers = dict(headers or {})
        self.on_retry = on_retry
        self.generate_idempotency_key = generate_idempotency_key or (lambda: str(uuid.uuid4()))
        self._sleep = time.sleep
        self._install_resources()

    def with_session(self, session: Session) -> 'Client':
        """A client with the same settings acting for a participant session."""
        return Client(self.base_url, api_key=self.api_key, bearer_token=self.bearer_token, tenant=self.tenant, session=session,
                      max_retries=self.max_retries, timeout=self.timeout, max_retry_after=self.max_retry_after,
                      headers=self.headers, on_retry=self.on_retry, generate_idempotency_key=self.generate_idempotency_key,
                      api_version=self.api_version)

    # ---- one call -----------------------------------------------------
    def call(self, operation_id: str, *, path: Optional[Mapping[str, Any]] = None, query: Optional[Mapping[str, Any]] = None,
             body: Any = None, idempotency_key: Optional[str] = None, headers: Optional[Mapping[str, str]] = None,
             session: Optional[Session] = None) -> Any:
        """Calls an operation by its operationId; the resource methods are thin wrappers of this."""
        spec = OPERATIONS.get(operation_id)
        if spec is None:
            raise LoyaltyValidationError('operation', f'unknown operation {operation_id!r}')
        prepared = self._prepare(operation_id, spec, path or {}, dict(query or {}), body, idempotency_key, headers or {}, session)
        return self._send(operation_id, prepared)

    def _new_key(self) -> str:
        return self.generate_idempotency_key()

    def _prepare(self, name: str, spec: Mapping[str, str], path_params: Mapping[str, Any], query: Dict[str, Any], body: Any,
                 idempotency_key: Optional[str], extra_headers: Mapping[str, str], session: Optional[Session]) -> _Prepared:
        method, auth, placement = spec['method'], spec['auth'], spec.get('idempotency')
        path = spec['path']
        for key, value in path_params.items():
            if not isinstance(value, str) or value == '':
                raise LoyaltyValidationError(f'path.{key}', 'must be a non-empty string')
            path = path.replace('{' + key + '}', urllib.parse.quote(value, safe=''))
        if '{' in path:
            raise LoyaltyValidationError('path', f'{name} needs {path}')
        headers: Dict[str, str] = {'Accept': 'application/json', 'User-Agent': USER_AGENT, 'Loyalty-Version': self.api_version, **self.headers, **extra_headers}
        has_body = method not in ('GET', 'DELETE')
        if body is not None and not isinstance(body, (dict, list)):
            raise LoyaltyValidationError('body', 'must be a dict')
        if isinstance(body, dict):
            body = dict(body)

        if auth == 'key':
            if self.api_key:
                headers['X-API-Key'] = self.api_key
            elif self.bearer_token:
                headers['Authorization'] = f'Bearer {self.bearer_token}'
            else:
                raise LoyaltyValidationError('api_key', f'{name} is a server operation: create the client with api_key or bearer_token')
            if self.tenant:
                headers['X-Service-Tenant'] = self.tenant
        elif auth == 'session':
            given = body if isinstance(body, dict) else query
            explicit = None
            if isinstance(given.get('session_id'), str) and isinstance(given.get('engagement_id'), str):
                explicit = Session(given['session_id'], given['engagement_id'])
            chosen = session or explicit or self.session
            if chosen is None:
                raise LoyaltyValidationError('session', f'{name} is a participant operation: pass session=Session(session_id, engagement_id) to the client or the call')
            if has_body:
                body = {**(body or {}), 'session_id': chosen.session_id, 'engagement_id': chosen.engagement_id}
            else:
                query['session_id'] = chosen.session_id
                query['engagement_id'] = chosen.engagement_id

        idempotent = method in IDEMPOTENT_METHODS
        header_key = _header_key(headers, 'idempotency-key')
        if placement in ('body', 'events') and not isinstance(body, dict):
            raise LoyaltyValidationError('body', f'{name} needs a body (a dict)')
        if placement == 'body':
            # The caller's key (body, idempotency_key=, or an Idempotency-Key header) becomes the body's key.
            if body.get('idempotency_key') is None:
                body['idempotency_key'] = idempotency_key or (headers[header_key] if header_key else None) or self._new_key()
            idempotent = True
        elif placement == 'events':
            events = body.get('events')
            if not isinstance(events, list):
                raise LoyaltyValidationError('body.events', 'must be a list')
            body['events'] = [e if not isinstance(e, dict) or e.get('idempotency_key') is not None else {**e, 'idempotency_key': self._new_key()} for e in events]
            idempotent = True
        elif placement == 'attempt':
            idempotent = isinstance(body, dict) and isinstance(body.get('attempt_id'), str)
        elif method == 'POST' and auth != 'public':
            # The service keeps and replays the answer of every credentialed POST under its Idempotency-Key.
            if header_key is None:
                headers['Idempotency-Key'] = idempotency_key or self._new_key()
            idempotent = True

        url = self.base_url + path
        pairs = []
        for key, value in query.items():
            if value is None:
                continue
            if isinstance(value, (list, tuple)):
                pairs += [(key, _query_value(item)) for item in value]
            else:
                pairs.append((key, _query_value(value)))
        if pairs:
            url += '?' + urllib.parse.urlencode(pairs)
        data = None
        if body is not None and has_body:
            data = json.dumps(body, separators=(',', ':'), ensure_ascii=False).encode('utf-8')
            headers['Content-Type'] = 'application/json'
        if spec.get('deprecated'):
            warnings.warn(f'[loyalty_sdk] {name}: {spec["deprecated"]}', DeprecationWarning, stacklevel=4)
        return _Prepared(method, url, headers, data, idempotent)

    def _send(self, name: str, request: _Prepared) -> Any:
        retry = 0
        while True:
            req = urllib.request.Request(request.url, data=request.body, headers=request.headers, method=request.method)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as response:
                    return _read_body(response.status, response.headers, response.read())
            except urllib.error.HTTPError as answer:
                try:
                    raw = answer.read()
                except (OSError, ValueError):
                    raw = b''
                finally:
                    answer.close()
                status = answer.code
                body = _read_body(status, answer.headers, raw)
                retry_after = parse_retry_after(answer.headers.get('Retry-After') if answer.headers else None)
                error = error_from_response(status, body, request_id=answer.headers.get('X-Request-Id') if answer.headers else None,
                                            method=request.method, url=request.url, retry_after_seconds=retry_after)
                if retry >= self.max_retries:
                    raise error
                # A 429 and a 503 SERVICE_OVERLOADED were refused before any work, so any request may be
                # sent again; another 503 may have been cut off mid-way, so only idempotent ones are.
                refused_before_work = status == 429 or (status == 503 and isinstance(body, dict) and body.get('code') == 'SERVICE_OVERLOADED')
                if refused_before_work or (status == 503 and request.idempotent):
                    if retry_after is not None and retry_after > self.max_retry_after:
                        raise error
                    retry += 1
                    self._wait(name, retry, retry_after if retry_after is not None else backoff_seconds(retry), status,
                               'rate_limited' if status == 429 else 'unavailable')
                    continue
                raise error
            except (urllib.error.URLError, OSError, http.client.HTTPException) as cause:
                reason = getattr(cause, 'reason', cause)
                timed_out = isinstance(reason, (socket.timeout, TimeoutError)) or isinstance(cause, (socket.timeout, TimeoutError))
                error = LoyaltyConnectionError(
                    0, 'TIMEOUT' if timed_out else 'NETWORK_ERROR',
                    f'{request.method} {request.url} took longer than {self.timeout} s' if timed_out
                    else f'{request.method} {request.url} failed: {reason}',
                    method=request.method, url=request.url)
                if not request.idempotent or retry >= self.max_retries:
                    raise error from cause
                retry += 1
                self._wait(name, retry, backoff_seconds(retry), 0, 'network')

    def _wait(self, operation: str, retry: int, delay: float, status: int, reason: str) -> None:
        if self.on_retry is not None:
            self.on_retry(RetryInfo(operation, retry, delay, status, reason))
        self._sleep(delay)


def _read_body(status: int, headers: Any, raw: bytes) -> Any:
    if status == 204 or not raw:
        return None
    text = raw.decode('utf-8', errors='replace')
    content_type = (headers.get('Content-Type') if headers is not None else '') or ''
    if 'json' in content_type:
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text
