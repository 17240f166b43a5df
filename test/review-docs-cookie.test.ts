import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from './helper.js';

/**
 * Review finding 11 (issue 32): `/docs` (Swagger UI) answers with a
 * Content-Security-Policy that forbids framing and inline scripts, with
 * `X-Frame-Options: DENY` and `X-Content-Type-Options: nosniff`, and the page
 * still loads every script it names from the service. The console cookie is
 * `Secure` whenever PUBLIC_BASE_URL is https, even when the request reached the
 * service over plain http (a TLS-terminating proxy without TRUST_PROXY).
 */

/** The directives of a Content-Security-Policy header, by name. */
function directives(csp: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const part of csp.split(';')) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) found.set(name.toLowerCase(), values);
  }
  return found;
}

function assertDocsHeaders(response: { headers: Headers }, what: string): void {
  const csp = response.headers.get('content-security-policy');
  assert.ok(csp, `${what}: a Content-Security-Policy`);
  const policy = directives(csp);
  assert.deepEqual(policy.get('frame-ancestors'), ["'none'"], `${what}: ${csp}`);
  assert.deepEqual(policy.get('script-src'), ["'self'"], `${what}: scripts from the service only, none inline: ${csp}`);
  assert.deepEqual(policy.get('object-src'), ["'none'"], `${what}: ${csp}`);
  assert.ok(policy.has('default-src') && policy.has('style-src') && policy.has('base-uri'), `${what}: ${csp}`);
  assert.equal(response.headers.get('x-frame-options'), 'DENY', what);
  assert.equal(response.headers.get('x-content-type-options'), 'nosniff', what);
}

async function signInCookie(svc: TestService): Promise<string> {
  const tenant = await svc.createTenant();
  const response = await svc.request('POST', '/api/v1/console/session', { body: { email: tenant.adminEmail, password: tenant.adminPassword } });
  assert.equal(response.status, 200, response.text);
  const set = response.headers.get('set-cookie') ?? '';
  assert.match(set, /^lk_console=/);
  return set;
}

test('review finding 11: /docs is served with a CSP, no framing and nosniff, and still works', { timeout: 120_000 }, async (t) => {
  const svc = await startTestService(t);

  for (const path of ['/docs', '/docs/']) {
    const page = await svc.request('GET', path);
    assert.equal(page.status, 200, `${path}: ${page.status}`);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(page.text, /<div id="swagger-ui">/);
    assertDocsHeaders(page, path);
  }

  // The page's scripts: every one is a file of the service (the policy allows no inline script), and each loads.
  const page = await svc.request('GET', '/docs');
  const scripts = [...page.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
  assert.ok(scripts.length >= 3, page.text);
  for (const [, attributes, body] of scripts) {
    const src = /\bsrc="([^"]+)"/.exec(attributes);
    assert.ok(src, `an inline script would be refused by script-src 'self': ${attributes}`);
    assert.equal(body.trim(), '', 'no inline script body');
    const url = new URL(src[1], `${svc.baseUrl}/docs`);
    assert.equal(url.origin, svc.baseUrl, `${src[1]} is served by the service itself`);
    const script = await svc.request('GET', url.pathname);
    assert.equal(script.status, 200, url.pathname);
    assert.match(script.headers.get('content-type') ?? '', /javascript/, url.pathname);
    assertDocsHeaders(script, url.pathname);
  }
  const styles = [...page.text.matchAll(/<link rel="stylesheet"[^>]*href="([^"]+)"/g)];
  assert.ok(styles.length >= 1);
  for (const [, href] of styles) {
    const style = await svc.request('GET', new URL(href, `${svc.baseUrl}/docs`).pathname);
    assert.equal(style.status, 200, href);
  }
  // The specification the page fetches (connect-src 'self').
  const spec = await svc.request('GET', '/docs/json');
  assert.equal(spec.status, 200);
  assert.ok(spec.body.paths);
  assertDocsHeaders(spec, '/docs/json');

  // The API's own answers are not given the page's policy.
  const health = await svc.request('GET', '/openapi.json');
  assert.equal(health.headers.get('x-frame-options'), null);
});

test('review finding 11: with an https PUBLIC_BASE_URL the console cookie is Secure over plain http; without it, the request decides', { timeout: 120_000 }, async (t) => {
  const behindProxy = await startTestService(t, { config: { PUBLIC_BASE_URL: 'https://loyalty.example' } });
  const secure = await signInCookie(behindProxy);
  assert.match(secure, /;\s*Secure/i, secure);
  assert.match(secure, /HttpOnly/i);
  assert.match(secure, /SameSite=Strict/i);
  // Signing out clears the cookie with the same attributes.
  const tenant = await behindProxy.createTenant();
  const signedIn = await behindProxy.request('POST', '/api/v1/console/session', { body: { email: tenant.adminEmail, password: tenant.adminPassword } });
  const cookie = /lk_console=[^;]*/.exec(signedIn.headers.get('set-cookie') ?? '')![0];
  const out = await behindProxy.request('DELETE', '/api/v1/console/session', { headers: { cookie, 'x-csrf-token': signedIn.body.csrf_token } });
  assert.equal(out.status, 204, out.text);
  assert.match(out.headers.get('set-cookie') ?? '', /;\s*Secure/i);

  const plain = await startTestService(t);
  assert.equal(plain.config.publicBaseUrl, null);
  const local = await signInCookie(plain);
  assert.doesNotMatch(local, /;\s*Secure/i, 'plain http without PUBLIC_BASE_URL: today\'s rule, not Secure');

  const httpBase = await startTestService(t, { config: { PUBLIC_BASE_URL: 'http://127.0.0.1:3000' } });
  assert.doesNotMatch(await signInCookie(httpBase), /;\s*Secure/i, 'an http PUBLIC_BASE_URL keeps the request-based rule');
});
