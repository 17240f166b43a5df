import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestResponse, type TestTenant } from './helper.js';
import { asPerson, invitePerson, signInConsole, type ConsolePerson } from './console-people.js';
import { clock } from '../src/platform/clock.js';

/**
 * Four-eyes publishing as a tenant setting (issue 32): when `require_four_eyes`
 * is on, the submitter of a review request may not approve it, an API key may
 * submit but not approve, and nobody publishes directly. Through HTTP with two
 * console users holding the publishing permission (the owner and a marketer
 * with can_publish), against the real database.
 */
function assertFourEyes(response: TestResponse, what: string, detail: RegExp): void {
  assert.equal(response.status, 403, `${what}: ${response.status} ${response.text}`);
  assert.equal(response.body.code, 'FOUR_EYES_REQUIRED', what);
  assert.equal(response.body.error_version, 1, what);
  assert.match(response.body.detail, detail, what);
}

function assertDraftsOnly(response: TestResponse, what: string): void {
  assert.equal(response.status, 403, `${what}: ${response.status} ${response.text}`);
  assert.equal(response.body.code, 'AUTH_FORBIDDEN', what);
  assert.match(response.body.detail, /four-eyes publishing/, what);
}

const HOUR = 3_600_000;
let ruleCounter = 0;
const rule = (overrides: Record<string, unknown> = {}) => ({ name: `Welcome points ${++ruleCounter}`, event_name: 'signup', effects: [{ type: 'award_points', points: 25 }], ...overrides });

