import { randomInt } from 'node:crypto';
import type { Tx } from '../../platform/db.js';
import { invalid, ruleViolation } from '../../platform/errors.js';
import { ACTIVITY_DEFAULTS, type PublishedActivity, type Segment } from '../engagements/index.js';
import { unavailableRewardIdsInTx } from '../rewards/index.js';
import type { Payload } from './schemas.js';
import * as store from './store.js';
import type { Result, Session } from './attempts.js';

/** Outcomes decided on the server: the spin wheel's draw and the quiz's score. */

// Wheel weights may carry up to six decimals; they are drawn as integers so the
// draw is exact with crypto.randomInt (whose range is below 2^48).
const WEIGHT_SCALE = 1_000_000;

/** Segments that may still be drawn: inventory left and, for reward prizes, the reward claimable. */
async function drawableSegments(tx: Tx, session: Session, activity: PublishedActivity, excluded: Set<number>): Promise<number[]> {
  const segments = activity.config.segments ?? [];
  const limited = segments.some((s) => s.inventory !== undefined);
  const awarded = limited ? await store.segmentsAwarded(tx, session.tenantId, session.engagementId, activity.activityId) : new Map<number, number>();
  const rewardIds = [...new Set(segments.filter((s) => s.reward_id).map((s) => s.reward_id!))];
  const unavailable = rewardIds.length ? await unavailableRewardIdsInTx(tx, session.tenantId, rewardIds) : new Set<string>();
  return segments
    .map((segment, index) => ({ segment, index }))
    .filter(({ segment, index }) => !excluded.has(index))
    .filter(({ segment, index }) => segment.inventory === undefined || (awarded.get(index) ?? 0) < segment.inventory)
    .filter(({ segment }) => !segment.reward_id || !unavailable.has(segment.reward_id))
    .map(({ index }) => index);
}

/** Picks one index with probability proportional to its weight, from a cryptographic source. */
export function weightedPick(segments: Segment[], candidates: number[]): number {
  const weights = candidates.map((index) => Math.max(1, Math.round(segments[index].weight * WEIGHT_SCALE)));
  const total = weights.reduce((sum, w) => sum + w, 0);
  let ticket = randomInt(total);
  for (let i = 0; i < candidates.length; i++) {
    if (ticket < weights[i]) return candidates[i];
    ticket -= weights[i];
  }
  return candidates[candidates.length - 1];
}

function segmentResult(segments: Segment[], index: number): Result {
  return { segment_index: index, prize_label: segments[index].label, prize_type: segments[index].prize_type };
}

/**
 * Draws a segment and takes one unit of its inventory. A segment whose stock
 * ran out between the read and the take is excluded and the draw repeated,
 * so a used-up prize is never handed out. A preview of a draft takes nothing.
 */
export async function draw(tx: Tx, session: Session, activity: PublishedActivity, excluded = new Set<number>()): Promise<Result> {
  const segments = activity.config.segments ?? [];
  for (let round = 0; round <= segments.length; round++) {
    const candidates = await drawableSegments(tx, session, activity, excluded);
    if (candidates.length === 0) throw ruleViolation('every prize of this wheel is exhausted', 'PRIZES_EXHAUSTED');
    const index = weightedPick(segments, candidates);
    const inventory = segments[index].inventory;
    // A preview draws from the real stock but takes none of it.
    if (inventory === undefined || activity.preview || (await store.takeSegment(tx, session.tenantId, session.engagementId, activity.activityId, index, inventory))) {
      return segmentResult(segments, index);
    }
    excluded.add(index);
  }
  throw ruleViolation('every prize of this wheel is exhausted', 'PRIZES_EXHAUSTED');
}

export function score(activity: PublishedActivity, answers: Payload['answers']): Result {
  const questions = activity.config.questions ?? [];
  const byId = new Map(questions.map((q) => [q.id, q]));
  const seen = new Set<string>();
  let correct = 0;
  for (const answer of answers ?? []) {
    const question = byId.get(answer.question_id);
    if (!question) throw ruleViolation(`answers name the unknown question ${JSON.stringify(answer.question_id)}`, 'UNKNOWN_QUESTION');
    if (seen.has(answer.question_id)) throw invalid(`answers repeat the question ${JSON.stringify(answer.question_id)}`);
    seen.add(answer.question_id);
    if (answer.selected_option >= question.options.length) {
      throw ruleViolation(`selected_option ${answer.selected_option} of question ${JSON.stringify(question.id)} is outside its ${question.options.length} options`, 'INVALID_OPTION');
    }
    if (answer.selected_option === question.correct_option) correct += 1;
  }
  const percent = questions.length ? Math.round((100 * correct) / questions.length) : 0;
  return {
    score: percent,
    passed: percent >= (activity.config.pass_percent ?? ACTIVITY_DEFAULTS.pass_percent),
    correct_answers: correct,
    total_questions: questions.length,
    answered: seen.size,
  };
}
