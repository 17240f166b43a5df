import { randomInt } from 'node:crypto';
import { runStatements, type Statement, type Tx } from '../../platform/db.js';
import { invalid, ruleViolation } from '../../platform/errors.js';
import { ACTIVITY_DEFAULTS, type PublishedActivity, type Segment } from '../engagements/index.js';
import { unavailableRewardIdsOf, unavailableRewardIdsStatement } from '../rewards/index.js';
import type { Payload } from './schemas.js';
import * as store from './store.js';
import type { Result, Session } from './attempts.js';

/** Outcomes decided on the server: the spin wheel's draw and the quiz's score. */

// Wheel weights may carry up to six decimals; they are drawn as integers so the
// draw is exact with crypto.randomInt (whose range is below 2^48).
const WEIGHT_SCALE = 1_000_000;

/** What a draw reads: each limited segment's wins so far, and the reward prizes that cannot be claimed now. */
export interface Drawable {
  awarded: Map<number, number>;
  unavailable: Set<string>;
}

/**
 * The statements a draw reads (`Drawable`), for a caller that sends them with
 * its own (a completion sends them with the attempt's take: one round trip),
 * and how their rows read. None for a wheel without limited or reward segments.
 */
export function drawReads(session: Session, activity: PublishedActivity): { statements: Statement[]; read(rows: unknown[][]): Drawable } {
  const segments = activity.config.segments ?? [];
  const limited = segments.some((s) => s.inventory !== undefined);
  const rewardIds = [...new Set(segments.filter((s) => s.reward_id).map((s) => s.reward_id!))];
  const statements = [
    ...(limited ? [store.segmentsAwardedStatement(session.tenantId, session.engagementId, activity.activityId)] : []),
    ...(rewardIds.length ? [unavailableRewardIdsStatement(session.tenantId, rewardIds)] : []),
  ];
  return {
    statements,
    read(rows) {
      let next = 0;
      return {
        awarded: limited ? store.segmentsAwardedOf(rows[next++]) : new Map<number, number>(),
        unavailable: rewardIds.length ? unavailableRewardIdsOf(rows[next++]) : new Set<string>(),
      };
    },
  };
}

/** Segments that may still be drawn: inventory left and, for reward prizes, the reward claimable; `known`: what `drawReads` already answered. */
async function drawableSegments(tx: Tx, session: Session, activity: PublishedActivity, excluded: Set<number>, known?: Drawable): Promise<number[]> {
  const segments = activity.config.segments ?? [];
  let drawable = known;
  if (!drawable) {
    const reads = drawReads(session, activity);
    drawable = reads.read(await runStatements(tx, reads.statements));
  }
  const { awarded, unavailable } = drawable;
  return segments
    .map((segment, index) => ({ segment, index }))
    .filter(({ index }) => !excluded.has(index))
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
export async function draw(tx: Tx, session: Session, activity: PublishedActivity, excluded = new Set<number>(), known?: Drawable): Promise<Result> {
  const segments = activity.config.segments ?? [];
  for (let round = 0; round <= segments.length; round++) {
    // The first round may use what was read with the attempt's take; a repeated round reads again.
    const candidates = await drawableSegments(tx, session, activity, excluded, round === 0 ? known : undefined);
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
