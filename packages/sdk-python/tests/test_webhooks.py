"""verify_webhook against signatures computed as the service computes them
(src/modules/webhooks/delivery.ts signatureHeader: HMAC-SHA256 keyed with the whole
secret string over `<t>.<raw body>`, header `t=<t>,v1=<hex>`), and against one the
service's own signer made (LOYALTY_WEBHOOK_FIXTURE, given by test/python-sdk.test.ts)."""
from __future__ import annotations

import email.message
import hashlib
import hmac
import json
import os
import time
import unittest

import support  # noqa: F401  (sys.path)
from loyalty_sdk import LoyaltyError, LoyaltyWebhookSignatureError, sign_webhook, verify_webhook

SECRET = 'whsec_' + 'k' * 32
BODY = json.dumps({'id': 'evt_1', 'event': 'points.awarded.v1', 'participant_id': 'p-1', 'data': {'amount': 5, 'note': 'café'}},
                  ensure_ascii=False).encode('utf-8')


def service_signature(secret: str, timestamp: int, raw_body: bytes) -> str:
    # Written out here rather than taken from the SDK: createHmac('sha256', secret).update(`${t}.${rawBody}`).digest('hex')
    digest = hmac.new(secret.encode(), f'{timestamp}.'.encode() + raw_body, hashlib.sha256).hexdigest()
    return f't={timestamp},v1={digest}'


class VerifyWebhookTest(unittest.TestCase):
    def setUp(self):
        self.now = int(time.time())
        self.header = service_signature(SECRET, self.now, BODY)

    def reason(self, body, headers, secret=SECRET, **kwargs):
        with self.assertRaises(LoyaltyWebhookSignatureError) as caught:
            verify_webhook(body, headers, secret, **kwargs)
        self.assertIsInstance(caught.exception, LoyaltyError)
        self.assertEqual(caught.exception.status, 0)
        self.assertEqual(caught.exception.code, 'WEBHOOK_' + caught.exception.reason.upper())
        return caught.exception.reason

    def test_a_valid_delivery_returns_the_parsed_envelope(self):
        envelope = verify_webhook(BODY, {'X-Service-Signature': self.header}, SECRET)
        self.assertEqual(envelope['event'], 'points.awarded.v1')
        self.assertEqual(envelope['data']['note'], 'café')

    def test_the_body_may_be_text_and_headers_any_case_or_an_http_message(self):
        self.assertEqual(verify_webhook(BODY.decode(), {'x-service-signature': self.header}, SECRET)['id'], 'evt_1')
        message = email.message.Message()
        message['X-Service-Signature'] = self.header
        self.assertEqual(verify_webhook(BODY, message, SECRET)['id'], 'evt_1')
        self.assertEqual(verify_webhook(BODY, {'X-SERVICE-SIGNATURE': [self.header]}, SECRET)['id'], 'evt_1')

    def test_any_of_several_v1_signatures_may_match(self):
        other = service_signature('whsec_old', self.now, BODY).split(',')[1]
        self.assertEqual(verify_webhook(BODY, {'X-Service-Signature': f'{self.header.split(",")[0]},{other},{self.header.split(",")[1]}'}, SECRET)['id'], 'evt_1')

    def test_sign_webhook_writes_what_the_service_writes(self):
        self.assertEqual(sign_webhook(BODY, SECRET, self.now), self.header)

    def test_missing_and_malformed_headers(self):
        self.assertEqual(self.reason(BODY, {}), 'missing_signature')
        self.assertEqual(self.reason(BODY, {'X-Service-Signature': '  '}), 'missing_signature')
        self.assertEqual(self.reason(BODY, {'X-Service-Signature': 'v1=' + 'a' * 64}), 'malformed_signature')
        self.assertEqual(self.reason(BODY, {'X-Service-Signature': f't=abc,v1={"a" * 64}'}), 'malformed_signature')
        self.assertEqual(self.reason(BODY, {'X-Service-Signature': f't={self.now},v1=xyz'}), 'malformed_signature')
        self.assertEqual(self.reason(BODY, {'X-Service-Signature': f't={self.now},v0={"a" * 64}'}), 'malformed_signature')
        self.assertEqual(self.reason(BODY, {'X-Service-Signature': 't=1,' + 'v1=' + 'a' * 2000}), 'malformed_signature')

    def test_a_timestamp_outside_the_tolerance_is_refused(self):
        old = service_signature(SECRET, self.now - 301, BODY)
        self.assertEqual(self.reason(BODY, {'X-Service-Signature': old}), 'timestamp_out_of_tolerance')
        future = service_signature(SECRET, self.now + 301, BODY)
        self.assertEqual(self.reason(BODY, {'X-Service-Signature': future}), 'timestamp_out_of_tolerance')
        self.assertEqual(verify_webhook(BODY, {'X-Service-Signature': old}, SECRET, tolerance_seconds=400)['id'], 'evt_1')
        edge = service_signature(SECRET, self.now - 300, BODY)
        self.assertEqual(verify_webhook(BODY, {'X-Service-Signature': edge}, SECRET, now=self.now)['id'], 'evt_1')

    def test_a_changed_body_or_another_secret_is_a_mismatch(self):
        self.assertEqual(self.reason(BODY.replace(b'5', b'6'), {'X-Service-Signature': self.header}), 'signature_mismatch')
        self.assertEqual(self.reason(BODY, {'X-Service-Signature': self.header}, secret='whsec_other'), 'signature_mismatch')
        # The whole secret, prefix included, is the key.
        without_prefix = service_signature(SECRET[len('whsec_'):], self.now, BODY)
        self.assertEqual(self.reason(BODY, {'X-Service-Signature': without_prefix}), 'signature_mismatch')
        # Re-serialised JSON is not the raw body.
        reserialised = json.dumps(json.loads(BODY)).encode()
        self.assertEqual(self.reason(reserialised, {'X-Service-Signature': self.header}), 'signature_mismatch')

    def test_an_empty_secret_is_a_programming_error(self):
        with self.assertRaises(TypeError):
            verify_webhook(BODY, {'X-Service-Signature': self.header}, '')

    def test_a_signature_made_by_the_service_verifies(self):
        fixture = os.environ.get('LOYALTY_WEBHOOK_FIXTURE')
        if not fixture:
            self.skipTest('LOYALTY_WEBHOOK_FIXTURE (a delivery signed by the service) is given by test/python-sdk.test.ts')
        given = json.loads(fixture)
        raw = given['body'].encode('utf-8')
        envelope = verify_webhook(raw, {'X-Service-Signature': given['signature']}, given['secret'])
        self.assertEqual(envelope['id'], 'evt_python_fixture')
        self.assertEqual(envelope['participant_id'], 'p-ünïcode')
        self.assertEqual(sign_webhook(raw, given['secret'], given['timestamp']), given['signature'])
        with self.assertRaises(LoyaltyWebhookSignatureError):
            verify_webhook(raw + b' ', {'X-Service-Signature': given['signature']}, given['secret'])


if __name__ == '__main__':
    unittest.main()
