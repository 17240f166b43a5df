"""The request policy against a local stub server: credentials, idempotency keys, retries
(429 and 503 with Retry-After or backoff, network failures), errors."""
from __future__ import annotations

import socket
import time
import unittest

import support
from loyalty_sdk import (Client, Session, LoyaltyAuthenticationError, LoyaltyBadRequestError, LoyaltyConnectionError,
                         LoyaltyInsufficientPointsError, LoyaltyRateLimitError, LoyaltyServerError, LoyaltyValidationError,
                         parse_retry_after)

OK = (200, {}, {'available': 50, 'lifetime': 50, 'delta': 50, 'duplicate': False, 'ledger_entry_id': 'l1', 'livemode': False})
GRANT = {'participant_id': 'p-1', 'amount': 50, 'reason': 'welcome'}
FIELD_ERRORS = {'detail': 'body/amount must be >= 1', 'code': 'VALIDATION_INVALID_REQUEST', 'error_version': 1,
                'errors': [{'in': 'body', 'path': '/amount', 'code': 'minimum', 'message': 'must be at least 1'},
                           {'in': 'body', 'path': '/type', 'code': 'enum', 'message': 'must be one of', 'allowed': ['award', 'bonus']},
                           {'junk': True}]}


def client_for(stub, **options):
    client = Client(stub.url, api_key='lk_test_' + '0' * 32, **options)
    client.delays = []
    client._sleep = client.delays.append  # record the waits instead of sleeping
    return client


