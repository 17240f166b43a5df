import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestService, type RequestOptions, type TestResponse } from './helper.js';
import { asPerson, invitePerson, signInConsole, type ConsolePerson } from './console-people.js';
import { userMay, ROLES, type Permission, type Role } from '../src/platform/permissions.js';
import { contestDefinition } from '../src/modules/contests/testing.js';
import { runExport } from '../src/modules/files/exports.js';
import { CONTACT_FIELDS, PERSONAL_STANDARD_FIELDS } from '../src/platform/privacy.js';

/**
 * The access matrix, generated from the served document: every credentialed
 * operation of `/openapi.json`, called as every console role (and as an API
 * key without `read:pii`), on a tenant seeded with personal values that
 * cannot appear by chance.
 *
 * - A role whose permissions (platform/permissions.ts, shown per operation as
 *   `x-permission`) do not allow the operation gets the role refusal (403),
 *   before anything runs: writes are sent only to such roles.
 * - A role that may read gets no role refusal and no 5xx, and its answer
 *   holds none of the personal values unless it holds `read:pii`.
 * - Nobody, the owner included, reads a credential (an invitation link, a
 *   signing secret, a new key) back from any read route or the audit log.
 *
 * - Every property named like personal data, in any request or answer of
 *   the document, carries its classification (`x-personal`).
 *
 * A new route is covered by being in the document; no one writes its test.
 */
const PERSONAL = {
  email: 'zqmarker.person@example.org',
  first_name: 'Zebulonqx',
  last_name: 'Quartermainx',
  full_name: 'Zebulonqx Quartermainx',
  mobile_number: '+4915112349876',
  date_of_birth: '1987-06-05',
  gender: 'non_binary',
} as const;
const CUSTOM_CARD = 'CARD-7781-ZQX';
const NESTED_EMAIL = 'zqnested.buyer@example.org';
const CONTEST = { email: 'zqcontest.entrant@example.org', payment_method: 'pm-zq-visa-4242', device_fingerprint: 'dev-zq-fingerprint' };
const PARTICIPANT = 'pm-zq-1';
const CONTEST_ID = 'zq-cup';

/** Values that a caller without read:pii must never receive (their masks differ from them). */
const PERSONAL_VALUES = [PERSONAL.email, PERSONAL.first_name, PERSONAL.last_name, '4915112349876', PERSONAL.date_of_birth, CUSTOM_CARD, NESTED_EMAIL, ...Object.values(CONTEST)];

type Caller = { name: Role | 'key without read:pii'; role: Role | null; options: (write: boolean) => RequestOptions; readsPii: boolean };

interface Operation {
  method: string;
  path: string;
  permission: Permission | 'owner';
  parameters: Array<{ name: string; in: string; required?: boolean; schema?: Record<string, any> }>;
  streams: boolean;
}

const PERSONAL_NAMES: ReadonlySet<string> = new Set([...PERSONAL_STANDARD_FIELDS, ...CONTACT_FIELDS]);
const ROLE_REFUSAL = new RegExp(`^the (${ROLES.join('|')}) role may not do this`);

