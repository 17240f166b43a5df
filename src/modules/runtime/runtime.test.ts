import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { demoEngagement } from '../../../scripts/demo-seed.js';

/** The runtime module's HTTP side without a browser (test/browser drives the page itself). */
test('runtime pages: documented, cached assets, HTML errors, no demo host page in production', async (t) => {
  const svc = await startTestService(t, { config: { RATE_LIMIT_IP_PER_MINUTE: '30' } });
  const tenant = await svc.createTenant();
  // The demo definition names badges and a reward this tenant lacks: refused with what is missing.
  const unseeded = await svc.request('POST', '/api/v1/admin/engagements', { key: tenant.apiKey, body: demoEngagement() });
  assert.equal(unseeded.status, 422, unseeded.text);
  assert.match(unseeded.body.detail, /spring-coupon|lucky-spinner|quiz-master/);

  const plain = { name: 'Plain', site_slug: 'plain', allow_anonymous_sessions: true, activities: [] };
  const engagement = await svc.request('POST', '/api/v1/admin/engagements', { key: tenant.apiKey, body: plain });
  assert.equal(engagement.status, 201, engagement.text);
  assert.equal((await svc.request('POST', `/api/v1/admin/engagements/${engagement.body.id}/publish`, { key: tenant.apiKey })).status, 200);

  await t.test('the page and its assets are in the OpenAPI document as public HTML routes', async () => {
    const spec = (await svc.request('GET', '/openapi.json')).body;
    const page = spec.paths['/embed/{tenantSlug}/{siteSlug}'].get;
    assert.deepEqual(page.security, []);
    assert.ok(page.responses['200'].content['text/html']);
    assert.ok(page.responses['404'].content['text/html']);
    assert.ok(spec.paths['/embed/assets/runtime.js'].get);
    assert.ok(spec.paths['/embed-demo/{tenantSlug}/{siteSlug}'].get);
  });

  await t.test('the page names its versioned assets; a versioned asset is immutable, an ETag answers 304', async () => {
    const page = await svc.request('GET', `/embed/${tenant.slug}/plain`);
    assert.equal(page.status, 200);
    assert.match(page.text, /<title>Plain<\/title>/);
    const version = /runtime\.js\?v=([A-Za-z0-9_-]+)/.exec(page.text)?.[1];
    assert.ok(version);
    const script = await svc.request('GET', `/embed/assets/runtime.js?v=${version}`);
    assert.equal(script.status, 200);
    assert.match(script.headers.get('cache-control') ?? '', /immutable/);
    const again = await svc.request('GET', '/embed/assets/runtime.js', { headers: { 'if-none-match': script.headers.get('etag')! } });
    assert.equal(again.status, 304);
    const css = await svc.request('GET', `/embed/assets/runtime.css?v=${version}`);
    assert.match(css.headers.get('content-type') ?? '', /^text\/css/);
  });

  await t.test('the demo host page frames embed_base only, with a nonce script; a bad embed_base is an HTML 400', async () => {
    const host = await svc.request('GET', `/embed-demo/${tenant.slug}/plain?embed_base=${encodeURIComponent('http://127.0.0.1:9')}`);
    assert.equal(host.status, 200);
    assert.match(host.headers.get('content-security-policy') ?? '', /frame-src http:\/\/127\.0\.0\.1:9;/);
    assert.match(host.headers.get('content-security-policy') ?? '', /script-src 'nonce-/);
    const bad = await svc.request('GET', `/embed-demo/${tenant.slug}/plain?embed_base=javascript:alert(1)`);
    assert.equal(bad.status, 400);
    assert.match(bad.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(bad.text, /address is not valid/);
  });

  await t.test('past the per-address limit the page is an HTML 429 with Retry-After', async () => {
    let last = await svc.request('GET', `/embed/${tenant.slug}/plain`);
    for (let i = 0; i < 40 && last.status !== 429; i++) last = await svc.request('GET', `/embed/${tenant.slug}/plain`);
    assert.equal(last.status, 429);
    assert.match(last.headers.get('content-type') ?? '', /^text\/html/);
    assert.ok(Number(last.headers.get('retry-after')) > 0);
    assert.match(last.text, /Too many requests/);
  });
});

test('no demo host page in production', async (t) => {
  const svc = await startTestService(t, { config: { APP_ENV: 'production', JWT_SECRET: 'x'.repeat(40) } });
  const tenant = await svc.createTenant();
  const response = await svc.request('GET', `/embed-demo/${tenant.slug}/plain`);
  assert.equal(response.status, 404);
});

test('a preview page is served for any site, marked as a preview, framed by the service only', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const page = await svc.request('GET', `/embed/${tenant.slug}/never-published?preview=1&locale=de`);
  assert.equal(page.status, 200, page.text);
  assert.match(page.text, /data-preview="true"/);
  assert.match(page.text, /<p class="lk-preview-marker" role="note" data-role="preview-marker">Vorschau — Testdaten/);
  assert.match(page.headers.get('content-security-policy') ?? '', /frame-ancestors 'self'$/);
  const plain = await svc.request('GET', `/embed/${tenant.slug}/never-published`);
  assert.equal(plain.status, 404);
  assert.doesNotMatch(plain.text, /preview-marker/);
});
