import { h, append, clear } from './dom.js';
import { explain } from './errors.js';
import { i18n } from './i18n.js';
import { safeImage } from './activity.js';
import { HostMessenger } from './messages.js';
import { renderWheel } from './wheel.js';
import { renderQuiz } from './quiz.js';
import type { ActivityContext } from './activity.js';
import type { CompleteResponse, EngagementSession, GateResult, PublicActivity, PublicEngagement, PublicScreen } from './types.js';

/**
 * Screens, navigation and gates around the activities. A screen's
 * `components` are free-form objects in the definition; the runtime knows
 * these `type`s and skips others:
 *
 * - `heading` / `text`: `text`
 * - `image`: `src` (https or data URL), `alt`
 * - `activity`: `activity_id` (a spin wheel or a quiz of the engagement)
 * - `balance`: the participant's points
 * - `badges`: the tenant's badges by name and image, earned ones marked (`earned_only: true` lists only those)
 * - `rewards`: the participant's claimed rewards by name, with their codes
 * - `button`: `label`, `screen_id` (goes to that screen)
 *
 * An engagement without screens shows every activity on one screen.
 *
 * The page follows the participant's live stream: points, tier, badge and
 * reward events from anywhere (the tenant's server, another tab) refresh the
 * balance, the badge and reward lists on show, and the gates, without
 * re-rendering an activity in progress.
 */
const GATE_TARGETS_MAX = 50;
/** Events of one burst (a grant and its tier change, say) are answered by one refresh. */
const LIVE_REFRESH_DELAY_MS = 250;
const LIVE_EVENT = /^(points|tier|badge|reward)\./;
/** The points' name when the tenant set none (the points module's default). */
const DEFAULT_CURRENCY_NAME = 'points';

interface ScreenState {
  screen: PublicScreen;
  gate: GateResult | null;
  tab: HTMLButtonElement;
}

export class EngagementView {
  private readonly root: HTMLElement;
  private readonly panel = h('section', { class: 'lr-screen', id: 'lr-screen', role: 'tabpanel', tabindex: -1 });
  private readonly points = h('p', { class: 'lr-points', 'aria-live': 'polite', 'data-role': 'points' });
  private readonly notice = h('p', { class: 'lr-notice', role: 'status', 'aria-live': 'polite', 'data-role': 'notice' });
  private readonly screens: ScreenState[];
  private readonly activities: Map<string, PublicActivity>;
  private current: string | null = null;
  /** The badge and reward lists on show, with how to fill them again. */
  private liveLists: Array<{ role: string; refill: () => void }> = [];
  private liveRefresh: ReturnType<typeof setTimeout> | null = null;
  private liveRoles = new Set<string>();

  constructor(
    private readonly sdk: EngagementSession,
    private readonly engagement: PublicEngagement,
    private readonly messenger: HostMessenger,
  ) {
    this.activities = new Map(engagement.activities.map((a) => [a.id, a]));
    const screens: PublicScreen[] = engagement.screens.length
      ? engagement.screens
      : [{ id: 'main', name: engagement.name, gated: false, components: engagement.activities.map((a) => ({ type: 'activity', activity_id: a.id })) }];
    this.screens = screens.map((screen) => ({
      screen,
      gate: null,
      tab: h(
        'button',
        { type: 'button', role: 'tab', class: 'lr-tab', id: `lr-tab-${screen.id}`, 'aria-controls': 'lr-screen', 'data-screen-id': screen.id, 'aria-selected': 'false', tabindex: -1 },
        screen.name ?? screen.id,
      ),
    }));
    const nav = h('nav', { class: 'lr-tabs', role: 'tablist', 'aria-label': i18n().t.screens }, ...this.screens.map((s) => s.tab));
    for (const state of this.screens) state.tab.addEventListener('click', () => void this.show(state.screen.id));
    nav.addEventListener('keydown', (event) => this.moveBetweenTabs(event));
    this.root = h(
      'div',
      { class: 'lr-engagement', 'data-engagement-id': engagement.engagement_id },
      h('header', { class: 'lr-header' }, h('h1', {}, engagement.name), engagement.description ? h('p', { class: 'lr-description' }, engagement.description) : null, this.points),
      this.screens.length > 1 ? nav : null,
      this.notice,
      this.panel,
    );
  }

  element(): HTMLElement {
    return this.root;
  }

  async start(): Promise<void> {
    await Promise.all([this.refreshBalance(), this.refreshGates(false)]);
    const first = this.screens.find((s) => !s.gate?.locked) ?? this.screens[0];
    await this.show(first.screen.id);
    this.follow();
  }

  /** Subscribes to the live stream; the SDK reconnects on its own, and the page works without it. */
  private follow(): void {
    this.sdk.subscribe(
      (event) => {
        if (!LIVE_EVENT.test(event.event)) return;
        this.liveRoles.add(event.event.startsWith('badge.') ? 'badges' : event.event.startsWith('reward.') ? 'rewards' : 'points');
        this.liveRefresh ??= setTimeout(() => void this.refreshLive(), LIVE_REFRESH_DELAY_MS);
      },
      () => undefined,
      // The stream restarted from now after a resume it could not continue: refresh everything live.
      () => {
        for (const role of ['points', 'badges', 'rewards'] as const) this.liveRoles.add(role);
        this.liveRefresh ??= setTimeout(() => void this.refreshLive(), LIVE_REFRESH_DELAY_MS);
      },
    );
  }