class RetryPolicyTest(unittest.TestCase):
    def test_a_429_is_retried_after_retry_after_with_the_same_idempotency_key(self):
        with support.StubServer([(429, {'Retry-After': '2'}, {'detail': 'slow down', 'code': 'RATE_LIMITED', 'error_version': 1}), OK]) as stub:
            retries = []
            client = client_for(stub, on_retry=retries.append)
            answer = client.points.grant(body=GRANT)
        self.assertEqual(answer['available'], 50)
        self.assertEqual(len(stub.requests), 2)
        self.assertEqual(client.delays, [2.0])
        self.assertEqual([(r.retry, r.status, r.reason, r.operation) for r in retries], [(1, 429, 'rate_limited', 'grantPoints')])
        keys = [r['body']['idempotency_key'] for r in stub.requests]
        self.assertEqual(keys[0], keys[1])
        self.assertRegex(keys[0], r'^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$')

    def test_a_503_without_retry_after_backs_off_until_max_retries_then_raises(self):
        unavailable = (503, {'X-Request-Id': 'req-9'}, {'detail': 'down', 'code': 'UNAVAILABLE', 'error_version': 1})
        with support.StubServer([unavailable]) as stub:
            client = client_for(stub)
            with self.assertRaises(LoyaltyServerError) as caught:
                client.webhooks.list(query={'limit': 10})
        self.assertEqual(len(stub.requests), 3)  # the first try and max_retries=2
        self.assertEqual(caught.exception.status, 503)
        self.assertEqual(caught.exception.code, 'UNAVAILABLE')
        self.assertEqual(caught.exception.request_id, 'req-9')
        self.assertEqual(len(client.delays), 2)
        self.assertTrue(0.25 <= client.delays[0] <= 0.5 and 0.5 <= client.delays[1] <= 1.0, client.delays)

    def test_a_503_is_not_retried_for_a_request_that_is_not_idempotent(self):
        # PATCH is not idempotent by method and carries no key: sending it again could apply it twice.
        with support.StubServer([(503, {}, {'detail': 'down', 'code': 'UNAVAILABLE', 'error_version': 1}), OK]) as stub:
            client = client_for(stub)
            with self.assertRaises(LoyaltyServerError):
                client.webhooks.update('whk_1', body={'active': False})
        self.assertEqual(len(stub.requests), 1)

    def test_a_503_service_overloaded_is_retried_for_any_request_since_nothing_was_done(self):
        # The process was at its limit of requests in progress and refused this one before any work.
        overloaded = (503, {'Retry-After': '1'}, {'detail': 'at its limit', 'code': 'SERVICE_OVERLOADED', 'error_version': 1})
        with support.StubServer([overloaded, OK]) as stub:
            retries = []
            client = client_for(stub, on_retry=retries.append)
            client.webhooks.update('whk_1', body={'active': False})
        self.assertEqual(len(stub.requests), 2)
        self.assertEqual(client.delays, [1.0])
        self.assertEqual([(r.status, r.reason) for r in retries], [(503, 'unavailable')])

    def test_a_429_is_retried_for_any_request_since_nothing_was_done(self):
        with support.StubServer([(429, {'Retry-After': '0'}, {'detail': 'x', 'code': 'RATE_LIMITED', 'error_version': 1}), OK]) as stub:
            client = client_for(stub)
            client.webhooks.update('whk_1', body={'active': False})
        self.assertEqual(len(stub.requests), 2)

    def test_a_retry_after_longer_than_max_retry_after_is_raised_at_once(self):
        with support.StubServer([(429, {'Retry-After': '120'}, {'detail': 'x', 'code': 'RATE_LIMITED', 'error_version': 1}), OK]) as stub:
            client = client_for(stub)
            with self.assertRaises(LoyaltyRateLimitError) as caught:
                client.points.grant(body=GRANT)
        self.assertEqual(len(stub.requests), 1)
        self.assertEqual(caught.exception.retry_after_seconds, 120.0)

    def test_max_retries_zero_disables_retries(self):
        with support.StubServer([(429, {'Retry-After': '0'}, {'detail': 'x', 'code': 'RATE_LIMITED', 'error_version': 1}), OK]) as stub:
            client = client_for(stub, max_retries=0)
            with self.assertRaises(LoyaltyRateLimitError):
                client.points.grant(body=GRANT)
        self.assertEqual(len(stub.requests), 1)

    def test_a_400_is_not_retried_and_carries_the_field_errors(self):
        with support.StubServer([(400, {'X-Request-Id': 'req-1'}, FIELD_ERRORS), OK]) as stub:
            client = client_for(stub)
            with self.assertRaises(LoyaltyBadRequestError) as caught:
                client.points.grant(body={**GRANT, 'amount': 0})
        error = caught.exception
        self.assertEqual(len(stub.requests), 1)
        self.assertEqual((error.status, error.code, error.detail, error.request_id, error.error_version),
                         (400, 'VALIDATION_INVALID_REQUEST', 'body/amount must be >= 1', 'req-1', 1))
        self.assertEqual(error.errors, [{'in': 'body', 'path': '/amount', 'code': 'minimum', 'message': 'must be at least 1'},
                                        {'in': 'body', 'path': '/type', 'code': 'enum', 'message': 'must be one of', 'allowed': ['award', 'bonus']}])
        self.assertIn('400 VALIDATION_INVALID_REQUEST', str(error))

    def test_insufficient_points_and_authentication_errors_have_their_types(self):
        short = (422, {}, {'detail': 'not enough', 'code': 'INSUFFICIENT_POINTS', 'error_version': 1, 'error': 'insufficient_points', 'available': 3, 'required': 9})
        with support.StubServer([short, (401, {}, b'no key')]) as stub:
            client = client_for(stub)
            with self.assertRaises(LoyaltyInsufficientPointsError) as caught:
                client.points.deduct(body={**GRANT, 'amount': 9})
            self.assertEqual((caught.exception.available, caught.exception.required), (3, 9))
            with self.assertRaises(LoyaltyAuthenticationError) as caught:
                client.points.deduct(body=GRANT)
            self.assertEqual(caught.exception.code, 'HTTP_401')

    def test_a_network_failure_is_retried_for_idempotent_requests_only(self):
        closed = socket.socket()
        closed.bind(('127.0.0.1', 0))
        port = closed.getsockname()[1]
        closed.close()  # nothing listens there: connection refused
        client = Client(f'http://127.0.0.1:{port}', api_key='k')
        delays = []
        client._sleep = delays.append
        with self.assertRaises(LoyaltyConnectionError) as caught:
            client.points.grant(body=GRANT)  # a body key makes the grant safe to resend
        self.assertEqual((caught.exception.status, caught.exception.code), (0, 'NETWORK_ERROR'))
        self.assertEqual(len(delays), 2)
        delays.clear()
        with self.assertRaises(LoyaltyConnectionError):
            client.webhooks.update('whk_1', body={'active': False})
        self.assertEqual(delays, [])

    def test_a_dropped_connection_is_retried_and_a_slow_answer_times_out(self):
        def drop(handler):
            handler.close_connection = True
            handler.connection.shutdown(socket.SHUT_RDWR)
            return None
        def truncated(handler):
            # An answer cut off mid-body (http.client.IncompleteRead) is a network failure too.
            handler.send_response(200)
            handler.send_header('Content-Type', 'application/json')
            handler.send_header('Content-Length', '100')
            handler.end_headers()
            handler.wfile.write(b'{"av')
            handler.wfile.flush()
            handler.close_connection = True
            return None
        with support.StubServer([drop, truncated, OK]) as stub:
            client = client_for(stub)
            self.assertEqual(client.points.grant(body=GRANT)['available'], 50)
        self.assertEqual(len(stub.requests), 3)
        self.assertEqual(len({r['body']['idempotency_key'] for r in stub.requests}), 1)

        def slow(handler):
            time.sleep(0.5)
            return OK
        with support.StubServer([slow]) as stub:
            client = client_for(stub, timeout=0.1, max_retries=0)
            with self.assertRaises(LoyaltyConnectionError) as caught:
                client.points.get_settings()
        self.assertEqual(caught.exception.code, 'TIMEOUT')


