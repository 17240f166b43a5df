import { createHash } from 'node:crypto';
import type { Database } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { prefixedId } from '../../platform/ids.js';
import { fieldError, invalid, notFound } from '../../platform/errors.js';
import { addJob } from '../../platform/jobs.js';
import { currentTraceparent } from '../../platform/tracing.js';
import { claimKey, fingerprint, storeResponse } from '../../platform/idempotency.js';
import * as store from './store.js';
import { POINTS_BALANCE_MAX, POINTS_PER_OPERATION_MAX, grantValues, type GrantInput, type GrantType } from './ledger.js';
import { useBatchMemory } from './batch-memory.js';
import { membersSqlInTx } from '../segments/index.js';

/**
 * Bulk grants: a job started idempotently, then run in parallel batches, one
 * transaction each, to the end.
 */

export const BULK_GRANT_TASK = 'points.bulk_grant';
export const BULK_GRANT_PARTICIPANTS_MAX = 100_000;
export const BULK_GRANT_BATCH = 5_000;
export const BULK_IDEMPOTENCY_SCOPE = 'points.bulk';

export interface BulkGrantBody {
  idempotency_key: string;
  reason: string;
  memo?: string;
  type?: GrantType;
  grants: Array<{ participant_id: string; amount: number }>;
}

/** Failed items listed by the status read (the first ones by participant id); the counts cover all. */
export const BULK_FAILURES_LISTED_MAX = 100;
/** Batches of one job run in parallel (disjoint items through SKIP LOCKED). */
export const BULK_GRANT_PARALLEL = 2;
export const BULK_FAILURE_BALANCE_LIMIT = 'balance_limit';

export function presentBulkJob(row: store.BulkJobRow) {
  // Participants erased while the job waited or ran lost their item with the rest of their rows: neither done, failed nor pending.
  const erased = Math.max(0, row.total - row.done - row.failed - row.pending);
  return {
    job_id: row.id,
    status: row.status,
    total: row.total,
    done: row.done,
    failed: row.failed + erased,
    pending: row.pending,
    failure_counts: { balance_limit: row.failed, participant_erased: erased },
    failures: row.failures,
    error: row.error,
    created_at: row.created_at.toISOString(),
    started_at: row.started_at ? row.started_at.toISOString() : null,
    finished_at: row.finished_at ? row.finished_at.toISOString() : null,
    segment_id: row.segment_id ?? null,
  };
}

/** `actor`: who asks (kept with the job, so the ledger names who granted its entries). */
export async function startBulkGrant(db: Database, tenantId: string, body: BulkGrantBody, actor: store.LedgerActor | null = null) {
  const seen = new Set<string>();
  for (const grant of body.grants) {
    if (seen.has(grant.participant_id)) throw invalid(`grants lists participant ${JSON.stringify(grant.participant_id)} twice; one grant per participant per job`);
    seen.add(grant.participant_id);
  }
  return db.tenant(tenantId, async (tx) => {
    const claim = await claimKey<{ job_id: string }>(tx, tenantId, BULK_IDEMPOTENCY_SCOPE, body.idempotency_key, fingerprint(body));
    if (!claim.fresh) {
      const existing = await store.readBulkJob(tx, tenantId, claim.response.job_id, BULK_FAILURES_LISTED_MAX);
      if (!existing) throw notFound('bulk grant job');
      return { ...presentBulkJob(existing), duplicate: true };
    }
    const id = prefixedId('bgj', 12);
    const job = await store.insertBulkJob(
      tx,
      tenantId,
      { id, reason: body.reason, memo: body.memo ?? null, type: body.type ?? 'bonus', now: clock.now(tenantId), actor },
      body.grants.map((g) => g.participant_id),
      body.grants.map((g) => g.amount),
    );
    await addJob(tx, BULK_GRANT_TASK, { tenant_id: tenantId, job_id: id }, { jobKey: `points.bulk:${id}`, maxAttempts: 10 });
    await storeResponse(tx, tenantId, BULK_IDEMPOTENCY_SCOPE, body.idempotency_key, { job_id: id });
    return { ...presentBulkJob(job), duplicate: false };
  });
}

export interface SegmentGrantBody {
  segment_id: string;
  amount: number;
  reason: string;
  memo?: string;
  type?: GrantType;
  dry_run?: boolean;
  idempotency_key?: string;
}

/**
 * A grant of `amount` to every member of a segment (issue 36). A dry run counts the members and the
 * points and writes nothing (not even the key). Otherwise the members are read set-based into a bulk
 * grant job in the same transaction as the key, and the bulk grant's runner grants them: one ledger
 * entry per (job, participant) whatever happens (`bulkEntryId`), and a repeat of the key inside 24
 * hours answers the same job (`duplicate: true`), also when it arrives while the first is running.
 */
