import { randomBytes } from 'node:crypto';
import type { PageTexts } from './page-texts.js';

/**
 * The HTML the runtime module serves: the runtime shell, its error page and
 * the demo host page, with their Content-Security-Policy. Every value put
 * into HTML is escaped here; nothing else builds markup on the server.
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** JSON safe inside a `<script>` element (no `</script>`, no HTML comment openers). */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/** Any page may embed an engagement unless it names its host origins (`embed_origins`). */
export const DEFAULT_FRAME_ANCESTORS = '*';

/**
 * The runtime page's policy: its own script and style only, calls to its own
 * origin only, images from anywhere over https (badge images), no plugins,
 * no forms posting elsewhere, and framing by the engagement's host origins.
 * When the engagement names its host origins, the service's own origin is
 * added: the console's live preview frames the page from there
 * (docs/decisions/console.md, "Engagements"), and nothing else on that origin
 * frames it in production.
 */
export function runtimeCsp(frameAncestors: string[] | null): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' https: data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${frameAncestors && frameAncestors.length ? [...new Set(["'self'", ...frameAncestors])].join(' ') : DEFAULT_FRAME_ANCESTORS}`,
  ].join('; ');
}

interface ShellInput {
  title: string;
  tenantSlug: string;
  siteSlug: string;
  assetVersion: string;
  language: string;
  texts: PageTexts;
  /** A draft's preview (the console's editor): marked on the page, and the runtime loads the draft for its preview session. */
  preview?: boolean;
}

export function runtimeShell(input: ShellInput): string {
  const v = encodeURIComponent(input.assetVersion);
  const { texts: t, language } = input;
  return `<!doctype html>
<html lang="${escapeHtml(language)}" class="lk-page">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(input.title)}</title>
<link rel="stylesheet" href="/embed/assets/runtime.css?v=${v}">
<script defer src="/embed/assets/runtime.js?v=${v}"></script>
</head>
<body>
${input.preview ? `<p class="lk-preview-marker" role="note" data-role="preview-marker">${escapeHtml(t.previewMarker)}</p>\n` : ''}<main id="loyalty-runtime" class="lk-runtime" data-tenant-slug="${escapeHtml(input.tenantSlug)}" data-site-slug="${escapeHtml(input.siteSlug)}"${input.preview ? ' data-preview="true"' : ''} aria-busy="true">
<p class="lr-loading">${escapeHtml(t.loading)}</p>
<noscript><p>${escapeHtml(t.needsJavaScript)}</p></noscript>
</main>
</body>
</html>
`;
}

export interface PageError {
  code: string;
  title: string;
  message: string;
}

/** A whole-page message, in the runtime's look, for when there is nothing to run. */
export function errorPage(error: PageError, language: string): string {
  return `<!doctype html>
<html lang="${escapeHtml(language)}" class="lk-page">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(error.title)}</title>
<link rel="stylesheet" href="/embed/assets/runtime.css">
</head>
<body>
<main id="loyalty-runtime" class="lk-runtime" aria-busy="false">
<div class="lr-page-error" role="alert" data-code="${escapeHtml(error.code)}">
<h1>${escapeHtml(error.title)}</h1>
<p>${escapeHtml(error.message)}</p>
</div>
</main>
</body>
</html>
`;
}

export function notAvailable(t: PageTexts): Omit<PageError, 'code'> {
  return { title: t.notAvailableTitle, message: t.notAvailableMessage };
}

interface DemoHostInput {
  tenantSlug: string;
  siteSlug: string;
  engagementId: string | null;
  embedOrigin: string;
}

/**
 * A stand-in for a tenant's web page (development and test only): it embeds
 * the runtime in an iframe, passes on a session given in its own fragment
 * (`#session=…`), sizes the iframe from `runtime:resize`, and lists the
 * messages it receives (also kept in `window.loyaltyMessages`).
 */
export function demoHostPage(input: DemoHostInput): { html: string; csp: string } {
  const nonce = randomBytes(16).toString('base64');
  const query = input.engagementId ? `?engagement_id=${encodeURIComponent(input.engagementId)}` : '';
  const embedUrl = `${input.embedOrigin}/embed/${encodeURIComponent(input.tenantSlug)}/${encodeURIComponent(input.siteSlug)}${query}`;
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Demo host page</title>
<style nonce="${nonce}">
body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f1f5f9; color: #0f172a; }
header { background: #0f172a; color: #fff; padding: 12px 24px; }
header h1 { margin: 0; font-size: 1.3rem; }
.layout { display: grid; grid-template-columns: minmax(0, 2fr) minmax(220px, 1fr); align-items: start; gap: 16px; padding: 16px 24px; }
@media (max-width: 720px) { .layout { grid-template-columns: minmax(0, 1fr); } }
iframe { width: 100%; border: 1px solid #cbd5e1; border-radius: 12px; background: #fff; min-height: 400px; }
aside { background: #fff; border: 1px solid #cbd5e1; border-radius: 12px; padding: 12px 16px; }
aside h2 { font-size: 1rem; margin: 0 0 8px; }
#messages { font: 13px/1.4 ui-monospace, monospace; padding-left: 20px; }
</style>
</head>
<body>
<header><h1>Demo shop</h1><p>This page plays the tenant's website. The engagement below runs in an iframe from ${escapeHtml(input.embedOrigin)}.</p></header>
<div class="layout">
<iframe id="engagement" title="Engagement" height="760"></iframe>
<aside><h2>Messages from the runtime</h2><ol id="messages" aria-live="polite"></ol></aside>
</div>
<script nonce="${nonce}">
(function () {
  var embedUrl = ${scriptJson(embedUrl)};
  var embedOrigin = ${scriptJson(input.embedOrigin)};
  var frame = document.getElementById('engagement');
  var list = document.getElementById('messages');
  var session = new URLSearchParams(location.hash.slice(1)).get('session');
  if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  frame.src = embedUrl + (session ? '#session=' + encodeURIComponent(session) : '');
  window.loyaltyMessages = [];
  window.addEventListener('message', function (event) {
    if (event.origin !== embedOrigin || event.source !== frame.contentWindow) return;
    var data = event.data;
    if (!data || data.source !== 'loyalty-runtime') return;
    window.loyaltyMessages.push(data);
    if (data.type === 'runtime:resize') { frame.height = String(Math.max(400, Math.min(4000, data.height + 24))); return; }
    var item = document.createElement('li');
    var summary = data.type === 'activity:completed' ? ' ' + data.activity_type + ' ' + data.activity_id + ' (+' + data.points_awarded + ' points)' : data.type === 'runtime:error' ? ' ' + data.code : '';
    item.textContent = data.type + summary;
    item.setAttribute('data-type', data.type);
    list.appendChild(item);
  });
})();
</script>
</body>
</html>
`;
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    `frame-src ${input.embedOrigin}`,
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  return { html, csp };
}
