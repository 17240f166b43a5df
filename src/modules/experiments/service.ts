import type { Database, Tx } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { conflict, fieldError, invalid, notFound, ruleViolation, type FieldError } from '../../platform/errors.js';
import { publishingRequired } from '../../platform/publishing.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { prefixedId } from '../../platform/ids.js';
import { assertSegmentsExistInTx } from '../segments/index.js';
import { HOLDOUT } from './assignment.js';
import { forgetRunning } from './exposure.js';
import { findSubjectInTx } from './ports.js';
import * as store from './store.js';
import type { CreateExperimentBody, Goal, ListExperimentsQuery, UpdateExperimentBody, VariantInput } from './schemas.js';

/**
 * Experiments: their administration, start and stop, with every check that
 * keeps a stored experiment runnable. Roll-out is rollout.ts; assignment at
 * exposure is exposure.ts.
 */
export function present(row: store.ExperimentRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    subject_type: row.subject_type,
    status: row.status,
    holdout_percent: row.holdout_percent,
    variants: row.variants.map((v, index) => ({ key: v.key, name: v.name, subject_id: v.subject_id, allocation_percent: v.allocation_percent, control: index === 0 })),
    goal: row.goal,
    segment_id: row.segment_id,
    started_at: row.started_at?.toISOString() ?? null,
    ended_at: row.ended_at?.toISOString() ?? null,
    rolled_out_variant: row.rolled_out_variant,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
export type ExperimentResponse = ReturnType<typeof present>;

const refuse = (detail: string, errors: FieldError[], code = 'EXPERIMENT_INVALID') => invalid(detail, code, { errors });

/** The shape of the variants and the goal; throws a 400 naming each field that is wrong. */
function validateShape(draft: store.ExperimentDraft): void {
  const errors: FieldError[] = [];
  const keys = new Map<string, number>();
  const subjects = new Map<string, number>();
  draft.variants.forEach((variant, index) => {
    if (variant.key === HOLDOUT) errors.push(fieldError(`/variants/${index}/key`, 'reserved', '"holdout" is reserved for the holdout'));
    else if (keys.has(variant.key)) errors.push(fieldError(`/variants/${index}/key`, 'unique', `repeats the key of variant ${keys.get(variant.key)! + 1}`));
    keys.set(variant.key, index);
    if (subjects.has(variant.subject_id)) errors.push(fieldError(`/variants/${index}/subject_id`, 'unique', `repeats the subject of variant ${subjects.get(variant.subject_id)! + 1}`));
    subjects.set(variant.subject_id, index);
  });
  const sum = draft.variants.reduce((total, v) => total + v.allocation_percent, 0) + draft.holdout_percent;
  if (sum !== 100) {
    const message = `the variants' allocations and the holdout sum to ${sum}; they must sum to 100`;
    draft.variants.forEach((_, index) => errors.push(fieldError(`/variants/${index}/allocation_percent`, 'allocation_sum', message)));
  }
  if (draft.subject_type === 'engagement' && draft.holdout_percent > 0) {
    errors.push(fieldError('/holdout_percent', 'not_allowed', 'an engagement experiment has no holdout: a refused session is nothing a site can show; compare with a plain control engagement instead'));
  }
  errors.push(...goalErrors(draft.goal));
  if (errors.length > 0) throw refuse(`the experiment is not valid: ${errors[0].path.slice(1)} ${errors[0].message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`, errors);
}

function goalErrors(goal: Goal): FieldError[] {
  const needs: Record<Goal['type'], Array<keyof Goal>> = { event_count: ['event_name'], event_property_sum: ['event_name', 'property'], redemptions: [] };
  const takes: Record<Goal['type'], Array<keyof Goal>> = { event_count: ['event_name'], event_property_sum: ['event_name', 'property'], redemptions: ['reward_id'] };
  const errors: FieldError[] = [];
  for (const field of needs[goal.type]) if (goal[field] === undefined) errors.push(fieldError(`/goal/${field}`, 'required', `is required for a ${goal.type} goal`));
  for (const field of Object.keys(goal) as Array<keyof Goal>) {
    if (field !== 'type' && !takes[goal.type].includes(field)) errors.push(fieldError(`/goal/${field}`, 'not_allowed', `does not belong to a ${goal.type} goal`));
  }
  return errors;
}

/** The subjects exist and are of the experiment's type; the segment exists. 422 naming each subject that does not. */
async function validateReferences(tx: Tx, tenantId: string, draft: store.ExperimentDraft, starting = false): Promise<void> {
  const errors: FieldError[] = [];
  for (const [index, variant] of draft.variants.entries()) {
    const subject = await findSubjectInTx(tx, tenantId, draft.subject_type, variant.subject_id);
    if (!subject) errors.push(fieldError(`/variants/${index}/subject_id`, 'not_found', `is not a ${draft.subject_type} of this tenant`));
    else if (subject.unusable) errors.push(fieldError(`/variants/${index}/subject_id`, 'not_allowed', subject.unusable));
    else if (starting && draft.subject_type === 'engagement' && !subject.live) {
      errors.push(fieldError(`/variants/${index}/subject_id`, 'not_published', 'is not published; participants play published engagements only, so publish it first'));
    }
  }
  if (errors.length > 0) {
    const code = errors.some((e) => e.code === 'not_found') ? 'EXPERIMENT_SUBJECT_NOT_FOUND' : 'EXPERIMENT_SUBJECT_UNUSABLE';
    throw ruleViolation(`${errors[0].path.slice(1)} ${errors[0].message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`, code, { errors });
  }
  if (draft.segment_id) await assertSegmentsExistInTx(tx, tenantId, [draft.segment_id], '/segment_id');
}

export async function createExperiment(db: Database, tenantId: string, body: CreateExperimentBody) {
  const draft: store.ExperimentDraft = {
    name: body.name,
    description: body.description ?? null,
    subject_type: body.subject_type,
    holdout_percent: body.holdout_percent ?? 0,
    variants: body.variants.map(({ key, name, subject_id, allocation_percent }) => ({ key, name, subject_id, allocation_percent })),
    goal: body.goal,
    segment_id: body.segment_id ?? null,
  };
  validateShape(draft);
  return db.tenant(tenantId, async (tx) => {
    await validateReferences(tx, tenantId, draft);
    return present(await store.insertExperiment(tx, tenantId, prefixedId('exp'), draft, clock.now(tenantId)));
  });
}

export async function readExperiment(db: Database, tenantId: string, id: string) {
  return db.tenant(tenantId, async (tx) => present(await existing(tx, tenantId, id)));
}

async function existing(tx: Tx, tenantId: string, id: string, forUpdate = false): Promise<store.ExperimentRow> {
  const row = await store.findExperiment(tx, tenantId, id, forUpdate);
  if (!row) throw notFound(`experiment "${id}"`, 'EXPERIMENT_NOT_FOUND');
  return row;
}

export async function listExperiments(db: Database, tenantId: string, query: ListExperimentsQuery) {
  const limit = query.limit ?? 50;
  const after = decodeCursor(query.cursor, { created_at: 'timestamp', id: 'text' });
  return db.tenant(tenantId, async (tx) => {
    const rows = await store.listExperiments(tx, tenantId, { status: query.status, subjectType: query.subject_type }, after, limit + 1);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      experiments: page.map(present),
      next_cursor: rows.length > limit && last ? encodeCursor({ created_at: last.created_at.toISOString(), id: last.id }) : null,
    };
  });
}

