import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestService } from './helper.js';
import { validateEventData } from '../src/modules/webhooks/index.js';

/**
 * The JSON blocks of docs/segments.md are what the service accepts and
 * answers: the example filter is previewed, the refusal is the one the page
 * describes, and the event is what segment.entered.v1 carries. (Code blocks
 * in TypeScript are typechecked by docs-code.test.ts; JSON is checked here.)
 */
const page = fs.readFileSync(path.resolve(import.meta.dirname, '../docs/segments.md'), 'utf8');
const blocks = [...page.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => JSON.parse(match[1]));

test('docs/segments.md: every JSON block is what the service takes or answers', async (t) => {
  assert.equal(blocks.length, 3, 'docs/segments.md has three JSON blocks: the filter, the refusal, the event');
  const [filter, refusal, event] = blocks;
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const admin = async (method: string, url: string, body?: unknown) => svc.request(method, `/api/v1/admin${url}`, { key: tenant.apiKey, ...(body === undefined ? {} : { body }) });
  for (const [code, min] of [['silver', 100], ['gold', 500]] as const) {
    assert.equal((await admin('POST', '/points/tiers', { code, name: code, min_lifetime_points: min })).status, 201);
  }
  assert.equal((await admin('POST', '/badges', { code: 'vip', name: 'VIP' })).status, 201);

  await t.test('the example filter is previewed', async () => {
    const preview = await admin('POST', '/segments/preview', { filter });
    assert.equal(preview.status, 200, preview.text);
    assert.equal(preview.body.size, 0);
  });

  await t.test('the refusal is the answer to a tier the tenant does not have and an event count without its window', async () => {
    const refused = await admin('POST', '/segments/preview', {
      filter: { all: [{ fact: 'tier', operator: 'equals', value: 'platinum' }, { fact: 'event_count', event_name: 'purchase', operator: 'gte', value: 3 }] },
    });
    assert.equal(refused.status, 400, refused.text);
    const { request_id: _id, doc_url: _url, ...body } = refused.body;
    assert.deepEqual(body, refusal);
  });

  await t.test('the event is a valid segment.entered.v1 and segment.left.v1', () => {
    assert.deepEqual(validateEventData('segment.entered.v1', event), []);
    assert.deepEqual(validateEventData('segment.left.v1', event), []);
  });
});