test('four-eyes publishing: a tenant setting; on, the submitter does not approve and nobody publishes directly', { timeout: 300_000 }, async (t) => {
  const svc = await startTestService(t);
  const tenant: TestTenant = await svc.createTenant();
  const owner = await signInConsole(svc, tenant.adminEmail, tenant.adminPassword);
  const publisher = await invitePerson(svc, owner, `publisher@${tenant.slug}.example`, 'marketer', { can_publish: true });
  const analyst = await invitePerson(svc, owner, `analyst@${tenant.slug}.example`, 'analyst');

  /** A draft rule made and submitted by `by`; returns the rule id and the review request id. */
  async function submittedDraft(by: ConsolePerson | string): Promise<{ ruleId: string; reviewId: string }> {
    const credential = (body?: unknown) => (typeof by === 'string' ? { key: by, body } : { ...asPerson(by), body });
    const created = await svc.request('POST', '/api/v1/admin/rules', credential(rule({ status: 'draft' })));
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.status, 'draft');
    const submitted = await svc.request('POST', '/api/v1/admin/reviews', credential({ kind: 'rule', id: created.body.id }));
    assert.equal(submitted.status, 201, submitted.text);
    return { ruleId: created.body.id, reviewId: submitted.body.id };
  }

  async function ruleStatus(ruleId: string): Promise<string> {
    const read = await svc.request('GET', `/api/v1/admin/rules/${ruleId}`, asPerson(owner));
    assert.equal(read.status, 200, read.text);
    return read.body.status;
  }

  await t.test('the setting is in the tenant read (false by default) and in the OpenAPI document', async () => {
    const read = await svc.request('GET', '/api/v1/tenant', asPerson(owner));
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.require_four_eyes, false);

    const spec = (await svc.request('GET', '/openapi.json')).body;
    const getTenant = spec.paths['/api/v1/tenant'].get.responses['200'].content['application/json'].schema;
    const updateTenant = spec.paths['/api/v1/tenant'].patch.requestBody.content['application/json'].schema;
    const resolve = (schema: any) => (schema.$ref ? spec.components.schemas[schema.$ref.split('/').pop()] : schema);
    assert.equal(resolve(getTenant).properties.require_four_eyes.type, 'boolean');
    assert.ok(resolve(getTenant).required.includes('require_four_eyes'));
    assert.equal(resolve(updateTenant).properties.require_four_eyes.type, 'boolean');
    assert.match(resolve(updateTenant).properties.require_four_eyes.description, /FOUR_EYES_REQUIRED/);
    assert.match(spec.paths['/api/v1/admin/reviews/{id}/approve'].post.description, /FOUR_EYES_REQUIRED/);
  });

  await t.test('off (today): the same person submits and approves; direct publishing works', async () => {
    const { ruleId, reviewId } = await submittedDraft(owner);
    const approved = await svc.request('POST', `/api/v1/admin/reviews/${reviewId}/approve`, asPerson(owner));
    assert.equal(approved.status, 200, approved.text);
    assert.equal(approved.body.status, 'approved');
    assert.equal(approved.body.decided_by.id, owner.userId);
    assert.equal(await ruleStatus(ruleId), 'active');

    const live = await svc.request('POST', '/api/v1/admin/rules', { ...asPerson(publisher), body: rule() });
    assert.equal(live.status, 201, live.text);
    assert.equal(live.body.status, 'active', 'a publisher still gets an active rule by default');
  });

  await t.test('changing the setting needs settings:write and is in the audit log', async () => {
    for (const [who, person] of [['analyst', analyst], ['marketer with can_publish', publisher]] as const) {
      const refused = await svc.request('PATCH', '/api/v1/tenant', { ...asPerson(person), body: { require_four_eyes: true } });
      assert.equal(refused.status, 403, `${who}: ${refused.text}`);
      assert.equal(refused.body.code, 'AUTH_FORBIDDEN');
      assert.match(refused.body.detail, /settings:write/, who);
    }
    const invalid = await svc.request('PATCH', '/api/v1/tenant', { ...asPerson(owner), body: { require_four_eyes: 'yes' } });
    assert.equal(invalid.status, 400, invalid.text);
    assert.match(invalid.body.detail, /require_four_eyes/);
    assert.equal((await svc.request('GET', '/api/v1/tenant', asPerson(owner))).body.require_four_eyes, false, 'nothing changed');

    const changed = await svc.request('PATCH', '/api/v1/tenant', { ...asPerson(owner), body: { require_four_eyes: true } });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.body.require_four_eyes, true);
    assert.equal(changed.body.timezone, 'UTC', 'the other settings are kept');
    const read = await svc.request('GET', '/api/v1/tenant', { key: tenant.apiKey });
    assert.equal(read.body.require_four_eyes, true);

    const log = await svc.request('GET', '/api/v1/admin/audit-log?resource_type=tenant', asPerson(owner));
    assert.equal(log.status, 200, log.text);
    const entry = log.body.entries.find((e: any) => e.after?.require_four_eyes === true);
    assert.ok(entry, JSON.stringify(log.body.entries));
    assert.equal(entry.action, 'update');
    assert.equal(entry.actor_type, 'user');
    assert.equal(entry.actor_id, owner.userId);
    assert.equal(entry.before.require_four_eyes, false);
  });

  await t.test('on: the submitter may not approve, by cookie or by login token; an API key may not approve; the request stays pending', async () => {
    const { ruleId, reviewId } = await submittedDraft(owner);
    assertFourEyes(await svc.request('POST', `/api/v1/admin/reviews/${reviewId}/approve`, asPerson(owner)), 'self-approval', /another person with the publishing permission must approve/);
    const token = await svc.login(tenant);
    assertFourEyes(await svc.request('POST', `/api/v1/admin/reviews/${reviewId}/approve`, { bearer: token }), 'self-approval by login token', /you submitted this request/);
    assertFourEyes(await svc.request('POST', `/api/v1/admin/reviews/${reviewId}/approve`, { key: tenant.apiKey }), 'approval by key', /API key may submit .* but not approve/);
    const pending = await svc.request('GET', `/api/v1/admin/reviews/${reviewId}`, asPerson(owner));
    assert.equal(pending.body.status, 'pending');
    assert.equal(await ruleStatus(ruleId), 'draft');

    // A second person with the publishing permission approves: the rule is published.
    const approved = await svc.request('POST', `/api/v1/admin/reviews/${reviewId}/approve`, asPerson(publisher));
    assert.equal(approved.status, 200, approved.text);
    assert.equal(approved.body.status, 'approved');
    assert.deepEqual([approved.body.submitted_by.id, approved.body.decided_by.id], [owner.userId, publisher.userId]);
    assert.equal(await ruleStatus(ruleId), 'active');
  });

  await t.test('on: the reverse pair works too, and a submitter may return their own request', async () => {
    const first = await submittedDraft(publisher);
    assertFourEyes(await svc.request('POST', `/api/v1/admin/reviews/${first.reviewId}/approve`, asPerson(publisher)), 'self-approval', /another person/);
    const approved = await svc.request('POST', `/api/v1/admin/reviews/${first.reviewId}/approve`, asPerson(owner));
    assert.equal(approved.status, 200, approved.text);
    assert.equal(await ruleStatus(first.ruleId), 'active');

    const second = await submittedDraft(publisher);
    const returned = await svc.request('POST', `/api/v1/admin/reviews/${second.reviewId}/return`, { ...asPerson(publisher), body: { note: 'Not ready after all' } });
    assert.equal(returned.status, 200, returned.text);
    assert.equal(returned.body.status, 'returned');
    assert.equal(await ruleStatus(second.ruleId), 'draft');
  });

  await t.test('on: an API key submits (its id is the submitter); a person approves', async () => {
    const { ruleId, reviewId } = await submittedDraft(tenant.apiKey);
    const read = await svc.request('GET', `/api/v1/admin/reviews/${reviewId}`, asPerson(owner));
    assert.equal(read.body.submitted_by.type, 'api_key');
    assertFourEyes(await svc.request('POST', `/api/v1/admin/reviews/${reviewId}/approve`, { key: tenant.apiKey }), 'the submitting key approves', /API key/);
    const approved = await svc.request('POST', `/api/v1/admin/reviews/${reviewId}/approve`, asPerson(owner));
    assert.equal(approved.status, 200, approved.text);
    assert.equal(await ruleStatus(ruleId), 'active');
  });

  await t.test('on: nobody publishes directly, publishers and API keys included; drafts stay open', async () => {
    for (const [who, credential] of [
      ['owner', (body?: unknown) => ({ ...asPerson(owner), body })],
      ['API key', (body?: unknown) => ({ key: tenant.apiKey, body })],
    ] as const) {
      assertDraftsOnly(await svc.request('POST', '/api/v1/admin/rules', credential(rule({ status: 'active' }))), `${who}: create an active rule`);
      const draft = await svc.request('POST', '/api/v1/admin/rules', credential(rule()));
      assert.equal(draft.status, 201, draft.text);
      assert.equal(draft.body.status, 'draft', `${who}: without a status, a rule is a draft under four-eyes`);
      assertDraftsOnly(await svc.request('PATCH', `/api/v1/admin/rules/${draft.body.id}`, credential({ status: 'active' })), `${who}: activate a draft`);
      const edited = await svc.request('PATCH', `/api/v1/admin/rules/${draft.body.id}`, credential({ name: `${draft.body.name} (edited)` }));
      assert.equal(edited.status, 200, edited.text);
      assert.equal(edited.body.status, 'draft');

      const engagementId = await svc.createEngagement(tenant);
      assertFourEyes(await svc.request('POST', `/api/v1/admin/engagements/${engagementId}/publish`, credential()), `${who}: publish an engagement`, /POST \/api\/v1\/admin\/reviews/);

      const now = clock.nowMs();
      const challenge = await svc.request(
        'POST',
        '/api/v1/admin/challenges',
        credential({
          name: `Spring shopper (${who})`,
          starts_at: new Date(now - HOUR).toISOString(),
          ends_at: new Date(now + 24 * HOUR).toISOString(),
          objectives: [{ id: 'buy', name: 'Two purchases', evaluator: 'event_count', event_name: 'purchase', target: 2 }],
        }),
      );
      assert.equal(challenge.status, 201, challenge.text);
      assert.equal(challenge.body.status, 'draft');
      assertFourEyes(await svc.request('POST', `/api/v1/admin/challenges/${challenge.body.id}/publish`, credential()), `${who}: publish a challenge`, /four-eyes/);
    }
    // A rule that is live already is out of everyone's direct reach.
    const live = await svc.sql<{ id: string }>("SELECT id FROM earn_rules WHERE tenant_id = $1 AND status = 'active' LIMIT 1", [tenant.tenantId]);
    assertDraftsOnly(await svc.request('PATCH', `/api/v1/admin/rules/${live[0].id}`, { ...asPerson(owner), body: { name: 'Changed live' } }), 'edit a live rule');
    assertDraftsOnly(await svc.request('PATCH', `/api/v1/admin/rules/${live[0].id}`, { ...asPerson(owner), body: { status: 'paused', name: 'Paused and renamed' } }), 'pause and edit a live rule');
    assert.equal((await svc.request('PATCH', `/api/v1/admin/rules/${live[0].id}`, { ...asPerson(analyst), body: { status: 'paused' } })).status, 403, 'pause without programs:write');
    // Taking a live rule down needs no second person: a publisher pauses it at once.
    const paused = await svc.request('PATCH', `/api/v1/admin/rules/${live[0].id}`, { ...asPerson(publisher), body: { status: 'paused' } });
    assert.equal(paused.status, 200, paused.text);
    assert.equal(await ruleStatus(live[0].id), 'paused');
    assertDraftsOnly(await svc.request('PATCH', `/api/v1/admin/rules/${live[0].id}`, { ...asPerson(owner), body: { status: 'active' } }), 'resume a paused rule');
  });

  await t.test('off again: the same person approves their own request', async () => {
    const off = await svc.request('PATCH', '/api/v1/tenant', { ...asPerson(owner), body: { require_four_eyes: false } });
    assert.equal(off.status, 200, off.text);
    assert.equal(off.body.require_four_eyes, false);
    const { ruleId, reviewId } = await submittedDraft(publisher);
    const approved = await svc.request('POST', `/api/v1/admin/reviews/${reviewId}/approve`, asPerson(publisher));
    assert.equal(approved.status, 200, approved.text);
    assert.equal(await ruleStatus(ruleId), 'active');
    const direct = await svc.request('POST', '/api/v1/admin/rules', { key: tenant.apiKey, body: rule() });
    assert.equal(direct.body.status, 'active');
  });
});