export async function startSegmentGrant(db: Database, tenantId: string, body: SegmentGrantBody, actor: store.LedgerActor | null = null) {
  if (!body.dry_run && body.idempotency_key === undefined) {
    throw invalid('an idempotency key is required for a segment grant (not for a dry run): send the Idempotency-Key header or idempotency_key in the body', 'IDEMPOTENCY_KEY_REQUIRED', {
      errors: [fieldError('/idempotency-key', 'required', 'send the Idempotency-Key header, or idempotency_key in the body', { in: 'headers' })],
    });
  }
  return db.tenant(tenantId, async (tx) => {
    if (body.dry_run) {
      const participants = await store.countSegmentMembers(tx, await membersSqlInTx(tx, tenantId, body.segment_id, 1, '/segment_id'));
      return { dry_run: true as const, segment_id: body.segment_id, participants, points: participants * body.amount };
    }
    const key = body.idempotency_key!;
    const { dry_run: _dryRun, idempotency_key: _key, ...asked } = body;
    const claim = await claimKey<{ job_id: string }>(tx, tenantId, BULK_IDEMPOTENCY_SCOPE, key, fingerprint({ segment_grant: asked }));
    if (!claim.fresh) {
      const existing = await store.readBulkJob(tx, tenantId, claim.response.job_id, BULK_FAILURES_LISTED_MAX);
      if (!existing) throw notFound('bulk grant job');
      return { ...presentBulkJob(existing), duplicate: true };
    }
    const members = await membersSqlInTx(tx, tenantId, body.segment_id, store.SEGMENT_JOB_MEMBER_PARAMS_FROM, '/segment_id');
    const id = prefixedId('bgj', 12);
    const job = await store.insertSegmentBulkJob(
      tx,
      tenantId,
      { id, reason: body.reason, memo: body.memo ?? null, type: body.type ?? 'bonus', now: clock.now(tenantId), actor, segmentId: body.segment_id, amount: body.amount },
      members,
    );
    await addJob(tx, BULK_GRANT_TASK, { tenant_id: tenantId, job_id: id }, { jobKey: `points.bulk:${id}`, maxAttempts: 10 });
    await storeResponse(tx, tenantId, BULK_IDEMPOTENCY_SCOPE, key, { job_id: id });
    return { ...presentBulkJob(job), duplicate: false };
  });
}

function bulkEntryId(jobId: string, participantId: string): string {
  return `ple_${createHash('md5').update(`${jobId}/${participantId}`).digest('hex').slice(0, 24)}`;
}

export async function readBulkGrant(db: Database, tenantId: string, jobId: string) {
  const row = await db.tenant(tenantId, (tx) => store.readBulkJob(tx, tenantId, jobId, BULK_FAILURES_LISTED_MAX));
  if (!row) throw notFound('bulk grant job');
  return presentBulkJob(row);
}

/**
 * Runs a bulk grant job to the end, one batch per transaction, BULK_GRANT_PARALLEL
 * batches at a time; a retry continues where it stopped (granted and failed
 * items are marked in their batch's transaction). A participant whose
 * lifetime points would pass POINTS_BALANCE_MAX is not granted and counts as
 * failed (`balance_limit`).
 */
export async function runBulkGrant(db: Database, tenantId: string, jobId: string): Promise<void> {
  const job = await db.tenant(tenantId, async (tx) => {
    const row = await store.readBulkJob(tx, tenantId, jobId, 0);
    if (row && row.status !== 'completed') await store.markBulkJob(tx, tenantId, jobId, 'running', clock.now());
    return row;
  });
  if (!job || job.status === 'completed') return;
  const runBatches = async () => {
    for (;;) {
      const taken = await db.tenant(tenantId, async (tx) => {
        await useBatchMemory(tx);
        const batch = await store.takeBulkBatch(tx, tenantId, jobId, BULK_GRANT_BATCH, POINTS_BALANCE_MAX - POINTS_PER_OPERATION_MAX);
        if (batch.participantIds.length === 0) return 0;
        const now = clock.now(tenantId);
        const grants: Array<{ input: GrantInput; values: store.GrantValues }> = [];
        const failed: string[] = [];
        batch.participantIds.forEach((participantId, i) => {
          const lifetime = BigInt(batch.lifetimesNearLimit[participantId] ?? 0);
          if (lifetime + BigInt(batch.amounts[i]) > BigInt(POINTS_BALANCE_MAX)) {
            failed.push(participantId);
            return;
          }
          const input: GrantInput = { participantId, amount: batch.amounts[i], reason: job.reason, memo: job.memo, type: job.type as GrantType, source: { kind: 'bulk', id: jobId } };
          // The entry id derives from the job and the participant: a batch run twice could not write a second entry (primary key).
          grants.push({ input, values: { ...grantValues(tenantId, input, now), entryId: bulkEntryId(jobId, participantId) } });
        });
        if (grants.length > 0) await store.insertGrantsWithEvents(tx, tenantId, grants.map((g) => g.values), currentTraceparent());
        await store.markBulkItems(
          tx,
          tenantId,
          jobId,
          { participantIds: grants.map((g) => g.input.participantId), entryIds: grants.map((g) => g.values.entryId) },
          { participantIds: failed, reason: BULK_FAILURE_BALANCE_LIMIT },
        );
        const granted = grants.length;
        await store.countBulkProgress(tx, tenantId, jobId, granted, failed.length);
        return batch.participantIds.length;
      });
      if (taken === 0) return;
    }
  };
  try {
    await Promise.all(Array.from({ length: BULK_GRANT_PARALLEL }, runBatches));
    await db.tenant(tenantId, (tx) => store.markBulkJob(tx, tenantId, jobId, 'completed', clock.now()));
  } catch (error) {
    await db.tenant(tenantId, (tx) => store.markBulkJob(tx, tenantId, jobId, 'running', clock.now(), (error as Error).message)).catch(() => undefined);
    throw error;
  }
}
