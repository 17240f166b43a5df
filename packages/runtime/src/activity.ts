import { h, clear } from './dom.js';
import { explain } from './errors.js';
import { i18n, type AttemptKind } from './i18n.js';
import type { ActivityEligibility, CompleteResponse, EngagementSession, PublicActivity, PublicEngagement } from './types.js';

/** What an activity view needs from the runtime around it. */
export interface ActivityContext {
  sdk: EngagementSession;
  engagement: PublicEngagement;
  /** Called after the server completed an activity: balance, gates and the host message. */
  completed(activity: PublicActivity, completion: CompleteResponse): Promise<void>;
}

/** The line under an activity saying how many attempts are left, or why none is. */
export function attemptsText(eligibility: ActivityEligibility, kind: AttemptKind): string {
  const { t, number } = i18n();
  const left = Math.max(0, eligibility.max_attempts - eligibility.attempts_used);
  if (eligibility.open_attempt_id) return t.unfinished(kind);
  if (left === 0) return t.attemptsUsed(number(eligibility.max_attempts));
  if (eligibility.cooldown_remaining_seconds > 0) return t.tryAgainIn(number(eligibility.cooldown_remaining_seconds));
  return t.attemptsLeft(kind, left, number(left));
}

/** Shows an explained error inside an activity (role=alert), never a raw server answer. */
export function showActivityError(box: HTMLElement, error: unknown): ReturnType<typeof explain> {
  const explained = explain(error);
  clear(box);
  box.hidden = false;
  box.dataset.code = explained.code;
  box.append(h('strong', {}, `${explained.title}. `), explained.message);
  return explained;
}

/** What a play shows once the server has answered: its headline (the prize, the score) and the completion. */
export interface PlayOutcome {
  completion: CompleteResponse;
  headline: Node;
}

/** The parts every activity view shares; `play` runs one play from the click to the refreshed eligibility. */
export interface ActivityFrame {
  attempts: HTMLElement;
  result: HTMLElement;
  error: HTMLElement;
  play(pending: string, run: () => Promise<PlayOutcome>): Promise<void>;
}

/**
 * The attempts line, the result and the error box of an activity, and one
 * play: `control` (the button that starts a play) is enabled only while the
 * participant is eligible; the headline and the prizes of a completion, or
 * the explained error, are shown; the host hears of the completion.
 */
export function activityFrame(ctx: ActivityContext, activity: PublicActivity, control: HTMLButtonElement, kind: AttemptKind): ActivityFrame {
  const attempts = h('p', { class: 'lr-attempts', 'data-role': 'attempts' });
  const result = h('p', { class: 'lr-result', role: 'status', 'aria-live': 'polite', 'data-role': 'result' });
  const error = h('p', { class: 'lr-error', role: 'alert', hidden: true, 'data-role': 'error' });

  async function refreshEligibility(): Promise<void> {
    try {
      const eligibility = await ctx.sdk.eligibility(activity.id);
      attempts.textContent = attemptsText(eligibility, kind);
      control.disabled = !eligibility.eligible;
    } catch (caught) {
      showActivityError(error, caught);
    }
  }

  async function play(pending: string, run: () => Promise<PlayOutcome>): Promise<void> {
    control.disabled = true;
    error.hidden = true;
    result.textContent = pending;
    try {
      const { completion, headline } = await run();
      const prizes = prizeList(completion);
      clear(result);
      result.append(headline, prizes ?? '');
      await ctx.completed(activity, completion);
    } catch (caught) {
      result.textContent = '';
      showActivityError(error, caught);
    }
    await refreshEligibility();
  }

  void refreshEligibility();
  return { attempts, result, error, play };
}

/** Whether an image URL may be shown: https only (the page's CSP allows https images). */
export function safeImage(url: string | null | undefined): string | null {
  return url && /^https:\/\//.test(url) ? url : null;
}

/**
 * What a completion gave the participant, by name: points, the reward's
 * title (and its code), the badge's name and image. A badge is named by
 * `badge_name` from the completion; an answer stored before the service sent
 * names (a replayed duplicate) falls back to the code.
 */
export function prizeList(completion: CompleteResponse): HTMLUListElement | null {
  const { t, number } = i18n();
  const items: HTMLLIElement[] = [];
  for (const action of completion.actions_executed) {
    if (action.type === 'award_points' && action.points_awarded) items.push(h('li', { 'data-prize': 'points' }, t.pointsAwarded(number(action.points_awarded))));
    if (action.type === 'award_reward' && action.reward_claimed) {
      const claimed = action.reward_claimed;
      const image = safeImage(claimed.image_url);
      items.push(
        h(
          'li',
          { 'data-prize': 'reward', 'data-reward-id': claimed.reward_id },
          // The title follows as text, so the image itself is decoration (like a badge's).
          image ? h('img', { src: image, alt: '', class: 'lr-reward-image', width: 24, height: 24 }) : null,
          t.rewardWon(claimed.title),
          claimed.code ? ` (${t.rewardCode(claimed.code)})` : '',
        ),
      );
    }
    if (action.type === 'grant_badge' && action.badge_code && action.awarded !== false) {
      const name = action.badge_name ?? action.badge_code;
      const image = safeImage(action.badge_image_url);
      items.push(
        h(
          'li',
          { 'data-prize': 'badge', 'data-badge-code': action.badge_code },
          image ? h('img', { src: image, alt: '', class: 'lr-badge-image', width: 24, height: 24 }) : null,
          t.badgeEarned(name),
        ),
      );
    }
  }
  return items.length ? h('ul', { class: 'lr-prizes', 'data-role': 'prizes' }, ...items) : null;
}
