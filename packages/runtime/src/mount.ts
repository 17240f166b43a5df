import { createEngagementSession } from './sdk.js';
import { h, clear } from './dom.js';
import { explain, type Explained } from './errors.js';
import { HostMessenger, type HostMessage } from './messages.js';
import { EngagementView } from './app.js';
import { chooseLocale, i18n, useLocale } from './i18n.js';
import { applyTheme, themeFrom, type Theme } from './theme.js';
import type { EngagementSession, PublicEngagement } from './types.js';

/**
 * Runs a site's published engagement inside `element`: the embed page does
 * it for its own `<main>` (main.ts), and a page that holds the runtime itself
 * (the npm package) does it for any element of its own.
 */
export interface MountOptions {
  /** The service's origin, or the path a reverse proxy serves it under (the service sends no CORS headers). */
  baseUrl: string;
  tenantSlug: string;
  siteSlug: string;
  /** The engagement the host expects; the page says it is not available when the site serves another. */
  engagementId?: string | null;
  /** A server-issued session (`POST /api/v1/sessions`); without one an anonymous session is started when allowed. */
  sessionId?: string | null;
  /** The participant's language (BCP 47); see i18n.ts for the order of choice. */
  locale?: string | null;
  /** Theme variables by name without `--lk-` (`{'color-accent': '#0f766e'}`), over the engagement's `canvas.theme`. */
  theme?: Theme;
  /** Where the theme's variables are set (default: `element`; the embed page sets them on `<html>`). */
  themeTarget?: HTMLElement;
  /** Called with every message the runtime sends (the same objects an iframe posts to its host). */
  onMessage?: (message: HostMessage) => void;
  /** @internal A draft's preview: the page loads the draft of `engagementId` with the preview session in `sessionId`. */
  preview?: boolean;
  /** @internal The embed page's messenger to its parent window. */
  messenger?: HostMessenger;
}

const STORAGE_PREFIX = 'loyalty-runtime:session:';

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

async function startSession(options: MountOptions, engagement: PublicEngagement): Promise<EngagementSession> {
  const make = (sessionId?: string) =>
    createEngagementSession({
      baseUrl: options.baseUrl,
      tenantSlug: options.tenantSlug,
      siteSlug: options.siteSlug,
      ...(sessionId ? { sessionId } : {}),
      ...(options.preview && sessionId ? { previewEngagementId: engagement.engagement_id } : {}),
    });
  if (options.sessionId) {
    const sdk = make(options.sessionId);
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
      await sdk.ensureSession(); // Asks the service about it: proves the kept session still works.
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

async function boot(mount: HTMLElement, messenger: HostMessenger, options: MountOptions, themeTarget: HTMLElement): Promise<void> {
  clear(mount);
  mount.setAttribute('aria-busy', 'true');
  mount.append(h('p', { class: 'lr-loading' }, i18n().t.loading));
  const retry = () => void boot(mount, messenger, options, themeTarget);
  try {
    const previewOf = options.preview && options.sessionId && options.engagementId ? { sessionId: options.sessionId, previewEngagementId: options.engagementId } : {};
    const engagement = await createEngagementSession({ baseUrl: options.baseUrl, tenantSlug: options.tenantSlug, siteSlug: options.siteSlug, ...previewOf }).load();
    if (options.engagementId && options.engagementId !== engagement.engagement_id) {
      // The site now serves another engagement than the one the host embedded.
      throw Object.assign(new Error('engagement changed'), { status: 404, code: 'ENGAGEMENT_NOT_FOUND' });
    }
    // The tenant's theme for this engagement, under the host's.
    applyTheme(themeTarget, { ...themeFrom(engagement.canvas?.theme, 'canvas.theme'), ...(options.theme ?? {}) });
    const sdk = await startSession(options, engagement);
    const session = await sdk.ensureSession();
    // The participant's language, known now, comes after an explicit one and before the browser's.
    const chosen = chooseLocale(options.locale, session.locale, browserLanguages());
    if (chosen !== i18n().locale) {
      useLocale(chosen);
      mount.lang = i18n().language;
    }
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

function browserLanguages(): readonly string[] {
  return typeof navigator === 'undefined' ? [] : navigator.languages?.length ? navigator.languages : [navigator.language];
}

/**
 * Renders the engagement into `element` (its content is replaced). The
 * returned promise settles once the engagement is shown or an error is.
 * Style it with runtime.css (`@loyalty/runtime/runtime.css`) and `--lk-*`
 * variables on any ancestor.
 */
export function mount(element: HTMLElement, options: MountOptions): Promise<void> {
  // Until the session says the participant's language (see boot).
  useLocale(chooseLocale(options.locale, null, browserLanguages()));
  element.classList.add('lk-runtime');
  element.lang = i18n().language;
  const themeTarget = options.themeTarget ?? element;
  const theme = themeFrom(options.theme ?? {}, 'the theme option');
  applyTheme(themeTarget, theme);
  const messenger = options.messenger ?? new HostMessenger(null, '*');
  if (options.onMessage) messenger.listen(options.onMessage);
  return boot(element, messenger, { ...options, theme }, themeTarget);
}
