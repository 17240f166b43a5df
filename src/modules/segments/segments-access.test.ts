import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keyWithScopes, startTestService } from '../../../test/helper.js';
import { BASE, ok, seedSegmentFacts } from './testing.js';

/**
 * Who may filter on what and see what: personal facts only with read:pii,
 * masked filter values and members without it; validation errors with their
 * paths; pagination; tenants apart; delete refused while something uses the segment.
 */
test('segments: personal data, validation, pagination, tenants, deletion', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  await seedSegmentFacts(svc, tenant);
  const owner = tenant.apiKey;
  const { key: plain } = await keyWithScopes(svc, tenant, ['admin']);

  await t.test('personal facts: used with read:pii, refused without it, masked when read without it', async () => {
    const filter = { all: [{ fact: 'profile.email', operator: 'equals', value: 'ada@example.org' }], any: [{ fact: 'custom.card', operator: 'in', value: ['AB-1', 'ZZ-9'] }] };
    const created = await ok(svc.request('POST', BASE, { key: owner, body: { name: 'Ada by email', filter } }), 201);
    assert.deepEqual(created.body.filter, filter, 'read:pii sees the values');

    const refused = await svc.request('POST', `${BASE}/preview`, { key: plain, body: { filter } });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.code, 'SEGMENT_PERSONAL_FACT');
    assert.deepEqual(refused.body.errors.map((e: { path: string }) => e.path), ['/filter/all/0/fact', '/filter/any/0/fact']);
    assert.equal((await svc.request('POST', BASE, { key: plain, body: { name: 'x', filter } })).status, 403);
    assert.equal((await svc.request('PATCH', `${BASE}/${created.body.id}`, { key: plain, body: { filter } })).status, 403);

    const read = await ok(svc.request('GET', `${BASE}/${created.body.id}`, { key: plain }));
    assert.deepEqual(read.body.filter, {
      all: [{ fact: 'profile.email', operator: 'equals', value: 'a***@example.org' }],
      any: [{ fact: 'custom.card', operator: 'in', value: ['***', '***'] }],
    });
    const listed = await ok(svc.request('GET', BASE, { key: plain }));
    assert.ok(!JSON.stringify(listed.body).includes('ada@example.org'), 'the list masks too');
    // Renaming needs no personal data; the stored filter keeps its values.
    await ok(svc.request('PATCH', `${BASE}/${created.body.id}`, { key: plain, body: { name: 'Ada (renamed)' } }));
    assert.deepEqual((await ok(svc.request('GET', `${BASE}/${created.body.id}`, { key: owner }))).body.filter, filter);
  });

  await t.test('sample and members are masked without read:pii', async () => {
    const filter = { all: [{ fact: 'profile.country_code', operator: 'equals', value: 'DE' }] };
    const masked = await ok(svc.request('POST', `${BASE}/preview`, { key: plain, body: { filter } }));
    assert.equal(masked.body.sample[0].email, 'a***@example.org');
    assert.equal(masked.body.sample[0].custom.card, '***');
    assert.equal(masked.body.sample[0].masked, true);
    const full = await ok(svc.request('POST', `${BASE}/preview`, { key: owner, body: { filter } }));
    assert.equal(full.body.sample[0].email, 'ada@example.org');
    const segment = await ok(svc.request('POST', BASE, { key: plain, body: { name: 'Germany', filter } }), 201);
    const members = await ok(svc.request('GET', `${BASE}/${segment.body.id}/members`, { key: plain }));
    assert.equal(members.body.members[0].email, 'a***@example.org');
    assert.equal(members.body.members[0].first_name, 'Ad***');
  });

  await t.test('validation errors name each field, with the allowed values', async () => {
    const bad = await svc.request('POST', `${BASE}/preview`, {
      key: owner,
      body: {
        filter: {
          all: [
            { fact: 'tier', operator: 'equals', value: 'platinum' },
            { fact: 'event_count', operator: 'gte', value: 3 },
            { fact: 'lifetime_points', operator: 'contains', value: 3 },
            { fact: 'custom.nope', operator: 'exists' },
            { fact: 'available_points', operator: 'gt', value: 'many' },
            { fact: 'profile.city', operator: 'exists', value: 'Berlin' },
          ],
          any: [{ fact: 'profile.city', operator: 'in', value: [] }, { fact: 'badges', operator: 'contains', value: 'vip', within_days: 3 }],
        },
      },
    });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.code, 'SEGMENT_FILTER_INVALID');
    const byPath = Object.fromEntries(bad.body.errors.map((e: { path: string; allowed?: unknown[] }) => [e.path, e]));
    assert.deepEqual(Object.keys(byPath).sort(), [
      '/filter/all/0/value',
      '/filter/all/1/event_name',
      '/filter/all/1/within_days',
      '/filter/all/2/operator',
      '/filter/all/3/fact',
      '/filter/all/4/value',
      '/filter/all/5/value',
      '/filter/any/0/value',
      '/filter/any/1/within_days',
    ]);
    assert.deepEqual(byPath['/filter/all/0/value'].allowed, ['silver', 'gold']);
    assert.deepEqual(byPath['/filter/all/2/operator'].allowed, ['equals', 'not_equals', 'gt', 'gte', 'lt', 'lte']);
    assert.ok(byPath['/filter/all/3/fact'].allowed.includes('custom.visits'));
    assert.match(bad.body.detail, /^\/filter\/all\/0\/value/);
    // The schema's own checks keep their paths too: an unknown operator, too many conditions, a window too long.
    const schema = await svc.request('POST', BASE, {
      key: owner,
      body: { name: '', filter: { all: [{ fact: 'tier', operator: 'like', value: 'x' }, { fact: 'event_count', event_name: 'p', within_days: 4000, operator: 'gt', value: 1 }] } },
    });
    assert.equal(schema.status, 400, schema.text);
    const paths = schema.body.errors.map((e: { path: string }) => e.path);
    for (const path of ['/name', '/filter/all/0/operator', '/filter/all/1/within_days']) assert.ok(paths.includes(path), `${path} in ${paths}`);
    const many = await svc.request('POST', `${BASE}/preview`, { key: owner, body: { filter: { all: Array.from({ length: 21 }, () => ({ fact: 'tier', operator: 'exists' })) } } });
    assert.equal(many.status, 400);
  });

  await t.test('the facts catalogue lists standard, custom and program facts', async () => {
    const facts = (await ok(svc.request('GET', `${BASE}/facts`, { key: plain }))).body.facts as Array<{ fact: string; personal: boolean; operators: string[]; needs_event: boolean; allowed_values?: string[] }>;
    const byFact = new Map(facts.map((f) => [f.fact, f]));
    assert.equal(byFact.get('profile.email')!.personal, true);
    assert.equal(byFact.get('profile.city')!.personal, false);
    assert.equal(byFact.get('custom.card')!.personal, true);
    assert.equal(byFact.get('custom.visits')!.personal, false);
    assert.equal(byFact.get('event_count')!.needs_event, true);
    assert.deepEqual(byFact.get('tier')!.allowed_values, ['silver', 'gold']);
    assert.deepEqual(byFact.get('badges')!.operators, ['contains', 'not_contains']);
    assert.ok(byFact.has('streak.login'));
    for (const name of ['days_since_last_activity', 'days_since_joined', 'referrals_converted', 'contests_entered', 'available_points', 'lifetime_points']) assert.ok(byFact.has(name), name);
  });

  await t.test('lists and members page with cursors', async () => {
    const all = await ok(svc.request('GET', `${BASE}?limit=1`, { key: owner }));
    assert.equal(all.body.segments.length, 1);
    const second = await ok(svc.request('GET', `${BASE}?limit=1&cursor=${all.body.next_cursor}`, { key: owner }));
    assert.notEqual(second.body.segments[0].id, all.body.segments[0].id);
    const everyone = await ok(svc.request('POST', BASE, { key: owner, body: { name: 'Everyone', filter: {} } }), 201);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await ok(svc.request('GET', `${BASE}/${everyone.body.id}/members?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { key: owner }));
      assert.ok(page.body.members.length <= 2);
      seen.push(...page.body.members.map((m: { participant_id: string }) => m.participant_id));
      cursor = page.body.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, ['ada', 'bob', 'cyd']);
    assert.equal((await svc.request('GET', `${BASE}/${everyone.body.id}/members?cursor=not-a-cursor`, { key: owner })).status, 400);
  });

  await t.test('writes are in the audit log; previews are not', async () => {
    const audit = await svc.sql<{ action: string; resource_type: string; resource_id: string | null; method: string }>(
      'SELECT action, resource_type, resource_id, method FROM audit_log WHERE tenant_id = $1 AND resource_type = $2 ORDER BY occurred_at',
      [tenant.tenantId, 'segments'],
    );
    assert.ok(audit.some((row) => row.method === 'POST' && /^seg_/.test(row.resource_id ?? '')), JSON.stringify(audit));
    assert.ok(audit.some((row) => row.method === 'PATCH'));
    assert.ok(!audit.some((row) => row.action === 'preview'), 'a preview is a read');
    // A personal value of a filter (written by a read:pii holder) is redacted in the log, whoever reads it.
    const logged = await svc.sql<{ entry: string }>('SELECT (before::text || after::text || details::text) AS entry FROM audit_log WHERE tenant_id = $1 AND resource_type = $2', [tenant.tenantId, 'segments']);
    assert.ok(logged.some((row) => row.entry.includes('profile.email')), 'the email filter is in the log');
    for (const row of logged) {
      assert.ok(!row.entry.includes('ada@example.org'), row.entry);
      assert.ok(!row.entry.includes('AB-1'), row.entry);
    }
    assert.ok(logged.some((row) => row.entry.includes('[redacted]')));
    // Non-personal values stay readable.
    assert.ok(logged.some((row) => row.entry.includes('"DE"')));
    const log = await ok(svc.request('GET', '/api/v1/admin/audit-log?limit=100', { key: plain }));
    assert.ok(!JSON.stringify(log.body).includes('ada@example.org'));
  });

  await t.test('another tenant can neither see nor use the segment', async () => {
    const other = await svc.createTenant();
    const mine = await ok(svc.request('POST', BASE, { key: owner, body: { name: 'Mine', filter: {} } }), 201);
    const id = mine.body.id;
    for (const [method, path] of [
      ['GET', `${BASE}/${id}`],
      ['GET', `${BASE}/${id}/size`],
      ['GET', `${BASE}/${id}/members`],
      ['PATCH', `${BASE}/${id}`],
      ['DELETE', `${BASE}/${id}`],
      ['POST', `${BASE}/${id}/refresh`],
    ] as const) {
      const answer = await svc.request(method, path, { key: other.apiKey, ...(method === 'PATCH' ? { body: { name: 'stolen' } } : {}) });
      assert.equal(answer.status, 404, `${method} ${path}: ${answer.text}`);
      assert.equal(answer.body.code, 'SEGMENT_NOT_FOUND');
    }
    assert.deepEqual((await ok(svc.request('GET', BASE, { key: other.apiKey }))).body.segments, []);
    // Its own preview of everyone sees none of this tenant's participants.
    assert.equal((await ok(svc.request('POST', `${BASE}/preview`, { key: other.apiKey, body: { filter: {} } }))).body.size, 0);
  });

  await t.test('a segment a multiplier uses cannot be deleted (409 SEGMENT_IN_USE naming it)', async () => {
    const segment = await ok(svc.request('POST', BASE, { key: owner, body: { name: 'Targeted', filter: { all: [{ fact: 'tier', operator: 'exists' }] } } }), 201);
    const id = segment.body.id;
    // Any table with a segment_id holds its segment in use: a multiplier row (its module's routes may not set it on every tree).
    await svc.sql(
      `INSERT INTO points_multipliers (tenant_id, id, multiplier, starts_at, ends_at, event_type, created_at, segment_id)
       VALUES ($1, 'mul_segmentuser', 2, now(), now() + interval '1 day', 'purchase', now(), $2)`,
      [tenant.tenantId, id],
    ).catch((error: Error) => t.diagnostic(`points_multipliers insert: ${error.message}`));
    const held = await svc.sql("SELECT 1 FROM points_multipliers WHERE tenant_id = $1 AND segment_id = $2", [tenant.tenantId, id]).catch(() => []);
    if (held.length > 0) {
      const refused = await svc.request('DELETE', `${BASE}/${id}`, { key: owner });
      assert.equal(refused.status, 409, refused.text);
      assert.equal(refused.body.code, 'SEGMENT_IN_USE');
      assert.match(refused.body.detail, /points_multiplier mul_segmentuser/);
      assert.equal((await ok(svc.request('GET', `${BASE}/${id}`, { key: owner }))).body.used_by.length, 1);
      await svc.sql('DELETE FROM points_multipliers WHERE tenant_id = $1 AND segment_id = $2', [tenant.tenantId, id]);
    } else t.diagnostic('points_multipliers has no segment_id on this tree: the in-use refusal is checked through a rule only');
    // A rule whose conditions name the segment.
    await svc.sql(
      `INSERT INTO earn_rules (tenant_id, id, name, status, trigger, event_name, conditions, effects, caps, created_at, updated_at)
       VALUES ($1, 'rul_segmentuser', 'Members bonus', 'paused', 'event', 'purchase', $2::jsonb, '[]'::jsonb, '{}'::jsonb, now(), now())`,
      [tenant.tenantId, JSON.stringify({ all: [{ fact: 'participant.segment', operator: 'in', value: [id] }] })],
    ).catch((error: Error) => t.diagnostic(`earn_rules insert: ${error.message}`));
    const rules = await svc.sql('SELECT 1 FROM earn_rules WHERE tenant_id = $1 AND id = $2', [tenant.tenantId, 'rul_segmentuser']);
    if (rules.length > 0) {
      const refused = await svc.request('DELETE', `${BASE}/${id}`, { key: owner });
      assert.equal(refused.status, 409, refused.text);
      assert.match(refused.body.detail, /rule "Members bonus"/);
      assert.deepEqual(refused.body.used_by, [{ type: 'rule', id: 'rul_segmentuser', name: 'Members bonus', live: false }]);
      await svc.sql('DELETE FROM earn_rules WHERE tenant_id = $1 AND id = $2', [tenant.tenantId, 'rul_segmentuser']);
    }
    await ok(svc.request('DELETE', `${BASE}/${id}`, { key: owner }), 204);
    assert.equal((await svc.request('GET', `${BASE}/${id}`, { key: owner })).status, 404);
  });
});
