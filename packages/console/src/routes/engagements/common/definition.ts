import type { EngagementInput } from '../../../hooks/api/engagements';

/**
 * The parts of an engagement definition the editor changes. Their shapes
 * come from the SDK (the route's schema); the server checks every rule, and
 * the editor only helps a person see what they are writing.
 */
export type Activity = NonNullable<EngagementInput['activities']>[number];
export type Segment = NonNullable<Activity['segments']>[number];
export type Question = NonNullable<Activity['questions']>[number];
export type Screen = NonNullable<EngagementInput['screens']>[number];
export type PrizeType = Segment['prize_type'];

export const PRIZE_TYPES: PrizeType[] = ['points', 'reward', 'badge', 'none'];
/** The quiz pass mark the server applies when none is given. */
export const DEFAULT_PASS_PERCENT = 70;

export interface Draft {
  name: string;
  site_slug: string;
  description: string;
  allow_anonymous_sessions: boolean;
  screens: Screen[];
  activities: Activity[];
}

export const EMPTY_DRAFT: Draft = { name: '', site_slug: '', description: '', allow_anonymous_sessions: true, screens: [], activities: [] };

/** A local id not yet used among `taken`: `wheel`, `wheel-2`, … */
export function freshId(base: string, taken: string[]): string {
  if (!taken.includes(base)) return base;
  for (let n = 2; ; n += 1) if (!taken.includes(`${base}-${n}`)) return `${base}-${n}`;
}

export function newSpinWheel(taken: string[]): Activity {
  return {
    id: freshId('wheel', taken),
    type: 'spin_wheel',
    name: 'Spin the wheel',
    max_attempts: 1,
    segments: [
      { label: '50 points', prize_type: 'points', prize_value: 50, weight: 1 },
      { label: 'No prize', prize_type: 'none', weight: 1 },
    ],
  };
}

export function newQuiz(taken: string[]): Activity {
  return {
    id: freshId('quiz', taken),
    type: 'quiz',
    name: 'Quiz',
    max_attempts: 1,
    pass_percent: DEFAULT_PASS_PERCENT,
    questions: [{ id: 'q1', text: '', options: ['', ''], correct_option: 0 }],
  };
}

/** A segment keeps only the prize field of its prize type (the server refuses the others). */
export function withPrizeType(segment: Segment, prizeType: PrizeType): Segment {
  const { prize_value: _value, reward_id: _reward, badge_code: _badge, ...rest } = segment;
  if (prizeType === 'points') return { ...rest, prize_type: prizeType, prize_value: segment.prize_value ?? 10 };
  if (prizeType === 'reward') return { ...rest, prize_type: prizeType, reward_id: segment.reward_id ?? '' };
  if (prizeType === 'badge') return { ...rest, prize_type: prizeType, badge_code: segment.badge_code ?? '' };
  return { ...rest, prize_type: prizeType };
}

export interface ProbabilityCheck {
  totalWeight: number;
  /** Each segment's chance of being drawn, 0 to 1 (0 for all when the weights do not add up to anything). */
  chances: number[];
  /** Segments that can never be drawn: no weight, an inventory of 0, or a reward that cannot be claimed. */
  unreachable: number[];
  /** Points a participant wins on average per spin (prizes of other types count 0). */
  expectedPoints: number;
  ok: boolean;
}

/**
 * The wheel's odds as the server draws them: a segment's chance is its weight
 * over the sum of the weights of segments that still have inventory.
 */
export function checkProbabilities(segments: Segment[], unclaimableRewards: ReadonlySet<string> = new Set()): ProbabilityCheck {
  const drawable = segments.map(
    (s) => Number.isFinite(s.weight) && s.weight > 0 && s.inventory !== 0 && !(s.prize_type === 'reward' && s.reward_id !== undefined && unclaimableRewards.has(s.reward_id)),
  );
  const totalWeight = segments.reduce((sum, s, i) => sum + (drawable[i] ? s.weight : 0), 0);
  const chances = segments.map((s, i) => (drawable[i] && totalWeight > 0 ? s.weight / totalWeight : 0));
  const unreachable = segments.flatMap((_s, i) => (chances[i] > 0 ? [] : [i]));
  const expectedPoints = segments.reduce((sum, s, i) => sum + (s.prize_type === 'points' && Number.isFinite(s.prize_value) ? chances[i] * s.prize_value! : 0), 0);
  return { totalWeight, chances, unreachable, expectedPoints, ok: totalWeight > 0 && unreachable.length === 0 };
}

export function percent(chance: number): string {
  return `${(chance * 100).toFixed(1)}%`;
}

/** What is sent: the whole draft (the API replaces top-level fields). */
export function toInput(draft: Draft): EngagementInput {
  return {
    name: draft.name.trim(),
    site_slug: draft.site_slug.trim(),
    description: draft.description.trim() || undefined,
    allow_anonymous_sessions: draft.allow_anonymous_sessions,
    screens: draft.screens,
    activities: draft.activities,
  };
}

/**
 * A number input's value as sent: the number as typed, never clamped; an empty input is NaN, which is
 * sent as null, so the service refuses it on its field ("must be a number").
 */
export function typed(value: string | number): number {
  return typeof value === 'number' ? value : value.trim() === '' ? Number.NaN : Number(value);
}
