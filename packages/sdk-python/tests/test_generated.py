"""The generated file is what the generator writes from the committed OpenAPI document
(so it cannot drift), and it derives the operations as the TypeScript SDK does."""
from __future__ import annotations

import ast
import json
import os
import re
import unittest

import support

GENERATOR = os.path.join(support.PACKAGE_DIR, 'scripts', 'generate.py')
GENERATED = os.path.join(support.PACKAGE_DIR, 'loyalty_sdk', '_generated.py')
TS_TABLE = os.path.join(support.REPO_ROOT, 'packages', 'sdk', 'src', 'generated', 'operations.ts')


def load_generator():
    return support.load_module('loyalty_sdk_generate', GENERATOR)


class GeneratedFileTest(unittest.TestCase):
    def test_regenerating_gives_the_committed_file(self):
        with open(GENERATED, encoding='utf-8') as handle:
            committed = handle.read()
        regenerated = load_generator().generate_source()
        if committed != regenerated:
            self.fail('packages/sdk-python/loyalty_sdk/_generated.py is not what packages/sdk/openapi.json gives: '
                      'run `python3 packages/sdk-python/scripts/generate.py` and commit the result')

    def test_the_generated_file_parses_for_python_3_9(self):
        with open(GENERATED, encoding='utf-8') as handle:
            ast.parse(handle.read(), feature_version=(3, 9))
        for name in ('client.py', 'errors.py'):
            with open(os.path.join(support.PACKAGE_DIR, 'loyalty_sdk', '_' + name), encoding='utf-8') as handle:
                ast.parse(handle.read(), feature_version=(3, 9))

    def test_operations_match_the_typescript_sdk(self):
        from loyalty_sdk import OPERATIONS
        with open(TS_TABLE, encoding='utf-8') as handle:
            ts = {name: json.loads(spec) for name, spec in re.findall(r'^  (\w+): (\{.*\}),$', handle.read(), re.M)}
        self.assertGreater(len(ts), 100)
        for name, spec in ts.items():
            if spec.get('stream') or spec['auth'] == 'console':
                self.assertNotIn(name, OPERATIONS, f'{name}: a stream or a console operation is left out')
                continue
            self.assertIn(name, OPERATIONS)
            mine = OPERATIONS[name]
            for field in ('method', 'path', 'auth'):
                self.assertEqual(mine[field], spec[field], f'{name}.{field}')
            self.assertEqual(mine.get('idempotency'), spec.get('idempotency'), f'{name}.idempotency')
        self.assertEqual(set(OPERATIONS) - set(ts), set())

    def test_resources_and_methods(self):
        from loyalty_sdk import Client
        client = Client('http://127.0.0.1:9', api_key='k')
        for resource, method in [('points', 'grant'), ('points', 'deduct'), ('points', 'get_balance'), ('webhooks', 'replay_delivery'),
                                 ('webhooks', 'replay_deliveries'), ('webhooks', 'list'), ('webhooks', 'create'),
                                 ('event_ingestion', 'ingest'), ('event_ingestion', 'ingest_batch'), ('state', 'get_participant_state'),
                                 ('badges', 'list'), ('earn_rules', 'create'), ('access', 'create_session')]:
            self.assertTrue(callable(getattr(getattr(client, resource), method, None)), f'client.{resource}.{method}')
        import inspect
        signature = inspect.signature(client.webhooks.replay_delivery)
        self.assertEqual(list(signature.parameters)[:2], ['destination_id', 'log_id'])
        self.assertEqual(signature.parameters['destination_id'].kind, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        self.assertEqual(inspect.signature(client.points.grant).parameters['body'].kind, inspect.Parameter.KEYWORD_ONLY)

    def test_every_annotation_resolves(self):
        # A model or a method naming a type that does not exist fails here, on every supported Python.
        import typing
        from loyalty_sdk import _generated as g
        checked = 0
        for name, value in vars(g).items():
            if isinstance(value, type) and value.__module__ == g.__name__:
                if issubclass(value, dict):
                    typing.get_type_hints(value)
                    checked += 1
                for attribute, member in vars(value).items():
                    if callable(member) and not attribute.startswith('_'):
                        typing.get_type_hints(member, vars(g))
                        checked += 1
        self.assertGreater(checked, 300)

    def test_models_are_typed_dicts(self):
        from loyalty_sdk import _generated as g
        self.assertEqual(g.GrantPointsBody.__required_keys__, frozenset({'participant_id', 'amount', 'reason'}))
        self.assertIn('idempotency_key', g.GrantPointsBody.__optional_keys__)
        self.assertIn('errors', g.ErrorResponse.__annotations__)
        self.assertIn('event_name', g.IngestEvent.__required_keys__)


if __name__ == '__main__':
    unittest.main()
