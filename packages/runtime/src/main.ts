import './runtime.css';
import { createEngagementSession } from './sdk.js';
import { h, clear } from './dom.js';
import { explain, type Explained } from './errors.js';
import { HostMessenger, hostOrigin } from './messages.js';
import { EngagementView } from './app.js';
import { chooseLocale, i18n, useLocale } from './i18n.js';
import { applyTheme, themeFrom, themeFromQuery, type Theme } from './theme.js';
import type { EngagementSession, PublicEngagement } from './types.js';

/**
 * The runtime's entry point. The HTML shell served at
 * `/embed/{tenantSlug}/{siteSlug}` holds `<div id="loyalty-runtime">` with
 * the site in data attributes. A session comes from the host in the URL
 * fragment (`#session=<session_id>`, never sent to any server, removed from
 * the address at once); without one, the runtime asks for an anonymous
 * session when the engagement allows it.
 *
 * The embed URL may also name the language (`locale=de`) and theme variables
 * (`lk-color-accent=%230f766e`); see i18n.ts and theme.ts.
 */
interface Settings {
  apiBase: string;
  tenantSlug: string;
  siteSlug: string;
  engagementId: string | null;
  /** The explicit locale (the embed URL's `locale`), if any. */
  locale: string | null;
  /** The host's theme (`lk-*` parameters), over the engagement's `canvas.theme`. */
  theme: Theme;
}

const STORAGE_PREFIX = 'loyalty-runtime:session:';

function settingsOf(mount: HTMLElement): Settings {
  const query = new URLSearchParams(location.search);
  return {
    apiBase: mount.dataset.apiBase || location.origin,
    tenantSlug: mount.dataset.tenantSlug ?? '',
    siteSlug: mount.dataset.siteSlug ?? '',
    engagementId: query.get('engagement_id'),
    locale: query.get('locale') || mount.dataset.locale || null,
    theme: themeFromQuery(query),
  };
}

/** Reads `#session=…` once and removes the fragment from the address bar and history. */
function takeSessionFromFragment(): string | null {
  const fragment = new URLSearchParams(location.hash.replace(/^#/, ''));
  const session = fragment.get('session');
  if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  return session && session.length <= 512 ? session : null;
}

// Anonymous sessions are kept for the tab (sessionStorage), so a reload does not make a new participant.
function storedSession(key: string): string | null {
  try {
    return sessionStorage.getItem(STORAGE_PREFIX + key);
  } catch {
    return null; // Storage can be blocked in third-party iframes.
  }
}

function storeSession(key: string, value: string | null): void {
  try {
    if (value === null) sessionStorage.removeItem(STORAGE_PREFIX + key);
    else sessionStorage.setItem(STORAGE_PREFIX + key, value);
  } catch {
    // Not kept; the next reload starts a new anonymous session.
  }
}

function showError(mount: HTMLElement, messenger: HostMessenger, explained: Explained, retry: (() => void) | null): void {
  clear(mount);
  mount.setAttribute('aria-busy', 'false');
  const box = h('div', { class: 'lr-page-error', role: 'alert', 'data-code': explained.code }, h('h1', {}, explained.title), h('p', {}, explained.message));
  if (retry && explained.retryable) {
    const button = h('button', { type: 'button', class: 'lr-button lr-primary', 'data-action': 'retry' }, i18n().t.retry);
    button.addEventListener('click', retry);
    box.append(button);
  }
  mount.append(box);
  messenger.send({ type: 'runtime:error', code: explained.code, detail: explained.message });
}

async function startSession(settings: Settings, engagement: PublicEngagement, hostSession: string | null): Promise<EngagementSession> {
  const make = (sessionId?: string) =>
    createEngagementSession({ baseUrl: settings.apiBase, tenantSlug: settings.tenantSlug, siteSlug: settings.siteSlug, ...(sessionId ? { sessionId } : {}) });
  if (hostSession) {
    const sdk = make(hostSession);
    await sdk.ensureSession();
    return sdk;
  }
  if (!engagement.allow_anonymous_sessions) {
    throw Object.assign(new Error('anonymous sessions are disabled'), { status: 403, code: 'ANONYMOUS_SESSIONS_DISABLED' });
  }
  const key = `${engagement.tenant_slug}/${engagement.site_slug}/${engagement.engagement_id}`;
  const kept = storedSession(key);
  if (kept) {
    const sdk = make(kept);
    try {
      await sdk.balance(); // Proves the kept session still works.
      return sdk;
    } catch {
      storeSession(key, null);
    }
  }
  const sdk = make();
  const session = await sdk.ensureSession();
  storeSession(key, session.session_id);
  return sdk;
}

async function boot(mount: HTMLElement, messenger: HostMessenger, settings: Settings, hostSession: string | null): Promise<void> {
  clear(mount);
  mount.setAttribute('aria-busy', 'true');
  mount.append(h('p', { class: 'lr-loading' }, i18n().t.loading));
  const retry = () => void boot(mount, messenger, settings, hostSession);
  try {
    const engagement = await createEngagementSession({ baseUrl: settings.apiBase, tenantSlug: settings.tenantSlug, siteSlug: settings.siteSlug }).load();
    if (settings.engagementId && settings.engagementId !== engagement.engagement_id) {
      // The site now serves another engagement than the one the host embedded.
      throw Object.assign(new Error('engagement changed'), { status: 404, code: 'ENGAGEMENT_NOT_FOUND' });
    }
    // The tenant's theme for this engagement, under the host's.
    applyTheme(document.documentElement, { ...themeFrom(engagement.canvas?.theme, 'canvas.theme'), ...settings.theme });
    const sdk = await startSession(settings, engagement, hostSession);
    const session = await sdk.ensureSession();
    const view = new EngagementView(sdk, engagement, messenger);
    clear(mount);
    mount.append(view.element());
    await view.start();
    mount.setAttribute('aria-busy', 'false');
    messenger.send({ type: 'runtime:ready', engagement_id: engagement.engagement_id, participant_id: session.participant_id || null });
  } catch (error) {
    console.error('[loyalty-runtime]', error);
    showError(mount, messenger, explain(error), retry);
  }
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
  const mount = document.getElementById('loyalty-runtime');
  if (!mount) return;
  const parent = window.parent !== window ? window.parent : null;
  const messenger = new HostMessenger(parent, hostOrigin(location, document.referrer));
  const hostSession = takeSessionFromFragment();
  const settings = settingsOf(mount);
  // The service gives no participant locale (the host passes `locale` when it knows it).
  const translator = useLocale(chooseLocale(settings.locale, null, navigator.languages?.length ? navigator.languages : [navigator.language]));
  document.documentElement.lang = translator.language;
  applyTheme(document.documentElement, settings.theme);
  watchHeight(messenger);
  void boot(mount, messenger, settings, hostSession);
}

main();
