import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestService, waitFor, type TestResponse } from './helper.js';
import { schemaChecker } from './contract.js';
import { ExampleComposer } from '../src/platform/openapi-examples.js';

/**
 * Every example of the reference is accepted by the service as it stands:
 * each operation with a JSON request body (POST, PUT, PATCH) and each GET is
 * sent to a running service with its example, in an order that creates what
 * the later ones name, and must answer its documented success status with a
 * body that fits the documented schema.
 *
 * What the test puts in is only what an example cannot know: the credential
 * the operation's security asks for (an API key, an admin login, the operator
 * token, a participant session with the engagement it was issued for, the
 * tenant admin's email and password where the body holds them), the path
 * parameters, and the fields of a body that name an object whose id the
 * service chose (BODY_IDS): all are ids of objects made earlier in the same
 * run. Ids a caller chooses (badge, reward, contest, leaderboard codes) are
 * sent as the examples have them, so the examples name each other.
 *
 * The order is derived: creators (a POST on a path without parameters) first,
 * then the rest by their number of path parameters; AFTER, SETUP_* and LAST
 * say the little the paths cannot. EXCEPTIONS lists what cannot succeed on a
 * fresh tenant by its nature, each asserted to fail as documented instead.
 */
const OPERATOR_TOKEN = `op_${randomBytes(20).toString('hex')}`;

/**
 * Path parameters whose object is made by a creator at another path than the
 * parameter's own collection (the rest are derived: `/a/b/{x}` is made by
 * `POST /a/b`, and `x` is read from its answer).
 */
const COLLECTION_ALIASES: Record<string, string> = {
  '/api/v1/public/challenges': '/api/v1/admin/challenges',
  '/api/v1/contests': '/api/v1/admin/contests',
  '/api/v1/public/leaderboards': '/api/v1/admin/leaderboards',
  '/api/v1/public/engagements': '/api/v1/admin/engagements',
  '/api/v1/admin/events': '/api/v1/ingest/events',
  '/api/v1/referrals/validate': '/api/v1/referrals/generate',
  '/api/v1/admin/referrals/conversions': '/api/v1/referrals/convert',
  '/api/v1/gamify/webhooks/{destination_id}/replay-jobs': '/api/v1/gamify/webhooks/{destination_id}/replay',
};
/** Where the id is in a creator's answer when it is not `id`, `<param>` or `<resource>_<param>`. */
const ANSWER_FIELDS: Record<string, string[]> = {
  '/api/v1/referrals/convert': ['conversion_id'],
  '/api/v1/admin/users': ['user', 'id'],
  '/api/v1/ingest/events': ['message_id'],
};

/**
 * Operations that cannot succeed on a fresh tenant by their nature, each with
 * the reason and the documented error status it answers instead.
 */
const EXCEPTIONS: Record<string, { status: number; reason: string }> = {
  decideFraudReview: { status: 404, reason: 'a fresh tenant has no contest entry held for fraud review (src/modules/contests/contests.test.ts decides one)' },
  approveReferralConversion: { status: 422, reason: "a conversion is held for review only when its signals look like self-referral (same device or address); the example's referrer and friend are different people, so it counts at once" },
  rejectReferralConversion: { status: 422, reason: 'as approveReferralConversion: no conversion is pending review (src/modules/referrals/referrals.test.ts decides held ones)' },
  returnReview: {
    status: 409,
    reason:
      "the example's challenge is published directly (enrollInChallenge's setup) while its review request waits, which closes the request as published; returning a pending one: test/publishing.test.ts",
  },
  getSitePreview: {
    status: 403,
    reason: "the test sends a real participant's session, and only a preview session (startEngagementPreview) reads a draft; previews: src/modules/engagements/preview.test.ts",
  },
  createWebhook: {
    status: 422,
    reason:
      "the receiver must resolve in public DNS and the test machine has none; the operations on a destination use one the test makes for a receiver of its own (ALLOW_LOOPBACK_WEBHOOKS)",
  },
};

/** Run last: it ends the admin token the other operations use. */
const LAST = ['changeConsolePassword'];
/** Sent after the reads without parameters: their body names what one of those answered (the previewed diff's fingerprint). */
const AFTER_READS = ['applySandboxPromotion'];

/**
 * Fields of a request body that name an object the service made (its id is
 * the service's, not the caller's), and the creator whose answer gives it.
 * Ids a caller chooses (badge, reward, leaderboard codes) are not here: the
 * examples name the ones the creators' examples choose.
 */
