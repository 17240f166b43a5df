#!/usr/bin/env python3
"""Writes loyalty_sdk/_generated.py from the service's OpenAPI document.

    python3 packages/sdk-python/scripts/generate.py            # write the file
    python3 packages/sdk-python/scripts/generate.py --check    # exit 1 when it differs
    python3 packages/sdk-python/scripts/generate.py --document other.json   # from another copy of the document

Standard library only. The output is deterministic (a function of the
document and of this script), so the unittest suite regenerates it and
compares (tests/test_generated.py): the committed file cannot drift.

What it derives, the same way as the TypeScript SDK (packages/sdk/scripts/operations-table.ts):
- one TypedDict per component schema, and per operation its request body
  (`<OperationId>Body`), query (`<OperationId>Query`) and 2xx JSON answer
  (`<OperationId>Response`); inline objects with properties get their own
  TypedDict named after their parent and field;
- one resource class per first tag (snake_case: `points`, `webhooks`,
  `event_ingestion`), one method per operation, named by the operationId in
  snake_case without the tag's words (`grantPoints` -> `points.grant`,
  `getPointsBalance` -> `points.get_balance`), or the whole operationId when
  that would be empty, a Python keyword or taken twice;
- the credential (`key`, `session`, `public`) from `security`, and where an
  idempotency key goes (`body`, `events`, `attempt`) from the body schema.

Left out: EXCLUDED_OPERATIONS of the TypeScript SDK (packages/sdk/src/excluded-operations.ts,
read here), the console's routes (a person's browser sign-in) and the two
server-sent-event streams.
"""
from __future__ import annotations

import json
import keyword
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.path.dirname(HERE)
REPO_ROOT = os.path.dirname(os.path.dirname(PACKAGE_DIR))
DOCUMENT = os.path.join(REPO_ROOT, 'packages', 'sdk', 'openapi.json')
EXCLUDED_TS = os.path.join(REPO_ROOT, 'packages', 'sdk', 'src', 'excluded-operations.ts')
OUTPUT = os.path.join(PACKAGE_DIR, 'loyalty_sdk', '_generated.py')

METHODS = ('get', 'post', 'put', 'patch', 'delete')
IDENTIFIER = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')


def snake(name: str) -> str:
    name = re.sub(r'[^A-Za-z0-9]+', '_', name)
    name = re.sub(r'([a-z0-9])([A-Z])', r'\1_\2', name)
    name = re.sub(r'([A-Z]+)([A-Z][a-z])', r'\1_\2', name)
    return name.strip('_').lower()


def pascal(name: str) -> str:
    return ''.join(part[:1].upper() + part[1:] for part in re.split(r'[^A-Za-z0-9]+', name) if part)


def excluded_operations() -> set:
    with open(EXCLUDED_TS, encoding='utf-8') as handle:
        text = handle.read()
    found = {f'{m} {p}' for m, p in re.findall(r"method:\s*'([A-Z]+)',\s*path:\s*'([^']+)'", text)}
    if 'POST /api/v1/auth/login' not in found:
        raise SystemExit(f'could not read the excluded operations from {EXCLUDED_TS}: has its format changed?')
    return found