/** Equal as JSON, whatever the order of object keys. */
function sameValue(a: unknown, b: unknown): boolean {
  const canonical = (value: unknown): unknown =>
    value && typeof value === 'object' && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).sort(([x], [y]) => (x < y ? -1 : 1)).map(([k, v]) => [k, canonical(v)])) : value;
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

/** A running or stopped experiment takes new allocations only: the same variants (keys, subjects) in the same order. */
function sameVariants(current: VariantInput[], given: VariantInput[]): FieldError[] {
  if (given.length !== current.length) return [fieldError('/variants', 'not_allowed', `a started experiment keeps its ${current.length} variants; only their allocation and names change`)];
  return given.flatMap((variant, index) => [
    ...(variant.key !== current[index].key ? [fieldError(`/variants/${index}/key`, 'not_allowed', `a started experiment keeps its variants: this one is "${current[index].key}"`)] : []),
    ...(variant.subject_id !== current[index].subject_id ? [fieldError(`/variants/${index}/subject_id`, 'not_allowed', `a started experiment keeps its subjects: this one is "${current[index].subject_id}"`)] : []),
  ]);
}

export async function updateExperiment(db: Database, tenantId: string, id: string, body: UpdateExperimentBody) {
  return db.tenant(tenantId, async (tx) => {
    const current = await existing(tx, tenantId, id, true);
    if (current.status === 'ended') throw conflict(`the experiment “${current.name}” has ended (a variant was rolled out); it changes no more`, 'EXPERIMENT_ENDED');
    const started = current.status !== 'draft';
    if (started) {
      // Sent unchanged (a form that sends everything) is no change.
      const fixed = (['goal', 'segment_id'] as const).filter((field) => body[field] !== undefined && !sameValue(body[field], current[field]));
      const errors = [...fixed.map((field) => fieldError(`/${field}`, 'not_allowed', `a ${current.status} experiment changes only its name, description and allocation`)), ...(body.variants ? sameVariants(current.variants, body.variants) : [])];
      if (errors.length > 0) throw conflict(`the experiment “${current.name}” is ${current.status}: only its name, description and allocation change (nobody already assigned moves)`, 'EXPERIMENT_STARTED', { errors });
    }
    const merged: store.ExperimentDraft = {
      name: body.name ?? current.name,
      description: body.description !== undefined ? body.description : current.description,
      subject_type: current.subject_type,
      holdout_percent: body.holdout_percent ?? current.holdout_percent,
      variants: body.variants ? body.variants.map(({ key, name, subject_id, allocation_percent }) => ({ key, name, subject_id, allocation_percent })) : current.variants,
      goal: body.goal ?? current.goal,
      segment_id: body.segment_id !== undefined ? body.segment_id : current.segment_id,
    };
    validateShape(merged);
    if (!started) await validateReferences(tx, tenantId, merged);
    return present(await store.replaceExperiment(tx, tenantId, id, merged, clock.now(tenantId)));
  }).finally(() => forgetRunning(tenantId));
}