const BODY_IDS: Record<string, string> = {
  engagement_id: '/api/v1/admin/engagements',
  contest_id: '/api/v1/admin/contests',
  challenge_id: '/api/v1/admin/challenges',
  rule_id: '/api/v1/admin/rules',
  segment_id: '/api/v1/admin/segments',
};
/** Fields of one operation's body that name a made object under another name. */
const BODY_IDS_OF: Record<string, Record<string, string>> = {
  createReview: { id: '/api/v1/admin/challenges' },
  convertReferral: { code: '/api/v1/referrals/generate' },
  applySandboxPromotion: { fingerprint: '/api/v1/tenant/sandbox/promotion' },
};

/** Operations without a body that bring what a creator made to the state later examples need (published), sent right after it. */
const SETUP_AFTER: Record<string, string[]> = {
  createEngagement: ['/api/v1/admin/engagements/{id}/publish'],
  createContest: ['/api/v1/admin/contests/{id}/publish'],
};
/** The same, sent right before the operation (its object had to be a draft until then). */
const SETUP_BEFORE: Record<string, string[]> = {
  enrollInChallenge: ['/api/v1/admin/challenges/{id}/publish'],
  // A variant is rolled out of a running experiment.
  rolloutExperiment: ['/api/v1/admin/experiments/{experiment_id}/start'],
};

/** Operations that work on sandbox tenants only (the test clock and test controls): sent with a sandbox tenant's key. */
const SANDBOX_TENANT = new Set(['getTestClock', 'advanceTestClock', 'updateWebhookSettings', 'streamTenantEvents']);

/** Operations documented with the API key schemes that serve only people signed in (an admin login token). */
const SIGNED_IN = new Set(['getConsoleSession', 'changeConsolePassword']);

/** Query parameters an operation needs one of (none of them is required on its own). */
const QUERIES: Record<string, Record<string, string>> = {
  searchParticipants: { external_id: 'user_1042' },
};

/** Ordered after these operations when the path does not tell (a body names what they make). */
const AFTER: Record<string, string[]> = {
  createSession: ['createEngagement'],
  createEngagement: ['createReward', 'createBadge'],
  createRule: ['createBadge'],
  createReview: ['createChallenge'],
  acceptConsoleInvitation: ['inviteConsoleUser'],
  convertReferral: ['generateReferralCode'],
  // What targets a segment names one made first (issue 36).
  createMultiplier: ['createSegment'],
  grantPointsToSegment: ['createSegment'],
  createExport: ['createSegment'],
};

interface Operation {
  method: string;
  path: string;
  id: string;
  operation: any;
}