  private async refreshLive(): Promise<void> {
    const roles = this.liveRoles;
    this.liveRoles = new Set();
    this.liveRefresh = null;
    for (const list of this.liveLists) if (roles.has(list.role)) list.refill();
    await Promise.all([this.refreshBalance(), this.refreshGates(true)]);
    this.showBalanceLines();
  }

  private showBalanceLines(): void {
    for (const line of this.panel.querySelectorAll<HTMLElement>('[data-role="balance"]')) line.textContent = this.availableText();
  }

  private async refreshBalance(): Promise<void> {
    try {
      const balance = await this.sdk.balance();
      const { t, number } = i18n();
      const formatted = number(balance.available_points);
      // A tenant that named its points ("Sterne") is shown that name; the service's default name is translated.
      const named = balance.currency_name && balance.currency_name !== DEFAULT_CURRENCY_NAME;
      this.points.textContent = named ? `${formatted} ${balance.currency_name}` : t.points(balance.available_points, formatted);
      this.points.dataset.available = String(balance.available_points);
    } catch {
      // The balance is a convenience: the activities still work without it.
      this.points.textContent = '';
    }
  }

  private availableText(): string {
    return i18n().number(Number(this.points.dataset.available ?? 0));
  }

  /** Checks every gated screen; announces screens that unlocked since the last check. */
  private async refreshGates(announce: boolean): Promise<void> {
    const gated = this.screens.filter((s) => s.screen.gated).slice(0, GATE_TARGETS_MAX);
    if (gated.length === 0) return;
    let gates: Record<string, GateResult>;
    try {
      gates = (await this.sdk.checkGates({ targets: gated.map((s) => s.screen.id) })).gates;
    } catch (error) {
      this.say(explain(error).message);
      return;
    }
    const unlocked: string[] = [];
    for (const state of gated) {
      const gate = gates[state.screen.id] ?? null;
      if (announce && state.gate?.locked && gate && !gate.locked) unlocked.push(state.screen.name ?? state.screen.id);
      state.gate = gate;
      const locked = !!gate?.locked;
      state.tab.dataset.locked = String(locked);
      clear(state.tab);
      const { t } = i18n();
      const name = state.screen.name ?? state.screen.id;
      append(state.tab, name, locked && h('span', { class: 'lr-lock', 'aria-hidden': 'true' }, t.lockedTag));
      state.tab.setAttribute('aria-label', locked ? t.tabLocked(name) : name);
    }
    if (unlocked.length) this.say(i18n().t.unlocked(unlocked.join(', ')));
    // The screen on show may have just unlocked.
    if (this.current && unlocked.length && gated.some((s) => s.screen.id === this.current)) await this.show(this.current);
  }

  /** Arrow keys, Home and End move between tabs and show the screen (the WAI-ARIA tabs pattern). */
  private moveBetweenTabs(event: KeyboardEvent): void {
    const index = this.screens.findIndex((s) => s.screen.id === this.current);
    const last = this.screens.length - 1;
    const targets: Record<string, number> = { ArrowRight: index === last ? 0 : index + 1, ArrowLeft: index === 0 ? last : index - 1, Home: 0, End: last };
    const target = targets[event.key];
    if (target === undefined || index < 0) return;
    event.preventDefault();
    const next = this.screens[target];
    next.tab.focus();
    void this.show(next.screen.id);
  }

  private say(text: string): void {
    this.notice.textContent = text;
  }

  private async show(screenId: string): Promise<void> {
    const state = this.screens.find((s) => s.screen.id === screenId);
    if (!state) return;
    this.current = screenId;
    for (const s of this.screens) {
      s.tab.setAttribute('aria-selected', String(s === state));
      // One tab stop for the whole tab list (roving tabindex); arrows move within it.
      s.tab.tabIndex = s === state ? 0 : -1;
    }
    this.panel.setAttribute('aria-labelledby', state.tab.id);
    clear(this.panel);
    this.liveLists = [];
    this.panel.dataset.screenId = screenId;
    this.panel.setAttribute('aria-label', state.screen.name ?? state.screen.id);
    if (state.gate?.locked) {
      this.panel.dataset.locked = 'true';
      this.panel.append(
        h('div', { class: 'lr-locked', 'data-role': 'locked' }, h('h2', {}, i18n().t.screenLocked(state.screen.name ?? null)), h('p', {}, state.gate.unlock_hint ?? i18n().t.unlockHint)),
      );
      return;
    }
    this.panel.dataset.locked = 'false';
    if (state.screen.name && this.screens.length > 1) this.panel.append(h('h2', {}, state.screen.name));
    for (const component of state.screen.components) {
      const rendered = this.component(component);
      if (rendered) this.panel.append(rendered);
    }
    // Visits feed `screen_visited:<id>` gate conditions; a failure only delays such a gate.
    this.sdk
      .recordScreenVisit({ screen_id: screenId })
      .then(() => this.refreshGates(true))
      .catch(() => undefined);
  }