class Generator:
    def __init__(self, document: dict):
        self.document = document
        self.schemas = document.get('components', {}).get('schemas', {})
        self.models: list = []  # (name, source text)
        self.model_names: set = set()

    # ---- types -------------------------------------------------------
    def resolve(self, schema):
        current = schema or {}
        for _ in range(10):
            ref = current.get('$ref') if isinstance(current, dict) else None
            if not isinstance(ref, str):
                break
            current = self.schemas.get(ref.split('/')[-1], {})
        return current

    def unique_name(self, wanted: str) -> str:
        name, n = wanted, 2
        while name in self.model_names or name in self.schemas and name != wanted:
            name, n = f'{wanted}{n}', n + 1
        return name

    def type_of(self, schema, hint: str) -> str:
        if not isinstance(schema, dict) or schema == {}:
            return 'Any'
        ref = schema.get('$ref')
        if isinstance(ref, str):
            return pascal(ref.split('/')[-1])
        if 'const' in schema:
            return f'Literal[{json.dumps(schema["const"])}]'
        if 'enum' in schema:
            values = [v for v in schema['enum'] if isinstance(v, (str, int, float, bool)) or v is None]
            if values:
                literals = ', '.join('None' if v is None else json.dumps(v) if not isinstance(v, bool) else repr(v) for v in values)
                return f'Literal[{literals}]'
        for combinator in ('anyOf', 'oneOf'):
            if combinator in schema:
                return self.union([self.type_of(item, hint) for item in schema[combinator]])
        if 'allOf' in schema and len(schema['allOf']) == 1:
            return self.type_of(schema['allOf'][0], hint)
        kind = schema.get('type')
        if isinstance(kind, list):
            return self.union([self.type_of({**schema, 'type': k}, hint) for k in kind])
        if kind == 'string':
            return 'str'
        if kind == 'integer':
            return 'int'
        if kind == 'number':
            return 'float'
        if kind == 'boolean':
            return 'bool'
        if kind == 'null':
            return 'None'
        if kind == 'array':
            return f'List[{self.type_of(schema.get("items"), hint + "Item")}]'
        if kind == 'object' or 'properties' in schema:
            if schema.get('properties'):
                return self.model(hint, schema)
            extra = schema.get('additionalProperties')
            if isinstance(extra, dict) and extra:
                return f'Dict[str, {self.type_of(extra, hint + "Value")}]'
            return 'Dict[str, Any]'
        return 'Any'

    @staticmethod
    def union(types: list) -> str:
        literals, others = [], []
        for t in types:
            if t.startswith('Literal[') and t.endswith(']'):
                literals.append(t[len('Literal['):-1])
            elif t not in others:
                others.append(t)
        parts = ([f'Literal[{", ".join(dict.fromkeys(literals))}]'] if literals else []) + others
        if len(parts) == 1:
            return parts[0]
        if 'None' in parts and len(parts) == 2:
            return f'Optional[{[p for p in parts if p != "None"][0]}]'
        return f'Union[{", ".join(parts)}]'

    def model(self, wanted: str, schema: dict, fixed_name: bool = False) -> str:
        name = wanted if fixed_name else self.unique_name(wanted)
        self.model_names.add(name)
        properties = schema.get('properties', {})
        required = set(schema.get('required', []))
        fields = [(key, self.type_of(value, name + pascal(key)), key in required, self.resolve(value).get('description') if isinstance(value, dict) else None)
                  for key, value in properties.items()]
        doc = schema.get('description') or schema.get('title')
        self.models.append((name, self.render_model(name, fields, doc)))
        return name

    @staticmethod
    def render_model(name: str, fields: list, doc) -> str:
        all_identifiers = all(IDENTIFIER.match(k) and not keyword.iskeyword(k) for k, _, _, _ in fields)
        lines = []
        if not all_identifiers:
            # Keys that are not identifiers (`in`, `from`): the functional form, every key optional.
            # Values are evaluated at import: each type is given as a string (a forward reference).
            body = ', '.join(f'{json.dumps(k)}: {t!r}' for k, t, _, _ in fields)
            lines.append(f'{name} = TypedDict({name!r}, {{{body}}}, total=False)')
            return '\n'.join(lines) + '\n'
        required = [f for f in fields if f[2]]
        optional = [f for f in fields if not f[2]]

        def field_lines(items):
            out = []
            for key, kind, _, _ in items:
                out.append(f'    {key}: {kind}')
            return out

        summary = (doc or '').strip().splitlines()[0][:200].replace('"""', "'''").replace('\\', '\\\\') if doc else ''
        if required and optional:
            lines.append(f'class _{name}Required(TypedDict):')
            lines += field_lines(required)
            lines.append('')
            lines.append('')
            lines.append(f'class {name}(_{name}Required, total=False):')
            if summary:
                lines.append(f'    """{summary}"""')
            lines += field_lines(optional)
        else:
            total = '' if required or not fields else ', total=False'
            lines.append(f'class {name}(TypedDict{total}):')
            if summary:
                lines.append(f'    """{summary}"""')
            lines += field_lines(required or optional)
            if not fields and not summary:
                lines.append('    pass')
        return '\n'.join(lines) + '\n'

    # ---- operations --------------------------------------------------
    def auth_of(self, operation: dict):
        schemes = {name for requirement in operation.get('security', []) or [] for name in requirement}
        if not schemes:
            return 'public'
        if 'Session' in schemes:
            return 'session'
        if 'ApiKey' in schemes:
            return 'key'
        return None  # a person's sign-in or the operator's token: not for this SDK

    def idempotency_of(self, operation: dict):
        body = self.resolve(operation.get('requestBody', {}).get('content', {}).get('application/json', {}).get('schema'))
        properties = body.get('properties', {}) or {}
        events = self.resolve(properties.get('events'))
        if events.get('type') == 'array' and (self.resolve(events.get('items')).get('properties') or {}).get('idempotency_key'):
            return 'events'
        if properties.get('idempotency_key'):
            return 'body'
        if properties.get('attempt_id'):
            return 'attempt'
        return None

    def operations(self):
        excluded = excluded_operations()
        found = []
        for path, item in self.document['paths'].items():
            for method in METHODS:
                operation = item.get(method)
                if not operation or f'{method.upper()} {path}' in excluded:
                    continue
                answers = [a for s, a in (operation.get('responses') or {}).items() if str(s).startswith('2')]
                if any('text/event-stream' in (a.get('content') or {}) for a in answers):
                    continue
                auth = self.auth_of(operation)
                if auth is None:
                    continue
                found.append((path, method, operation, auth))
        return found

    def generate(self) -> str:
        for schema_name in self.schemas:
            self.model_names.add(pascal(schema_name))
        for schema_name, schema in self.schemas.items():
            resolved = self.resolve(schema)
            if resolved.get('type') == 'object' or resolved.get('properties'):
                self.model(pascal(schema_name), resolved, fixed_name=True)
            else:
                self.models.append((pascal(schema_name), f'{pascal(schema_name)} = {self.type_of(resolved, pascal(schema_name) + "Value")!r}\n'))

        table, resources = [], {}
        for path, method, operation, auth in self.operations():
            operation_id = operation['operationId']
            tag = (operation.get('tags') or ['default'])[0]
            resource = snake(tag)
            op_name = pascal(operation_id)
            parameters = operation.get('parameters') or []
            path_params = [p for p in parameters if p.get('in') == 'path']
            ordered = re.findall(r'{([^}]+)}', path)
            path_params.sort(key=lambda p: ordered.index(p['name']) if p['name'] in ordered else 99)
            query_params = [p for p in parameters if p.get('in') == 'query']
            query_type = None
            if query_params:
                query_type = self.model(op_name + 'Query', {
                    'type': 'object',
                    'properties': {p['name']: {**(p.get('schema') or {}), 'description': p.get('description')} for p in query_params},
                    'required': [],
                })
            body_schema = (operation.get('requestBody') or {}).get('content', {}).get('application/json', {}).get('schema')
            body_type = self.type_of(body_schema, op_name + 'Body') if body_schema is not None else None
            body_required = bool((operation.get('requestBody') or {}).get('required'))
            response_type = 'Any'
            for status, answer in sorted((operation.get('responses') or {}).items()):
                if str(status).startswith('2'):
                    schema = (answer.get('content') or {}).get('application/json', {}).get('schema')
                    if schema is not None:
                        response_type = self.type_of(schema, op_name + 'Response')
                    break
            spec = {'method': method.upper(), 'path': path, 'auth': auth}
            idempotency = self.idempotency_of(operation)
            if idempotency:
                spec['idempotency'] = idempotency
            if operation.get('deprecated'):
                spec['deprecated'] = f'{method.upper()} {path} is deprecated: {operation.get("summary", "")}'.strip()
            table.append((operation_id, spec))
            resources.setdefault(resource, []).append({
                'operation_id': operation_id, 'tag': tag, 'summary': operation.get('summary', ''),
                'path_params': [(snake(p['name']), p['name']) for p in path_params],
                'query_type': query_type, 'body_type': body_type, 'body_required': body_required,
                'response_type': response_type, 'auth': auth, 'method': method.upper(), 'path': path,
            })
        return self.render(table, resources)

    def api_version(self) -> str:
        """The newest version of the document's `loyalty-version` header (the TypeScript SDK's apiVersionOf)."""
        for item in self.document['paths'].values():
            for method in METHODS:
                for parameter in (item.get(method) or {}).get('parameters') or []:
                    versions = (parameter.get('schema') or {}).get('enum') if parameter.get('in') == 'header' and parameter.get('name') == 'loyalty-version' else None
                    if versions:
                        return str(versions[-1])
        raise SystemExit('the document has no Loyalty-Version header: is the snapshot older than src/platform/api-version.ts?')

    @staticmethod
    def method_names(tag: str, operations: list) -> dict:
        tag_words = set(snake(tag).split('_'))
        tag_words |= {w[:-3] + 'y' for w in tag_words if w.endswith('ies')} | {w[:-1] for w in tag_words if w.endswith('s')} | {w + 's' for w in tag_words}
        short = {}
        for op in operations:
            words = [w for w in snake(op['operation_id']).split('_') if w not in tag_words]
            short[op['operation_id']] = '_'.join(words)
        counts = {}
        for name in short.values():
            counts[name] = counts.get(name, 0) + 1
        names = {}
        for op in operations:
            name = short[op['operation_id']]
            if not name or counts[name] > 1 or keyword.iskeyword(name) or name.startswith('_'):
                name = snake(op['operation_id'])
            names[op['operation_id']] = name
        return names

    def render(self, table: list, resources: dict) -> str:
        out = [
            '# Generated by packages/sdk-python/scripts/generate.py from packages/sdk/openapi.json. Do not edit.',
            '# Regenerate: python3 packages/sdk-python/scripts/generate.py',
            '"""Typed models and resource methods of the service\'s OpenAPI document (generated)."""',
            'from __future__ import annotations',
            '',
            'from typing import Any, Dict, List, Literal, Mapping, Optional, TypedDict, Union',
            '',
            'from ._types import Caller, Session',
            '',
            f'OPENAPI_VERSION = {json.dumps(self.document.get("info", {}).get("version", ""))}',
            '# The Loyalty-Version (a date) this SDK was generated against: sent unless Client(api_version=...) names another.',
            f'API_VERSION = {json.dumps(self.api_version())}',
            '',
            '# ---- models ----',
            '',
        ]
        for _, source in self.models:
            out.append(source)
            out.append('')
        out.append('# ---- operations: operationId -> how to call it ----')
        out.append('OPERATIONS: Dict[str, Dict[str, str]] = {')
        for operation_id, spec in table:
            out.append(f'    {operation_id!r}: {json.dumps(spec, ensure_ascii=False)},')
        out.append('}')
        out.append('')
        out.append('')
        resource_classes = []
        for resource in sorted(resources):
            operations = resources[resource]
            names = self.method_names(operations[0]['tag'], operations)
            class_name = pascal(resource) + 'Resource'
            resource_classes.append((resource, class_name))
            out.append(f'class {class_name}:')
            out.append(f'    """The `{operations[0]["tag"]}` operations: `client.{resource}.<method>(...)`."""')
            out.append('')
            out.append('    def __init__(self, client: Caller) -> None:')
            out.append('        self._client = client')
            for op in operations:
                args = ['self'] + [f'{name}: str' for name, _ in op['path_params']] + ['*']
                if op['query_type']:
                    args.append(f'query: Optional[{op["query_type"]}] = None')
                if op['body_type']:
                    args.append(f'body: {op["body_type"]}' if op['body_required'] else f'body: Optional[{op["body_type"]}] = None')
                args += ['idempotency_key: Optional[str] = None', 'headers: Optional[Mapping[str, str]] = None']
                if op['auth'] == 'session':
                    args.append('session: Optional[Session] = None')
                out.append('')
                out.append(f'    def {names[op["operation_id"]]}({", ".join(args)}) -> {op["response_type"]}:')
                summary = (op['summary'] or op['operation_id']).replace('\\', '\\\\').replace('"""', "'''")
                out.append(f'        """{summary}')
                out.append('')
                out.append(f'        `{op["method"]} {op["path"]}` ({op["operation_id"]}).')
                out.append('        """')
                path_dict = ', '.join(f'{original!r}: {name}' for name, original in op['path_params'])
                call = [repr(op['operation_id']), f'path={{{path_dict}}}']
                call.append('query=query' if op['query_type'] else 'query=None')
                call.append('body=body' if op['body_type'] else 'body=None')
                call += ['idempotency_key=idempotency_key', 'headers=headers']
                call.append('session=session' if op['auth'] == 'session' else 'session=None')
                out.append(f'        return self._client.call({", ".join(call)})')
            out.append('')
            out.append('')
        out.append('class GeneratedResources:')
        out.append('    """One attribute per resource (the first tag of its operations)."""')
        out.append('')
        for resource, class_name in resource_classes:
            out.append(f'    {resource}: {class_name}')
        out.append('')
        out.append('    def _install_resources(self) -> None:')
        for resource, class_name in resource_classes:
            out.append(f'        self.{resource} = {class_name}(self)  # type: ignore[arg-type]')
        out.append('')
        out.append('')
        out.append(f'RESOURCES = {json.dumps({r: c for r, c in resource_classes})}')
        return '\n'.join(out) + '\n'


def generate_source(document_path: str = DOCUMENT) -> str:
    with open(document_path, encoding='utf-8') as handle:
        document = json.load(handle)
    return Generator(document).generate()


def main(argv: list) -> int:
    document = DOCUMENT
    if '--document' in argv:
        document = argv[argv.index('--document') + 1]
    source = generate_source(document)
    if '--check' in argv:
        current = ''
        if os.path.exists(OUTPUT):
            with open(OUTPUT, encoding='utf-8') as handle:
                current = handle.read()
        if current != source:
            print(f'{OUTPUT} differs from what {sys.argv[0]} writes: run it and commit the result', file=sys.stderr)
            return 1
        return 0
    with open(OUTPUT, 'w', encoding='utf-8') as handle:
        handle.write(source)
    print(f'wrote {os.path.relpath(OUTPUT, REPO_ROOT)}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
