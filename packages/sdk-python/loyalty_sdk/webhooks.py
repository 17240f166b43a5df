"""Webhook signature verification, exactly as the service signs
(src/modules/webhooks/delivery.ts; the TypeScript SDK's verifyWebhook):
`X-Service-Signature: t=<unix>,v1=<hex>[,v1=<hex>...]` where hex is HMAC-SHA256,
keyed with the whole secret string (`whsec_...`), over `<t>.<raw body>`.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from typing import Any, Mapping, Optional, Union

from ._errors import LoyaltyWebhookSignatureError

DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300
SIGNATURE_HEADER = 'X-Service-Signature'
MAX_SIGNATURE_HEADER_LENGTH = 1024
_HEX64 = re.compile(r'^[0-9a-fA-F]{64}$')
_TIMESTAMP = re.compile(r'^\d{1,12}$')


def _header(headers: Any, name: str) -> Optional[str]:
    """A header from a dict (any case), an http.client.HTTPMessage / email.message.Message, or anything with get()."""
    if headers is None:
        return None
    if isinstance(headers, Mapping):
        for key, value in headers.items():
            if isinstance(key, str) and key.lower() == name.lower():
                if isinstance(value, (list, tuple)):
                    return value[0] if value else None
                return value
        return None
    getter = getattr(headers, 'get', None)
    return getter(name) if callable(getter) else None


def parse_signature_header(header: Optional[str]):
    """(timestamp_text, [signatures]) from `t=<unix>,v1=<hex>`; raises LoyaltyWebhookSignatureError."""
    if header is None or header.strip() == '':
        raise LoyaltyWebhookSignatureError('missing_signature', 'the X-Service-Signature header is missing')
    if len(header) > MAX_SIGNATURE_HEADER_LENGTH:
        raise LoyaltyWebhookSignatureError('malformed_signature', 'the X-Service-Signature header is too long')
    timestamp_text = None
    signatures = []
    for part in header.split(','):
        if '=' not in part:
            continue
        key, value = part.split('=', 1)
        key, value = key.strip(), value.strip()
        if key == 't':
            timestamp_text = value
        elif key == 'v1' and _HEX64.match(value):
            signatures.append(value.lower())
    if timestamp_text is None or not _TIMESTAMP.match(timestamp_text):
        raise LoyaltyWebhookSignatureError('malformed_signature', 'the X-Service-Signature header has no valid t=<unix timestamp>')
    if not signatures:
        raise LoyaltyWebhookSignatureError('malformed_signature', 'the X-Service-Signature header has no v1=<64 hex digits> signature')
    return timestamp_text, signatures


def sign_webhook(raw_body: Union[bytes, str], secret: str, timestamp: Optional[int] = None) -> str:
    """The X-Service-Signature value the service would send (tests, local tools)."""
    t = str(int(time.time()) if timestamp is None else int(timestamp))
    body = raw_body.encode('utf-8') if isinstance(raw_body, str) else bytes(raw_body)
    digest = hmac.new(secret.encode('utf-8'), t.encode('ascii') + b'.' + body, hashlib.sha256).hexdigest()
    return f't={t},v1={digest}'


def verify_webhook(raw_body: Union[bytes, str], headers: Any, secret: str,
                   tolerance_seconds: float = DEFAULT_WEBHOOK_TOLERANCE_SECONDS, *, now: Optional[float] = None) -> Any:
    """Verifies a delivery and returns its parsed envelope (a dict).

    Pass the body exactly as received (bytes, or the decoded text), before any
    JSON parsing. Raises LoyaltyWebhookSignatureError with `reason`
    missing_signature, malformed_signature, timestamp_out_of_tolerance or
    signature_mismatch. The comparison is constant-time (hmac.compare_digest).
    """
    if not isinstance(secret, str) or secret == '':
        raise TypeError("verify_webhook: secret must be the destination's signing secret")
    if tolerance_seconds is None or tolerance_seconds < 0:
        raise ValueError('tolerance_seconds must be a number of 0 or more')
    timestamp_text, signatures = parse_signature_header(_header(headers, SIGNATURE_HEADER))
    now_seconds = int(time.time()) if now is None else int(now)
    distance = abs(now_seconds - int(timestamp_text))
    if distance > tolerance_seconds:
        raise LoyaltyWebhookSignatureError(
            'timestamp_out_of_tolerance',
            f"the signature's timestamp {timestamp_text} is {distance} s away from now; at most {tolerance_seconds} s is accepted")
    body = raw_body.encode('utf-8') if isinstance(raw_body, str) else bytes(raw_body)
    expected = hmac.new(secret.encode('utf-8'), timestamp_text.encode('ascii') + b'.' + body, hashlib.sha256).hexdigest()
    matched = False
    for signature in signatures:
        matched = hmac.compare_digest(expected, signature) or matched
    if not matched:
        raise LoyaltyWebhookSignatureError('signature_mismatch', 'no signature in X-Service-Signature matches the body and the secret')
    return json.loads(body.decode('utf-8'))
