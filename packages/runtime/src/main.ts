import './runtime.css';
import { HostMessenger, hostOrigin } from './messages.js';
import { i18n } from './i18n.js';
import { mount } from './mount.js';
import { themeFromQuery } from './theme.js';

/**
 * The embed page's entry point. The HTML shell served at
 * `/embed/{tenantSlug}/{siteSlug}` holds `<main id="loyalty-runtime">` with
 * the site in data attributes. A session comes from the host in the URL
 * fragment (`#session=<session_id>`, never sent to any server, removed from
 * the address at once); without one, the runtime asks for an anonymous
 * session when the engagement allows it.
 *
 * The embed URL may also name the language (`locale=de`) and theme variables
 * (`lk-color-accent=%230f766e`); see i18n.ts and theme.ts.
 */

/** Reads `#session=…` once and removes the fragment from the address bar and history. */
function takeSessionFromFragment(): string | null {
  const fragment = new URLSearchParams(location.hash.replace(/^#/, ''));
  const session = fragment.get('session');
  if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  return session && session.length <= 512 ? session : null;
}

function watchHeight(messenger: HostMessenger): void {
  if (!messenger.embedded || typeof ResizeObserver !== 'function') return;
  let last = 0;
  new ResizeObserver(() => {
    const height = Math.ceil(document.body.getBoundingClientRect().height);
    if (height !== last) {
      last = height;
      messenger.send({ type: 'runtime:resize', height });
    }
  }).observe(document.body);
}

function main(): void {
  const element = document.getElementById('loyalty-runtime');
  if (!element) return;
  const parent = window.parent !== window ? window.parent : null;
  const messenger = new HostMessenger(parent, hostOrigin(location, document.referrer));
  const sessionId = takeSessionFromFragment();
  const query = new URLSearchParams(location.search);
  watchHeight(messenger);
  const mounted = mount(element, {
    baseUrl: element.dataset.apiBase || location.origin,
    tenantSlug: element.dataset.tenantSlug ?? '',
    siteSlug: element.dataset.siteSlug ?? '',
    engagementId: query.get('engagement_id'),
    sessionId,
    // A draft's preview (the service marks the page): the draft is read with the preview session.
    preview: element.dataset.preview === 'true',
    // Named here, it wins over the participant's language (which the service gives) and the browser's.
    locale: query.get('locale') || element.dataset.locale || null,
    theme: themeFromQuery(query),
    // The page is the runtime's own: the theme goes on <html>, so the whole frame follows it.
    themeTarget: document.documentElement,
    messenger,
  });
  document.documentElement.lang = i18n().language;
  // The participant's language, which the session tells, may have replaced the browser's.
  void mounted.then(() => {
    document.documentElement.lang = i18n().language;
  });
}

main();
