"""Python SDK of the engagement and loyalty service (standard library only).

    from loyalty_sdk import Client, LoyaltyError, verify_webhook
    client = Client('https://loyalty.example.com', api_key='lk_test_...')
    client.points.grant(body={'participant_id': 'p-123', 'amount': 50, 'reason': 'welcome'})
"""
from ._client import (DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_SECONDS, MAX_RETRIES_LIMIT, Client, RetryInfo, Session,
                      parse_retry_after)
from ._errors import (LoyaltyAuthenticationError, LoyaltyBadRequestError, LoyaltyConflictError, LoyaltyConnectionError,
                      LoyaltyError, LoyaltyHttpError, LoyaltyInsufficientPointsError, LoyaltyNotFoundError,
                      LoyaltyPermissionError, LoyaltyRateLimitError, LoyaltyServerError, LoyaltyUnprocessableError,
                      LoyaltyValidationError, LoyaltyWebhookSignatureError)
from ._generated import API_VERSION, OPENAPI_VERSION, OPERATIONS
from .webhooks import DEFAULT_WEBHOOK_TOLERANCE_SECONDS, sign_webhook, verify_webhook

__version__ = '0.1.0'

__all__ = [
    'Client', 'Session', 'RetryInfo', 'parse_retry_after', 'DEFAULT_MAX_RETRIES', 'DEFAULT_TIMEOUT_SECONDS', 'MAX_RETRIES_LIMIT',
    'LoyaltyError', 'LoyaltyBadRequestError', 'LoyaltyAuthenticationError', 'LoyaltyPermissionError', 'LoyaltyNotFoundError',
    'LoyaltyConflictError', 'LoyaltyUnprocessableError', 'LoyaltyInsufficientPointsError', 'LoyaltyRateLimitError',
    'LoyaltyServerError', 'LoyaltyHttpError', 'LoyaltyConnectionError', 'LoyaltyValidationError', 'LoyaltyWebhookSignatureError',
    'verify_webhook', 'sign_webhook', 'DEFAULT_WEBHOOK_TOLERANCE_SECONDS', 'OPERATIONS', 'OPENAPI_VERSION', 'API_VERSION', '__version__',
]
