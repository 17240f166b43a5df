import { h, clear } from './dom.js';
import { explain } from './errors.js';
import type { ActivityEligibility, CompleteResponse, EngagementSession, PublicActivity, PublicEngagement } from './types.js';

/** What an activity view needs from the runtime around it. */
export interface ActivityContext {
  sdk: EngagementSession;
  engagement: PublicEngagement;
  /** Called after the server completed an activity: balance, gates and the host message. */
  completed(activity: PublicActivity, completion: CompleteResponse): Promise<void>;
}

/** The line under an activity saying how many attempts are left, or why none is. */
export function attemptsText(eligibility: ActivityEligibility, noun: string): string {
  const left = Math.max(0, eligibility.max_attempts - eligibility.attempts_used);
  if (eligibility.open_attempt_id) return `You have an unfinished ${noun}.`;
  if (left === 0) return `You have used all ${eligibility.max_attempts} of your attempts.`;
  if (eligibility.cooldown_remaining_seconds > 0) return `You can try again in ${eligibility.cooldown_remaining_seconds} seconds.`;
  return left === 1 ? `1 ${noun} left.` : `${left} ${noun}s left.`;
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
export function activityFrame(ctx: ActivityContext, activity: PublicActivity, control: HTMLButtonElement, noun: string): ActivityFrame {
  const attempts = h('p', { class: 'lr-attempts', 'data-role': 'attempts' });
  const result = h('p', { class: 'lr-result', role: 'status', 'aria-live': 'polite', 'data-role': 'result' });
  const error = h('p', { class: 'lr-error', role: 'alert', hidden: true, 'data-role': 'error' });

  async function refreshEligibility(): Promise<void> {
    try {
      const eligibility = await ctx.sdk.eligibility(activity.id);
      attempts.textContent = attemptsText(eligibility, noun);
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
      const extras = prizeSummary(completion);
      clear(result);
      result.append(headline, extras.length ? ` ${extras.join(' · ')}` : '');
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

/** A readable summary of what a completion gave the participant. */
export function prizeSummary(completion: CompleteResponse): string[] {
  const lines: string[] = [];
  for (const action of completion.actions_executed) {
    if (action.type === 'award_points' && action.points_awarded) lines.push(`+${action.points_awarded} points`);
    if (action.type === 'award_reward' && action.reward_claimed) {
      const code = action.reward_claimed.code ? ` (code ${action.reward_claimed.code})` : '';
      lines.push(`Reward: ${action.reward_claimed.title}${code}`);
    }
    if (action.type === 'grant_badge' && action.badge_code && action.awarded !== false) lines.push(`Badge earned: ${action.badge_code}`);
  }
  return lines;
}