class RequestShapeTest(unittest.TestCase):
    def test_credentials_api_key_or_bearer_with_tenant(self):
        with support.StubServer([OK]) as stub:
            Client(stub.url, api_key='lk_test_a').points.get_settings()
            Client(stub.url, bearer_token='lk_test_b', tenant='acme').points.get_settings()
            Client(stub.url).engagements.get_site('acme', 'summer')  # a public route: no credential
        first, second, third = (r['headers'] for r in stub.requests)
        self.assertEqual(first.get('X-Api-Key') or first.get('X-API-Key'), 'lk_test_a')
        self.assertEqual(second.get('Authorization'), 'Bearer lk_test_b')
        self.assertEqual(second.get('X-Service-Tenant'), 'acme')
        self.assertNotIn('Authorization', third)
        self.assertFalse(any(k.lower() == 'x-api-key' for k in third))
        self.assertEqual(stub.requests[2]['path'], '/api/v1/sites/acme/summer')
        with self.assertRaises(LoyaltyValidationError):
            Client('http://127.0.0.1:9').points.get_settings()

    def test_idempotency_keys_header_for_posts_body_for_money_and_events(self):
        keys = iter(f'key-{n}' for n in range(100))
        with support.StubServer([OK]) as stub:
            client = Client(stub.url, api_key='k', generate_idempotency_key=lambda: next(keys))
            client.webhooks.test('whk_1')                                        # a credentialed POST: header
            client.webhooks.test('whk_1', idempotency_key='mine')
            client.points.grant(body=GRANT, idempotency_key='order-1')           # body key from the argument
            client.points.grant(body={**GRANT, 'idempotency_key': 'order-2'})
            client.points.grant(body=GRANT, headers={'Idempotency-Key': 'order-3'})
            client.event_ingestion.ingest_batch(body={'events': [{'event_name': 'a', 'participant_id': 'p'},
                                                                 {'event_name': 'b', 'participant_id': 'p', 'idempotency_key': 'given'}]})
            client.webhooks.list(query={'limit': 2, 'cursor': 'c/1'})
        r = stub.requests
        self.assertEqual(r[0]['headers'].get('Idempotency-Key'), 'key-0')
        self.assertEqual(r[1]['headers'].get('Idempotency-Key'), 'mine')
        self.assertEqual([x['body']['idempotency_key'] for x in r[2:5]], ['order-1', 'order-2', 'order-3'])
        self.assertEqual([e['idempotency_key'] for e in r[5]['body']['events']], ['key-1', 'given'])
        self.assertEqual(r[6]['path'], '/api/v1/gamify/webhooks?limit=2&cursor=c%2F1')
        self.assertNotIn('Idempotency-Key', r[6]['headers'])

    def test_session_operations_take_the_session_never_the_key(self):
        with support.StubServer([OK]) as stub:
            client = Client(stub.url, api_key='k').with_session(Session('sess-1', 'eng-1'))
            client.points.get_balance(body={})
            client.badges.get_status(query={'badge_codes': ['a', 'b']})
        self.assertEqual(stub.requests[0]['body'], {'session_id': 'sess-1', 'engagement_id': 'eng-1'})
        self.assertFalse(any(k.lower() == 'x-api-key' for k in stub.requests[0]['headers']))
        self.assertIn('session_id=sess-1', stub.requests[1]['path'])
        self.assertIn('badge_codes=a&badge_codes=b', stub.requests[1]['path'])
        with self.assertRaises(LoyaltyValidationError):
            Client('http://127.0.0.1:9').points.get_balance(body={})

    def test_arguments_are_checked_before_sending(self):
        with self.assertRaises(LoyaltyValidationError):
            Client('not a url')
        with self.assertRaises(LoyaltyValidationError):
            Client('http://x', max_retries=-1)
        with self.assertRaises(LoyaltyValidationError) as caught:
            Client('http://x', api_key='k').webhooks.get('')
        self.assertEqual(caught.exception.field, 'path.destination_id')

    def test_parse_retry_after(self):
        self.assertEqual(parse_retry_after('7'), 7.0)
        self.assertIsNone(parse_retry_after(None))
        self.assertIsNone(parse_retry_after('soon'))
        self.assertEqual(parse_retry_after('Thu, 01 Jan 2026 00:00:10 GMT', now=1767225600.0), 10.0)
        self.assertEqual(parse_retry_after('Thu, 01 Jan 2026 00:00:10 GMT', now=1767225700.0), 0.0)


if __name__ == '__main__':
    unittest.main()


class ApiVersionTest(unittest.TestCase):
    def test_every_request_sends_the_generated_version_unless_the_client_names_another(self):
        from loyalty_sdk import API_VERSION
        self.assertEqual(API_VERSION, '2026-11-27')
        with support.StubServer([OK]) as stub:
            client_for(stub).points.grant(body=GRANT)
            client_for(stub, api_version='2026-11-27').with_session(Session('s', 'e')).points.get_balance(body={})
        self.assertEqual([r['headers'].get('Loyalty-Version') for r in stub.requests], [API_VERSION, '2026-11-27'])

    def test_an_api_version_that_is_not_a_date_is_refused_before_sending(self):
        with self.assertRaises(LoyaltyValidationError):
            Client('http://127.0.0.1:9', api_key='k', api_version='latest')