test('every route as every role: refusals as the permissions say, no personal value without read:pii, no credential read back', { timeout: 600_000 }, async (t) => {
  const svc = await startTestService(t, { config: { ALLOW_LOOPBACK_WEBHOOKS: 'true', ALLOW_HTTP_WEBHOOKS: 'true' } });
  const tenant = await svc.createTenant({ requestsPerMinute: 1_000_000 });
  const piiKey = tenant.apiKey;
  const ownerPerson = await signInConsole(svc, tenant.adminEmail, tenant.adminPassword);

  // ---- people of every role, and a key without read:pii ----
  const people = new Map<Role, ConsolePerson>([['owner', ownerPerson]]);
  for (const role of ROLES) {
    if (role === 'owner') continue;
    people.set(role, await invitePerson(svc, ownerPerson, `${role}@staff.example.com`, role));
  }
  const jwt = await svc.login(tenant);
  const plainKeyAnswer = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'no personal data', scopes: ['admin', 'gamify:admin'] } });
  assert.equal(plainKeyAnswer.status, 201, plainKeyAnswer.text);
  const plainKey: string = plainKeyAnswer.body.key;

  // ---- seeded personal values and credentials ----
  const secrets: string[] = [plainKey];
  const pendingInvite = await svc.request('POST', '/api/v1/admin/users', { ...asPerson(ownerPerson), body: { email: 'pending@staff.example.com', role: 'owner' } });
  assert.equal(pendingInvite.status, 201, pendingInvite.text);
  secrets.push(decodeURIComponent(/#token=(.+)$/.exec(pendingInvite.body.invite_url)![1]));
  const field = await svc.request('POST', '/api/v1/gamify/admin/participant-fields', { key: piiKey, body: { key: 'loyalty_card', type: 'string', personal: true } });
  assert.equal(field.status, 201, field.text);
  const profile = await svc.request('PATCH', `/api/v1/gamify/admin/participants/${PARTICIPANT}/profile`, { ...asPerson(ownerPerson), body: { ...PERSONAL, custom: { loyalty_card: CUSTOM_CARD } } });
  assert.equal(profile.status, 200, profile.text);
  const event = await svc.request('POST', '/api/v1/ingest/events', {
    key: piiKey,
    body: { event_name: 'purchase', participant_id: PARTICIPANT, properties: { order_total: 12, customer: { email: NESTED_EMAIL, custom: { loyalty_card: CUSTOM_CARD } } }, idempotency_key: 'zq-order-1' },
  });
  assert.equal(event.status, 202, event.text);
  const webhook = await svc.request('POST', '/api/v1/gamify/webhooks', { key: piiKey, body: { name: 'CRM', url: 'http://127.0.0.1:9/hooks', events: ['points.awarded.v1'] } });
  assert.equal(webhook.status, 201, webhook.text);
  secrets.push(webhook.body.secret);
  const contest = await svc.request('POST', '/api/v1/admin/contests', { ...asPerson(ownerPerson), body: contestDefinition(CONTEST_ID) });
  assert.equal(contest.status, 201, contest.text);
  assert.equal((await svc.request('POST', `/api/v1/admin/contests/${CONTEST_ID}/publish`, { key: piiKey })).status, 200);
  const entry = await svc.request('POST', `/api/v1/admin/contests/${CONTEST_ID}/entries`, { key: piiKey, body: { participant_id: PARTICIPANT, display_name: 'Zed', ...CONTEST } });
  assert.equal(entry.status, 201, entry.text);
  const exported = await svc.request('POST', '/api/v1/admin/exports', { ...asPerson(ownerPerson), body: { kind: 'participants', format: 'csv' } });
  assert.equal(exported.status, 202, exported.text);
  await runExport(svc.service.db, tenant.tenantId, exported.body.export_id);

  const ids: Record<string, string> = {
    contests: CONTEST_ID,
    exports: exported.body.export_id,
    events: event.body.message_id,
    webhooks: webhook.body.destination_id ?? webhook.body.id,
    users: ownerPerson.userId,
    'participant-fields': 'loyalty_card',
  };

  const callers: Caller[] = [
    ...[...people].map(([role, person]): Caller => ({ name: role, role, options: (write) => asPerson(person, write), readsPii: role === 'owner' })),
    { name: 'key without read:pii', role: null, options: () => ({ key: plainKey }), readsPii: false },
  ];

  // ---- the operations, from the document ----
  const document = (await svc.request('GET', '/openapi.json')).body;
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!operation || typeof operation !== 'object' || !operation['x-permission']) continue;
      const streams = Object.values(operation.responses ?? {}).some((response: any) => response?.content && 'text/event-stream' in response.content);
      operations.push({ method: method.toUpperCase(), path, permission: operation['x-permission'], parameters: operation.parameters ?? [], streams });
    }
  }
  assert.ok(operations.length > 150, `only ${operations.length} credentialed operations found`);

  // Every property of a request or answer named like personal data carries its classification (x-personal), wherever it is.
  const unclassified = new Set<string>();
  let classifiedSeen = 0;
  const walk = (node: unknown, where: string): void => {
    if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${where}/${i}`));
    if (!node || typeof node !== 'object') return;
    const properties = (node as { properties?: Record<string, any> }).properties;
    for (const [name, property] of Object.entries(properties ?? {})) {
      const classified = (schema: any): boolean => !!schema && (schema['x-personal'] !== undefined || (schema.anyOf ?? schema.oneOf ?? []).some(classified));
      if (PERSONAL_NAMES.has(name) && !classified(property)) unclassified.add(`${where}/properties/${name}`);
      if (PERSONAL_NAMES.has(name) && classified(property)) classifiedSeen++;
    }
    for (const [key, child] of Object.entries(node)) if (key !== 'examples' && key !== 'example') walk(child, `${where}/${key}`);
  };
  walk(document.paths, '#/paths');
  walk(document.components?.schemas, '#/components/schemas');
  assert.deepEqual([...unclassified], []);
  assert.ok(classifiedSeen >= 20, `only ${classifiedSeen} classified personal properties in the document`);

  function valueFor(name: string, previous: string | undefined, schema: Record<string, any> | undefined): string | null {
    if (name === 'participant_id') return PARTICIPANT;
    if (name === 'contest_id') return CONTEST_ID;
    if (previous && ids[previous]) return ids[previous];
    if (schema?.default !== undefined) return String(schema.default);
    if (schema?.enum) return String(schema.enum[0]);
    if (schema?.examples?.[0] !== undefined) return String(schema.examples[0]);
    if (schema?.format === 'uuid') return randomUUID();
    return null;
  }

  function urlOf(operation: Operation): string {
    const segments = operation.path.split('/');
    const path = segments
      .map((segment, i) => {
        const match = /^\{(.+)\}$/.exec(segment);
        if (!match) return segment;
        const parameter = operation.parameters.find((p) => p.in === 'path' && p.name === match[1]);
        return encodeURIComponent(valueFor(match[1], segments[i - 1], parameter?.schema) ?? 'zz-unknown');
      })
      .join('/');
    const query = new URLSearchParams();
    for (const parameter of operation.parameters) {
      if (parameter.in !== 'query' || parameter.name === 'session_id') continue;
      const value = parameter.required || parameter.name === 'participant_id' ? valueFor(parameter.name, undefined, parameter.schema) : null;
      if (value !== null) query.set(parameter.name, value);
    }
    return query.size > 0 ? `${path}?${query}` : path;
  }

  const may = (caller: Caller, permission: Operation['permission']): boolean => {
    if (caller.role === null) return true;
    return permission === 'owner' ? caller.role === 'owner' : userMay({ role: caller.role, canPublish: caller.role === 'owner' }, permission);
  };

  const problems: string[] = [];
  const readsWithData = new Map<string, number>();
  // Reads first: every caller, every read route.
  for (const operation of operations.filter((o) => o.method === 'GET')) {
    const url = urlOf(operation);
    for (const caller of callers) {
      const allowed = may(caller, operation.permission);
      if (operation.streams && allowed) continue; // a stream answers forever; its refusal is checked, its envelopes carry ids only
      const response: TestResponse = await svc.request('GET', url, caller.options(false));
      const where = `${caller.name} GET ${operation.path} (${operation.permission})`;
      const refusedByRole = response.status === 403 && ROLE_REFUSAL.test(response.body?.detail ?? '');
      if (!allowed && !refusedByRole) problems.push(`${where}: expected the role refusal, got ${response.status} ${response.text.slice(0, 200)}`);
      if (allowed && refusedByRole) problems.push(`${where}: refused by role although its permissions allow it`);
      if (response.status >= 500) problems.push(`${where}: ${response.status} ${response.text.slice(0, 200)}`);
      if (response.status === 200) readsWithData.set(operation.path, (readsWithData.get(operation.path) ?? 0) + 1);
      if (!caller.readsPii) {
        for (const value of PERSONAL_VALUES) if (response.text.includes(value)) problems.push(`${where}: answers the personal value ${value}`);
      }
      for (const value of secrets) if (response.text.includes(value)) problems.push(`${where}: answers a credential (${value.slice(0, 12)}…)`);
    }
  }
  // Writes: only to roles that may not, which are refused before anything runs.
  for (const operation of operations.filter((o) => o.method !== 'GET' && o.method !== 'HEAD')) {
    const url = urlOf(operation);
    for (const caller of callers) {
      if (caller.role === null || may(caller, operation.permission)) continue;
      const response = await svc.request(operation.method, url, { ...caller.options(true), body: {} });
      const refusedByRole = response.status === 403 && ROLE_REFUSAL.test(response.body?.detail ?? '');
      if (!refusedByRole) problems.push(`${caller.name} ${operation.method} ${operation.path} (${operation.permission}): expected the role refusal, got ${response.status} ${response.text.slice(0, 200)}`);
    }
  }
  // What the audit log stores, whoever reads it: no credential and no personal value at all.
  const stored = await svc.sql<{ entry: string }>('SELECT concat_ws(\' \', before::text, after::text, details::text) AS entry FROM audit_log WHERE tenant_id = $1', [tenant.tenantId]);
  assert.ok(stored.length >= 8, `only ${stored.length} audit entries`);
  for (const { entry } of stored) {
    for (const value of [...PERSONAL_VALUES, ...secrets]) if (entry.includes(value)) problems.push(`the audit log stores ${value.slice(0, 16)}…: ${entry.slice(0, 300)}`);
  }
  assert.deepEqual(problems, []);

  // The seeded data was reached: the routes that hold it answered, and the owner saw what the others may not.
  for (const path of [
    '/api/v1/gamify/admin/participants/{participant_id}',
    '/api/v1/gamify/state/{participant_id}',
    '/api/v1/admin/events/{event_id}',
    '/api/v1/admin/contests/{id}/entries/{participant_id}',
    '/api/v1/admin/audit-log',
  ]) {
    assert.ok((readsWithData.get(path) ?? 0) >= 2, `${path} answered 200 to ${readsWithData.get(path) ?? 0} callers`);
  }
  const ownerView = await svc.request('GET', `/api/v1/admin/contests/${CONTEST_ID}/entries/${PARTICIPANT}`, asPerson(ownerPerson, false));
  assert.equal(ownerView.body.signals.email, CONTEST.email);
  const ownerEvent = await svc.request('GET', `/api/v1/admin/events/${ids.events}`, asPerson(ownerPerson, false));
  assert.equal(ownerEvent.body.properties.customer.email, NESTED_EMAIL);
});
