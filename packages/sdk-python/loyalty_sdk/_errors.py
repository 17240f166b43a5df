"""Errors. Every failure the SDK reports is a LoyaltyError (the same families as the TypeScript SDK).

`status` is the HTTP status, or 0 when no response was received (the SDK refused
the arguments, or the network failed). `code`, `detail` and `error_version` come
from the service's error envelope; `body` is the whole parsed body. `errors`
lists each field the service found at fault: dicts with `in` (body, query,
params, headers), `path` (a JSON Pointer, `/effects/0/points`), `code`,
`message` and, for enums, `allowed`. `request_id` is the answer's X-Request-Id.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

FIELD_ERROR_PARTS = ('body', 'query', 'params', 'headers')


class LoyaltyError(Exception):
    kind = 'http'

    def __init__(self, status: int, code: str, detail: str, *, errors: Optional[List[Dict[str, Any]]] = None,
                 error_version: Optional[int] = None, body: Any = None, request_id: Optional[str] = None,
                 method: Optional[str] = None, url: Optional[str] = None) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.errors: List[Dict[str, Any]] = list(errors or [])
        self.error_version = error_version
        self.body = body
        self.request_id = request_id
        self.method = method
        self.url = url

    def __str__(self) -> str:
        where = f' ({self.method} {self.url})' if self.method else ''
        return f'{self.status} {self.code}: {self.detail}{where}'


class LoyaltyBadRequestError(LoyaltyError):
    """400: the service refused the parameters or the body (`errors` names the fields)."""
    kind = 'bad_request'


class LoyaltyAuthenticationError(LoyaltyError):
    """401: no credential, or a wrong or expired one."""
    kind = 'unauthenticated'


class LoyaltyPermissionError(LoyaltyError):
    """403: the credential lacks the scope."""
    kind = 'forbidden'


class LoyaltyNotFoundError(LoyaltyError):
    kind = 'not_found'


class LoyaltyConflictError(LoyaltyError):
    kind = 'conflict'


class LoyaltyUnprocessableError(LoyaltyError):
    kind = 'unprocessable'


class LoyaltyInsufficientPointsError(LoyaltyUnprocessableError):
    """422 insufficient_points: nothing left the balance; `available` and `required` say why."""

    def __init__(self, *args: Any, available: int = 0, required: int = 0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.available = available
        self.required = required


class LoyaltyRateLimitError(LoyaltyError):
    """429 after the retries (or a Retry-After longer than the client may wait)."""
    kind = 'rate_limited'

    def __init__(self, *args: Any, retry_after_seconds: Optional[float] = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.retry_after_seconds = retry_after_seconds


class LoyaltyServerError(LoyaltyError):
    kind = 'server'


class LoyaltyHttpError(LoyaltyError):
    kind = 'http'


class LoyaltyConnectionError(LoyaltyError):
    """No response: connection refused or reset, DNS failure, or a timeout. status 0, code NETWORK_ERROR or TIMEOUT."""
    kind = 'network'


class LoyaltyValidationError(LoyaltyError):
    """The SDK refused the arguments before sending anything. status 0."""
    kind = 'validation'

    def __init__(self, field: str, detail: str) -> None:
        super().__init__(0, 'SDK_INVALID_ARGUMENT', f'{field}: {detail}')
        self.field = field


class LoyaltyWebhookSignatureError(LoyaltyError):
    """verify_webhook refused a delivery; `reason` is missing_signature, malformed_signature,
    timestamp_out_of_tolerance or signature_mismatch."""
    kind = 'webhook_signature'

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(0, f'WEBHOOK_{reason.upper()}', detail)
        self.reason = reason


def field_errors_of(value: Any) -> List[Dict[str, Any]]:
    """The well-formed entries of an error body's `errors`; anything else is left out."""
    if not isinstance(value, list):
        return []
    out = []
    for entry in value:
        if not isinstance(entry, dict):
            continue
        if entry.get('in') not in FIELD_ERROR_PARTS or not all(isinstance(entry.get(k), str) for k in ('path', 'code', 'message')):
            continue
        item = {'in': entry['in'], 'path': entry['path'], 'code': entry['code'], 'message': entry['message']}
        if isinstance(entry.get('allowed'), list):
            item['allowed'] = entry['allowed']
        if isinstance(entry.get('limit'), (int, float)) and not isinstance(entry.get('limit'), bool):
            item['limit'] = entry['limit']
        out.append(item)
    return out


def error_from_response(status: int, body: Any, *, request_id: Optional[str], method: str, url: str,
                        retry_after_seconds: Optional[float]) -> LoyaltyError:
    envelope = body if isinstance(body, dict) else {}
    code = envelope.get('code') if isinstance(envelope.get('code'), str) else f'HTTP_{status}'
    if isinstance(envelope.get('detail'), str):
        detail = envelope['detail']
    elif isinstance(body, str) and body:
        detail = body[:500]
    else:
        detail = f'HTTP {status}'
    version = envelope.get('error_version')
    common = dict(errors=field_errors_of(envelope.get('errors')), error_version=version if isinstance(version, int) else None,
                  body=body, request_id=request_id, method=method, url=url)
    if status == 400:
        return LoyaltyBadRequestError(status, code, detail, **common)
    if status == 401:
        return LoyaltyAuthenticationError(status, code, detail, **common)
    if status == 403:
        return LoyaltyPermissionError(status, code, detail, **common)
    if status == 404:
        return LoyaltyNotFoundError(status, code, detail, **common)
    if status == 409:
        return LoyaltyConflictError(status, code, detail, **common)
    if status == 422:
        if envelope.get('error') == 'insufficient_points' and isinstance(envelope.get('available'), int) and isinstance(envelope.get('required'), int):
            return LoyaltyInsufficientPointsError(status, code, detail, available=envelope['available'], required=envelope['required'], **common)
        return LoyaltyUnprocessableError(status, code, detail, **common)
    if status == 429:
        return LoyaltyRateLimitError(status, code, detail, retry_after_seconds=retry_after_seconds, **common)
    if status >= 500:
        return LoyaltyServerError(status, code, detail, **common)
    return LoyaltyHttpError(status, code, detail, **common)