test('every example request of the reference is accepted as it stands', { timeout: 300_000 }, async (t) => {
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}'));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/loyalty`;
  // With its jobs, so that exports and imports finish as they would in production.
  const svc = await startTestService(t, { jobs: true, config: { OPERATOR_TOKEN, ALLOW_LOOPBACK_WEBHOOKS: 'true', ALLOW_HTTP_WEBHOOKS: 'true' } });
  const document = (await svc.request('GET', '/openapi.json')).body;
  const composer = new ExampleComposer(document);
  const check = schemaChecker(document);

  const tenant = await svc.createTenant();
  const sandbox = await svc.createTenant({ environment: 'sandbox' });
  // The tenant's sandbox exists, as it does once anyone has opened the console's sandbox switch.
  assert.equal((await svc.request('POST', '/api/v1/tenant/sandbox', { key: tenant.apiKey })).status, 201);
  // An import, whose body is a file rather than JSON: the import routes read it.
  const csv = 'participant_id,email\nuser_1042,ada@example.com\n';
  const imported = await svc.request('POST', '/api/v1/admin/imports?kind=participants&format=csv', { key: tenant.apiKey, raw: csv, headers: { 'content-type': 'text/csv' } });
  assert.equal(imported.status, 202, imported.text);

  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<any>(document.paths)) {
    for (const method of ['get', 'post', 'put', 'patch']) {
      const operation = item[method];
      if (!operation) continue;
      if (method !== 'get' && operation.requestBody?.content?.['application/json']?.example === undefined) continue;
      operations.push({ method, path, id: operation.operationId, operation });
    }
  }
  const ordered = order(operations);

  /** Answers of the creators by collection path, and named values (session, engagement, …). */
  const made = new Map<string, any>([['/api/v1/admin/imports', imported.body]]);
  let session: { session_id: string; engagement_id: string } | null = null;
  const problems: string[] = [];
  let passed = 0;
  let sent = 0;

  const valueOf = (path: string, name: string): string | null => {
    if (name === 'participant_id') return 'user_1042';
    // The name of the ingestion examples' event (`ingestEvent` sends it before the reads of names).
    if (name === 'event_name') return 'purchase_completed';
    if (name === 'tenant_id') return sandbox.tenantId;
    if (name === 'tenantSlug') return tenant.slug;
    const engagement = made.get('/api/v1/admin/engagements');
    if (name === 'siteSlug') return engagement?.site_slug ?? null;
    if (name === 'activityId') return engagement?.activities?.[0]?.id ?? null;
    const before = path.slice(0, path.indexOf(`{${name}}`) - 1);
    const collection = COLLECTION_ALIASES[before] ?? before;
    return idOf(collection, name);
  };
  const idOf = (collection: string, name: string): string | null => {
    const answer = made.get(collection);
    if (!answer) return null;
    const path = ANSWER_FIELDS[collection];
    const resource = singular(collection);
    const value = path
      ? path.reduce((node, key) => node?.[key], answer)
      : (answer[name] ?? answer[`${resource}_${name}`] ?? answer.id ?? answer.code ?? answer.job_id ?? answer[`${resource}_id`]);
    return value === undefined || value === null ? null : String(value);
  };
  const fill = (path: string): string | null => {
    let missing = false;
    const filled = path.replace(/\{([^}]+)\}/g, (_, param: string) => {
      const value = valueOf(path, param);
      if (value === null) missing = true;
      return encodeURIComponent(value ?? '');
    });
    return missing ? null : filled;
  };

  for (const { method, path, id, operation } of ordered) {
    const name = `${id} (${method.toUpperCase()} ${path})`;
    const url = fill(path);
    if (url === null) {
      problems.push(`${name}: nothing made earlier gives its path parameters`);
      continue;
    }
    const security: string[] = (operation.security ?? []).flatMap((s: Record<string, unknown>) => Object.keys(s));
    const query = new URLSearchParams();
    for (const parameter of operation.parameters ?? []) {
      if (parameter.in !== 'query' || !parameter.required) continue;
      if (parameter.name === 'engagement_id' && session) query.set('engagement_id', session.engagement_id);
      else query.set(parameter.name, String(parameter.example ?? composer.example(parameter.schema ?? {}, parameter.name)));
    }
    for (const [key, value] of Object.entries(QUERIES[id] ?? {})) query.set(key, value);
    const headers: Record<string, string> = {};
    let body = method === 'get' ? undefined : structuredClone(operation.requestBody.content['application/json'].example);
    if (body && typeof body === 'object' && !Array.isArray(body)) {
      for (const [field, collection] of Object.entries({ ...BODY_IDS, ...BODY_IDS_OF[id] })) {
        if (!(field in body) || !made.has(collection)) continue;
        body[field] = idOf(collection, field);
      }
    }
    if (SIGNED_IN.has(id) || (security.includes('AdminToken') && !security.includes('ApiKey'))) headers.authorization = `Bearer ${await svc.login(tenant)}`;
    else if (SANDBOX_TENANT.has(id)) headers['x-api-key'] = sandbox.apiKey;
    else if (security.includes('ApiKey')) headers['x-api-key'] = tenant.apiKey;
    else if (security.includes('OperatorToken')) headers.authorization = `Bearer ${OPERATOR_TOKEN}`;
    else if (security.includes('Session')) {
      if (!session) {
        problems.push(`${name}: no participant session made before it`);
        continue;
      }
      if (body && typeof body === 'object' && !Array.isArray(body) && 'session_id' in body) Object.assign(body, session);
      else {
        query.set('session_id', session.session_id);
        query.set('engagement_id', session.engagement_id);
      }
    }
    if (id === 'adminLogin' || id === 'createConsoleSession') body = { ...body, email: tenant.adminEmail, password: tenant.adminPassword };
    if (id === 'changeConsolePassword') body = { ...body, current_password: tenant.adminPassword };
    if (id === 'acceptConsoleInvitation') body = { ...body, token: decodeURIComponent(String(made.get('/api/v1/admin/users')?.invite_url).split('#token=')[1]) };
    // An experiment's variants name rules the service made (nested ids, which BODY_IDS does not reach): the control live, the other a draft.
    if (id === 'createExperiment') body = { ...body, variants: await experimentVariants(svc, tenant.apiKey, body.variants) };
    if (id === 'downloadExport') {
      const job = url.replace(/\/file$/, '');
      await waitFor('the export to complete', async () => (await svc.request('GET', job, { key: tenant.apiKey })).body.status === 'completed');
    }
    for (const step of SETUP_BEFORE[id] ?? []) {
      const done = await svc.request('POST', fill(step) ?? step, { key: tenant.apiKey });
      if (!done.status.toString().startsWith('2')) problems.push(`${name}: first POST ${step}: ${done.status} ${done.text.slice(0, 300)}`);
    }
    const target = query.size > 0 ? `${url}?${query}` : url;
    sent++;
    if (operation.responses?.['200']?.content?.['text/event-stream']) {
      // An event stream stays open: its status and content type are what the test can check.
      const opened = await openStream(`${svc.baseUrl}${target}`, headers);
      if (opened === 'text/event-stream') passed++;
      else problems.push(`${name}: ${opened}`);
      continue;
    }
    const answer = await svc.request(method.toUpperCase(), target, { headers, ...(body !== undefined ? { body } : {}) });
    const successes = Object.keys(operation.responses ?? {}).filter((status) => status.startsWith('2'));
    const exception = EXCEPTIONS[id];
    if (exception) {
      if (answer.status === exception.status) passed++;
      else problems.push(`${name}: expected ${exception.status} (${exception.reason}), got ${answer.status} ${answer.text.slice(0, 300)}`);
      if (id === 'createWebhook') {
        const standIn = await svc.request('POST', path, { headers, body: { ...body, url: receiverUrl } });
        assert.equal(standIn.status, 201, standIn.text);
        made.set(path, standIn.body);
      }
      continue;
    }
    if (!successes.includes(String(answer.status))) {
      problems.push(`${name}: ${answer.status} ${answer.text.slice(0, 400)}`);
      continue;
    }
    const schema = operation.responses[String(answer.status)]?.content?.['application/json']?.schema;
    const error = !schema ? null : isJson(answer) ? check(schema, answer.body) : `a JSON answer is documented, got ${answer.headers.get('content-type')}`;
    if (error) {
      problems.push(`${name}: the answer does not fit its schema: ${error}`);
      continue;
    }
    passed++;
    const creator = method === 'post' && !/\{/.test(path);
    if ((creator || !made.has(path)) && answer.body && typeof answer.body === 'object') made.set(path, answer.body);
    if (id === 'createSession') session = { session_id: answer.body.session_id, engagement_id: body.engagement_id };
    for (const step of SETUP_AFTER[id] ?? []) {
      const done = await svc.request('POST', fill(step) ?? step, { key: tenant.apiKey });
      if (!done.status.toString().startsWith('2')) problems.push(`${name}: then POST ${step}: ${done.status} ${done.text.slice(0, 300)}`);
    }
  }
  t.diagnostic(`sent ${sent} operations, ${passed} as documented`);
  assert.deepEqual(problems, []);
});

