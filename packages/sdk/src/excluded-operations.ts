export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Operations the SDK leaves out on purpose, with the reason. They need an
 * admin login token (a person's password exchanged for a JWT), which belongs
 * in the tenant's dashboard, not in a server integration or a browser.
 */
/** `file`: the body sent or answered is a file streamed as it is (CSV, JSON lines), which the JSON client does not speak. */
export const EXCLUDED_OPERATIONS: ReadonlyArray<{ method: HttpMethod; path: string; reason: string; file?: true }> = [
  { method: 'POST', path: '/api/v1/auth/login', reason: 'admin login with a person\'s password: dashboard only' },
  { method: 'POST', path: '/api/v1/auth/logout', reason: 'ends a person\'s admin login token: dashboard only' },
  // The platform operator's routes take OPERATOR_TOKEN, a deployment secret no tenant holds (src/modules/access/operator-auth.ts).
  { method: 'GET', path: '/api/v1/operator/tenants', reason: 'the platform operator\'s route (OPERATOR_TOKEN), not a tenant\'s' },
  { method: 'GET', path: '/api/v1/operator/tenants/{tenant_id}/limits', reason: 'the platform operator\'s route (OPERATOR_TOKEN), not a tenant\'s' },
  { method: 'PATCH', path: '/api/v1/operator/tenants/{tenant_id}/limits', reason: 'the platform operator\'s route (OPERATOR_TOKEN), not a tenant\'s' },
  // The runtime's HTML page and browser assets (src/modules/runtime): a browser loads them in an iframe, the SDK has nothing to call there.
  { method: 'GET', path: '/embed/{tenantSlug}/{siteSlug}', reason: 'the runtime page (HTML) for an iframe, not an API' },
  { method: 'GET', path: '/embed-demo/{tenantSlug}/{siteSlug}', reason: 'a demo host page (HTML, development only), not an API' },
  { method: 'GET', path: '/embed/assets/runtime.js', reason: 'the runtime page\'s script, not an API' },
  { method: 'GET', path: '/embed/assets/runtime.css', reason: 'the runtime page\'s stylesheet, not an API' },
  // Files (src/modules/files): the body of an upload and of a download is the file itself, streamed; the client speaks JSON.
  { method: 'POST', path: '/api/v1/admin/imports', reason: 'the body is the file (text/csv or application/x-ndjson), streamed: send it with fetch or curl --data-binary', file: true },
  { method: 'POST', path: '/api/v1/admin/imports/dry-run', reason: 'the body is the file (text/csv or application/x-ndjson), streamed: send it with fetch or curl --data-binary', file: true },
  { method: 'GET', path: '/api/v1/admin/exports/{export_id}/file', reason: 'the answer is the file (CSV or JSON lines), streamed: fetch file_url', file: true },
];