  private component(component: Record<string, unknown>): HTMLElement | null {
    const text = typeof component.text === 'string' ? component.text : '';
    switch (component.type) {
      case 'heading':
        return h('h2', {}, text);
      case 'text':
        return h('p', { class: 'lr-text' }, text);
      case 'image': {
        const src = typeof component.src === 'string' && /^(https:|data:image\/)/.test(component.src) ? component.src : null;
        return src ? h('img', { src, alt: typeof component.alt === 'string' ? component.alt : '', class: 'lr-image' }) : null;
      }
      case 'balance':
        return h('p', { class: 'lr-balance-line' }, `${i18n().t.yourPoints} `, h('span', { 'data-role': 'balance' }, this.availableText()));
      case 'badges':
        return this.badgeList(component.earned_only === true);
      case 'rewards':
        return this.rewardList();
      case 'button': {
        const target = typeof component.screen_id === 'string' ? component.screen_id : null;
        if (!target) return null;
        const button = h('button', { type: 'button', class: 'lr-button' }, typeof component.label === 'string' ? component.label : i18n().t.next);
        button.addEventListener('click', () => void this.show(target));
        return button;
      }
      case 'activity': {
        const activity = typeof component.activity_id === 'string' ? this.activities.get(component.activity_id) : undefined;
        if (!activity) return null;
        const ctx: ActivityContext = { sdk: this.sdk, engagement: this.engagement, completed: (a, c) => this.completed(a, c) };
        if (activity.type === 'spin_wheel') return renderWheel(ctx, activity);
        if (activity.type === 'quiz') return renderQuiz(ctx, activity);
        return null;
      }
      default:
        return null;
    }
  }

  /** A list filled once the read answers; a failed read says so in place. */
  private asyncList(label: string, role: string, fill: (list: HTMLUListElement) => Promise<void>): HTMLElement {
    const list = h('ul', { class: 'lr-list', 'data-role': role });
    const box = h('section', { class: 'lr-list-box', 'aria-label': label }, h('h3', {}, label), list);
    list.append(h('li', { class: 'lr-loading' }, i18n().t.loading));
    const refill = () =>
      void fill(list).catch((error: unknown) => {
        clear(list);
        list.append(h('li', { class: 'lr-error', 'data-code': explain(error).code }, explain(error).message));
      });
    refill();
    this.liveLists.push({ role, refill });
    return box;
  }

  private badgeList(earnedOnly: boolean): HTMLElement {
    const { t } = i18n();
    return this.asyncList(t.badges, 'badges', async (list) => {
      const { badges } = await this.sdk.badges();
      const shown = earnedOnly ? badges.filter((b) => b.earned) : badges;
      clear(list);
      if (shown.length === 0) list.append(h('li', {}, t.noBadges));
      for (const badge of shown) {
        const image = safeImage(badge.image_url);
        list.append(
          h(
            'li',
            { class: 'lr-badge', 'data-badge-code': badge.code, 'data-earned': String(badge.earned) },
            // The name follows as text, so the image itself is decoration.
            image ? h('img', { src: image, alt: '', class: 'lr-badge-image', width: 32, height: 32 }) : null,
            h('strong', {}, badge.name),
            ` ${badge.earned ? t.earned : t.notEarned}`,
            badge.description ? h('span', { class: 'lr-hint' }, ` ${badge.description}`) : null,
          ),
        );
      }
    });
  }

  private rewardList(): HTMLElement {
    const { t, date } = i18n();
    return this.asyncList(t.yourRewards, 'rewards', async (list) => {
      const { rewards } = await this.sdk.rewards();
      clear(list);
      if (rewards.length === 0) list.append(h('li', {}, t.noRewards));
      for (const reward of rewards) {
        const image = safeImage(reward.image_url);
        list.append(
          h(
            'li',
            { class: 'lr-reward', 'data-reward-id': reward.reward_id },
            // The name follows as text, so the image itself is decoration.
            image ? h('img', { src: image, alt: '', class: 'lr-reward-image', width: 32, height: 32 }) : null,
            h('strong', {}, reward.name),
            reward.code ? ` ${t.rewardCode(reward.code)}` : '',
            reward.expires_at ? h('span', { class: 'lr-hint' }, ` ${t.validUntil(date(reward.expires_at))}`) : null,
          ),
        );
      }
    });
  }

  private async completed(activity: PublicActivity, completion: CompleteResponse): Promise<void> {
    this.messenger.activityCompleted(this.engagement.engagement_id, activity.id, completion);
    // The lists a completion changed are filled again at once, not only when the live stream tells.
    const changed = new Set<string | null>(completion.actions_executed.map((action) => (action.type === 'grant_badge' ? 'badges' : action.type === 'award_reward' ? 'rewards' : null)));
    for (const list of this.liveLists) if (changed.has(list.role)) list.refill();
    await Promise.all([this.refreshBalance(), this.refreshGates(true)]);
    this.showBalanceLines();
  }
}