/** The example experiment's variants with rules made for them: the first (the control) active, the others drafts, all on the example's event. */
async function experimentVariants(svc: Awaited<ReturnType<typeof startTestService>>, key: string, variants: Array<Record<string, unknown>>) {
  return Promise.all(
    variants.map(async (variant, index) => {
      const rule = await svc.request('POST', '/api/v1/admin/rules', {
        key,
        body: { name: String(variant.name), event_name: 'purchase_completed', status: index === 0 ? 'active' : 'draft', effects: [{ type: 'award_points', points: 10 * (index + 1) }] },
      });
      assert.equal(rule.status, 201, rule.text);
      return { ...variant, subject_id: rule.body.id };
    }),
  );
}

/** Opens an event stream and closes it once its head has come: the content type, or the status and body of a refusal. */
async function openStream(url: string, headers: Record<string, string>): Promise<string> {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal });
  if (response.status !== 200) return `${response.status} ${(await response.text()).slice(0, 300)}`;
  const type = response.headers.get('content-type') ?? '';
  controller.abort();
  await response.body?.cancel().catch(() => undefined);
  return type.split(';')[0];
}

function isJson(answer: TestResponse): boolean {
  return (answer.headers.get('content-type') ?? '').includes('json');
}

function singular(collection: string): string {
  const last = collection.split('/').pop() ?? '';
  return last.endsWith('s') ? last.slice(0, -1) : last;
}

/**
 * Creators (a POST on a path without parameters) first, in the order AFTER
 * asks for; then the operations without path parameters; then those with
 * parameters, fewer first, so that what a path names exists when it is sent.
 */
function order(operations: Operation[]): Operation[] {
  const rank = (op: Operation): number => {
    const params = (op.path.match(/\{/g) ?? []).length;
    if (LAST.includes(op.id)) return 1000;
    if (AFTER_READS.includes(op.id)) return 2.5;
    if (op.method === 'post' && params === 0) return 0;
    return 1 + params * 2 + (op.method === 'get' ? 1 : 0);
  };
  const sorted = [...operations].sort((a, b) => rank(a) - rank(b));
  const creators = sorted.filter((op) => rank(op) === 0);
  const placed: Operation[] = [];
  const visit = (op: Operation, seen: Set<string>): void => {
    if (placed.includes(op) || seen.has(op.id)) return;
    seen.add(op.id);
    for (const before of AFTER[op.id] ?? []) {
      const first = creators.find((candidate) => candidate.id === before);
      if (first) visit(first, seen);
    }
    placed.push(op);
  };
  for (const op of creators) visit(op, new Set());
  return [...placed, ...sorted.filter((op) => rank(op) !== 0)];
}
