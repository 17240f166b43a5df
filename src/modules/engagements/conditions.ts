import { SEGMENT_ID_PATTERN } from '../segments/index.js';
/**
 * Gate conditions, parsed once from their spec forms:
 * `activity_completed`, `activity_completed:<activity_id>`, `<activity_type>_completed`
 * (for example `quiz_completed`), `min_points_<N>`, `badge_earned:<badge_code>`,
 * `screen_visited:<screen_id>`, `in_segment:<segment_id>` (the participant is a member of that segment now).
 */
export type GateCondition =
  | { kind: 'activity_completed'; text: string; activityId: string | null; activityType: string | null }
  | { kind: 'min_points'; text: string; points: number }
  | { kind: 'badge_earned'; text: string; badgeCode: string }
  | { kind: 'screen_visited'; text: string; screenId: string }
  | { kind: 'in_segment'; text: string; segmentId: string };

const MIN_POINTS_MAX = 1_000_000_000_000;
const ID = '[A-Za-z0-9_-]{1,64}';

export function parseCondition(text: string): GateCondition | null {
  if (text === 'activity_completed') return { kind: 'activity_completed', text, activityId: null, activityType: null };
  let match = new RegExp(`^activity_completed:(${ID})$`).exec(text);
  if (match) return { kind: 'activity_completed', text, activityId: match[1], activityType: null };
  match = /^(spin_wheel|quiz)_completed$/.exec(text);
  if (match) return { kind: 'activity_completed', text, activityId: null, activityType: match[1] };
  match = /^min_points_(\d{1,13})$/.exec(text);
  if (match) {
    const points = Number(match[1]);
    return points <= MIN_POINTS_MAX ? { kind: 'min_points', text, points } : null;
  }
  match = new RegExp(`^badge_earned:(${ID})$`).exec(text);
  if (match) return { kind: 'badge_earned', text, badgeCode: match[1] };
  match = new RegExp(`^screen_visited:(${ID})$`).exec(text);
  if (match) return { kind: 'screen_visited', text, screenId: match[1] };
  match = new RegExp(`^in_segment:(${SEGMENT_ID_PATTERN.slice(1, -1)})$`).exec(text);
  if (match) return { kind: 'in_segment', text, segmentId: match[1] };
  return null;
}
