"""Against a running service (LOYALTY_BASE_URL, LOYALTY_API_KEY: a sandbox tenant's key with the admin scope).
test/python-sdk.test.ts starts one and runs this suite; without them these tests are skipped."""
from __future__ import annotations

import unittest

import support
from support import BASE_URL, API_KEY, unique


@support.integration
class ServiceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from loyalty_sdk import Client
        cls.client = Client(BASE_URL, api_key=API_KEY)

    def test_ingest_an_event(self):
        participant = unique('py-ingest')
        key = unique('order')
        first = self.client.event_ingestion.ingest(body={'event_name': 'purchase_completed', 'participant_id': participant,
                                                         'properties': {'order_total': 12.5}, 'idempotency_key': key})
        self.assertTrue(first['accepted'])
        self.assertFalse(first['duplicate'])
        self.assertFalse(first['livemode'])
        again = self.client.event_ingestion.ingest(body={'event_name': 'purchase_completed', 'participant_id': participant,
                                                         'properties': {'order_total': 12.5}, 'idempotency_key': key})
        self.assertTrue(again['duplicate'])
        self.assertEqual(again['message_id'], first['message_id'])
        # Without a key the SDK makes one: two sends are two events.
        a = self.client.event_ingestion.ingest(body={'event_name': 'page_view', 'participant_id': participant})
        b = self.client.event_ingestion.ingest(body={'event_name': 'page_view', 'participant_id': participant})
        self.assertNotEqual(a['message_id'], b['message_id'])

    def test_grant_points_and_read_the_balance(self):
        participant = unique('py-grant')
        granted = self.client.points.grant(body={'participant_id': participant, 'amount': 40, 'reason': 'welcome'})
        self.assertEqual((granted['available'], granted['delta'], granted['duplicate']), (40, 40, False))
        self.client.points.deduct(body={'participant_id': participant, 'amount': 15, 'reason': 'coffee'})
        state = self.client.state.get_participant_state(participant)
        self.assertEqual(state['participant_id'], participant)
        self.assertEqual((state['points']['available'], state['points']['lifetime']), (25, 40))

    def test_an_idempotent_replay_changes_nothing(self):
        participant = unique('py-replay')
        body = {'participant_id': participant, 'amount': 30, 'reason': 'campaign'}
        first = self.client.points.grant(body=body, idempotency_key='grant-' + participant)
        second = self.client.points.grant(body=body, idempotency_key='grant-' + participant)
        self.assertFalse(first['duplicate'])
        self.assertTrue(second['duplicate'])
        self.assertEqual(second['ledger_entry_id'], first['ledger_entry_id'])
        self.assertEqual(self.client.state.get_participant_state(participant)['points']['available'], 30)
        # A header-keyed POST (createBadge) answers its first answer again.
        code = unique('badge').replace('-', '_')
        created = self.client.badges.create(body={'code': code, 'name': 'Replayed'}, idempotency_key='badge-' + code)
        replayed = self.client.badges.create(body={'code': code, 'name': 'Replayed'}, idempotency_key='badge-' + code)
        self.assertEqual(replayed, created)

    def test_a_400_names_each_field_at_fault(self):
        from loyalty_sdk import LoyaltyBadRequestError, LoyaltyError
        with self.assertRaises(LoyaltyBadRequestError) as caught:
            self.client.points.grant(body={'participant_id': unique('py-bad'), 'amount': 0, 'reason': 'nothing', 'type': 'gift'})
        error = caught.exception
        self.assertIsInstance(error, LoyaltyError)
        self.assertEqual(error.status, 400)
        self.assertIsInstance(error.code, str)
        self.assertTrue(error.detail)
        self.assertTrue(error.request_id)
        by_path = {e['path']: e for e in error.errors}
        self.assertIn('/amount', by_path, error.errors)
        self.assertEqual(by_path['/amount']['in'], 'body')
        self.assertIn('/type', by_path, error.errors)
        self.assertIn('bonus', by_path['/type'].get('allowed', []), error.errors)

    def test_list_with_pagination(self):
        prefix = unique('pg').replace('-', '_')
        codes = {f'{prefix}_{n}' for n in range(5)}
        for code in sorted(codes):
            self.client.badges.create(body={'code': code, 'name': code})
        seen, pages, cursor = [], 0, None
        while True:
            query = {'limit': 2}
            if cursor:
                query['cursor'] = cursor
            page = self.client.badges.list(query=query)
            pages += 1
            self.assertLessEqual(len(page['badges']), 2)
            seen += [badge['code'] for badge in page['badges']]
            cursor = page['next_cursor']
            if not cursor:
                break
            self.assertLess(pages, 100)
        self.assertTrue(codes <= set(seen), seen)
        self.assertEqual(len(seen), len(set(seen)))
        self.assertGreaterEqual(pages, 3)

    def test_a_wrong_key_is_an_authentication_error(self):
        from loyalty_sdk import Client, LoyaltyAuthenticationError
        with self.assertRaises(LoyaltyAuthenticationError) as caught:
            Client(BASE_URL, api_key='lk_test_' + '0' * 32).points.get_settings()
        self.assertEqual(caught.exception.status, 401)

    def test_a_bearer_credential_works_like_the_key(self):
        from loyalty_sdk import Client
        tenant = Client(BASE_URL, bearer_token=API_KEY).access.get_tenant()
        self.assertEqual(tenant, self.client.access.get_tenant())


if __name__ == '__main__':
    unittest.main()