export async function deleteExperiment(db: Database, tenantId: string, id: string): Promise<void> {
  await db.tenant(tenantId, async (tx) => {
    const current = await existing(tx, tenantId, id, true);
    if (current.status !== 'draft') {
      throw conflict(`the experiment “${current.name}” is ${current.status}: only a draft is deleted (its assignments are the results); stop it instead`, 'EXPERIMENT_NOT_DRAFT');
    }
    await store.deleteExperiment(tx, tenantId, id);
  });
}

/** One start at a time per tenant, so that two experiments never start on one subject. */
const lockTenantStarts = (tx: Tx, tenantId: string) => tx.query("SELECT pg_advisory_xact_lock(hashtext('experiments.start:' || $1::text))", [tenantId]);

/**
 * Starts a draft or stopped experiment: from now on each participant is
 * assigned at first exposure and gets only their variant's subject. A subject
 * serves at most one running experiment (409 naming the other).
 */
export async function startExperiment(db: Database, tenantId: string, id: string, mayPublishDrafts: boolean) {
  const started = await db.tenant(tenantId, async (tx) => {
    await lockTenantStarts(tx, tenantId);
    const current = await existing(tx, tenantId, id, true);
    if (current.status === 'running') return present(current);
    if (current.status === 'ended') throw conflict(`the experiment “${current.name}” has ended (a variant was rolled out); create a new one`, 'EXPERIMENT_ENDED');
    await validateReferences(tx, tenantId, current, true);
    if (!mayPublishDrafts) {
      for (const variant of current.variants) {
        const subject = await findSubjectInTx(tx, tenantId, current.subject_type, variant.subject_id);
        if (subject?.draft) throw publishingRequired(`starting an experiment whose variant "${variant.key}" is the unpublished draft “${subject.name}” (it goes live for that variant's share)`);
      }
    }
    const uses = await store.runningUsesOf(tx, tenantId, current.subject_type, current.variants.map((v) => v.subject_id), current.id);
    if (uses.length > 0) {
      const errors = uses.map((use) => {
        const index = current.variants.findIndex((v) => v.subject_id === use.subject_id);
        return fieldError(`/variants/${index}/subject_id`, 'in_use', `is a variant of the running experiment “${use.name}” (${use.id})`);
      });
      throw conflict(`a ${current.subject_type} serves one running experiment at a time: “${uses[0].name}” (${uses[0].id}) runs on ${uses[0].subject_id}; stop it first`, 'EXPERIMENT_SUBJECT_IN_USE', { errors });
    }
    const now = clock.now(tenantId);
    return present(await store.moveExperiment(tx, tenantId, id, { status: 'running', startedAt: now, endedAt: null }, now));
  });
  forgetRunning(tenantId);
  return started;
}

/** Stops a running experiment: its subjects behave as without it (drafts serve nobody); assignments are kept for the results and a restart. */
export async function stopExperiment(db: Database, tenantId: string, id: string) {
  const stopped = await db.tenant(tenantId, async (tx) => {
    const current = await existing(tx, tenantId, id, true);
    if (current.status === 'stopped') return present(current);
    if (current.status !== 'running') throw conflict(`the experiment “${current.name}” is ${current.status}, not running`, 'EXPERIMENT_NOT_RUNNING');
    const now = clock.now(tenantId);
    return present(await store.moveExperiment(tx, tenantId, id, { status: 'stopped', endedAt: now }, now));
  });
  forgetRunning(tenantId);
  return stopped;
}

export { existing as existingExperimentInTx };
