import type { Database, Tx } from '../../platform/db.js';
import { notFound } from '../../platform/errors.js';
import { clock } from '../../platform/clock.js';
import { sandboxPairOf, tenantEnvironment } from '../../platform/environments.js';
import { EXPORT_TASK, IMPORT_TASK } from '../files/index.js';
import { BULK_GRANT_TASK, TIER_REEVALUATION_TASK } from '../points/index.js';
import { RUN_TASK } from '../rules/index.js';
import { PROCESS_TASK } from '../ingestion/index.js';
import { BULK_REPLAY_TASK, DELIVER_TASK } from '../webhooks/index.js';
import { ADVANCE_TASK } from '../contests/index.js';

/**
 * Resetting a sandbox (docs/decisions/sandbox.md, "Resetting a sandbox").
 *
 * Every table with a `tenant_id` column is listed in exactly one of the three
 * lists below; reset.test.ts fails when a table of the schema is in none, so a
 * new table is classified when it is added, never forgotten by the reset.
 */

/** What participants and integrations produced: deleted by every reset. */
export const DATA_TABLES = [
  'activity_attempts',
  'activity_facts',
  'activity_participations',
  'analytics_webhook_delivery_counts',
  'challenge_enrollments',
  'challenge_fact_applications',
  'contest_entries',
  'contest_entry_status_history',
  'contest_prize_allocations',
  'contest_rank_snapshots',
  'contest_reviews',
  'contest_score_events',
  'earn_rule_occurrence_participants',
  'earn_rule_occurrences',
  'earn_rule_usage',
  'engagement_impressions',
  'event_idempotency_keys',
  'event_names_seen',
  'experiment_assignments',
  'file_export_chunks',
  'file_exports',
  'file_import_errors',
  'file_import_rows',
  'file_imports',
  'idempotency_keys',
  'ingested_events',
  'ingestion_pending',
  'ingestion_usage',
  'leaderboard_period_points',
  'leaderboard_rank_lookup',
  'leaderboard_rank_pages',
  'leaderboard_snapshots',
  'outbox_events',
  'outbox_pending',
  'participant_badges',
  'participant_custom_values',
  'participant_streaks',
  'participants',
  'points_balances',
  'points_bulk_grant_items',
  'points_bulk_grants',
  'points_ledger',
  'points_lot_reminders',
  'points_lots',
  'referral_codes',
  'referral_conversions',
  'referral_milestone_grants',
  'reward_claims',
  'screen_visits',
  'segment_members',
  'sessions',
  'spin_segment_awards',
  'webhook_deliveries',
  'webhook_delivery_attempts',
  'webhook_replay_jobs',
] as const;

/** How the program is set up: kept by `scope: "data"`, deleted by `scope: "everything"`. */
export const CONFIGURATION_TABLES = [
  'badge_definitions',
  'challenge_status_moves',
  'challenges',
  'contests',
  'earn_rules',
  'engagement_activities',
  'engagements',
  'experiments',
  'leaderboard_period_tenants',
  'leaderboards',
  'participant_custom_fields',
  'points_multipliers',
  'points_settings',
  'points_tiers',
  'publication_reviews',
  'referral_settings',
  'reward_codes',
  'rewards',
  'segments',
  'streak_definitions',
  'webhook_destinations',
  'webhook_settings',
] as const;

/**
 * Never deleted: credentials and console users (a reset must not lock the
 * tester out), the audit log and the privacy records (append-only for the
 * application role: who read personal data, which participants were erased),
 * and the test clock (a setting of the sandbox, moved with its own routes).
 */
export const KEPT_TABLES = ['admin_users', 'api_keys', 'audit_log', 'console_sessions', 'participant_erasures', 'pii_access_log', 'tenant_test_clocks'] as const;

/** Background jobs that work on data: deleted by every reset (a job whose rows are gone would find nothing, or fail and retry). */
export const DATA_TASKS = [PROCESS_TASK, DELIVER_TASK, BULK_REPLAY_TASK, BULK_GRANT_TASK, TIER_REEVALUATION_TASK, RUN_TASK, EXPORT_TASK, IMPORT_TASK] as const;
/** Background jobs that drive configuration (a contest's next status): deleted only with the configuration. */
export const CONFIGURATION_TASKS = [ADVANCE_TASK] as const;

export const RESET_SCOPES = ['data', 'everything'] as const;
export type ResetScope = (typeof RESET_SCOPES)[number];

export interface ResetResult {
  sandbox_tenant_id: string;
  scope: ResetScope;
  deleted: Record<string, number>;
  released_reward_codes: number;
  reset_at: string;
}

/** The key under which deleted background jobs are counted in `deleted`. */
export const JOBS_KEY = 'graphile_worker.jobs';

/**
 * The sandbox a credential resets: its own tenant when it is a sandbox's, the
 * live tenant's sandbox otherwise (404 SANDBOX_NOT_FOUND when it has none).
 */
export async function sandboxToReset(db: Database, tenantId: string): Promise<string> {
  if ((await tenantEnvironment(db, tenantId)) === 'sandbox') return tenantId;
  const pair = await sandboxPairOf(db, tenantId);
  if (!pair) throw notFound('a sandbox for this tenant (POST /tenant/sandbox makes it)', 'SANDBOX_NOT_FOUND');
  return pair.sandboxTenantId;
}

/**
 * The tables in an order that deletes every row before the rows it refers to
 * (children first), from the foreign keys among them; so each DELETE removes
 * exactly its own table's rows and the counts are exact.
 */
async function deletionOrder(tx: Tx, tables: readonly string[]): Promise<string[]> {
  const { rows } = await tx.query<{ child: string; parent: string }>(
    `SELECT DISTINCT c.relname::text AS child, p.relname::text AS parent
     FROM pg_constraint k
     JOIN pg_class c ON c.oid = k.conrelid
     JOIN pg_class p ON p.oid = k.confrelid
     WHERE k.contype = 'f' AND k.connamespace = 'public'::regnamespace AND c.oid <> p.oid
       AND c.relname = ANY ($1::text[]) AND p.relname = ANY ($1::text[])`,
    [tables],
  );
  const children = new Map<string, Set<string>>(tables.map((table) => [table, new Set<string>()]));
  for (const { child, parent } of rows) children.get(parent)!.add(child);
  const ordered: string[] = [];
  const placed = new Set<string>();
  // Depth-first: a table is placed after every table that refers to it. The schema's
  // foreign keys among tenant tables form no cycle (a cycle would loop forever: guarded).
  const visit = (table: string, depth: number): void => {
    if (placed.has(table)) return;
    if (depth > tables.length) throw new Error(`sandbox reset: the foreign keys among ${table} and its children form a cycle`);
    for (const child of [...children.get(table)!].sort()) visit(child, depth + 1);
    placed.add(table);
    ordered.push(table);
  };
  for (const table of [...tables].sort()) visit(table, 0);
  return ordered;
}

/**
 * Resets the sandbox in one transaction: a failure leaves it as it was.
 *
 * The transaction first locks the sandbox's tenant row and its participants
 * (FOR UPDATE). Every write that adds a participant or a configuration row
 * checks its foreign key with a KEY SHARE lock on the tenant row, and every
 * write to a participant's state (a balance, an ingested event, a session)
 * with one on the participant: those wait for the reset to commit and land
 * after it, and the writes already under way finish before the reset deletes.
 * A write that waited on a participant the reset then deleted fails its
 * foreign key and is retried whole by `db.tenant` (23503 is retryable), which
 * creates the participant anew. The hottest rows (events, idempotency keys,
 * sessions) carry no key to the tenant row since migration 1465; they are
 * written in the same transactions as such writes. So the rows left
 * afterwards are whole (a balance and its ledger entries go together) and the
 * counts are exact. A deadlock with such a write is retried as well.
 *
 * `ownIdempotencyKey`: the Idempotency-Key the reset request itself claimed in
 * the sandbox (when its credential is the sandbox's), kept so that the claim
 * can store the answer.
 *
 * The whole transaction runs as the sandbox tenant under row-level security,
 * so it cannot reach any other tenant's rows, whatever it is asked.
 */
export async function resetSandbox(db: Database, sandboxTenantId: string, scope: ResetScope, ownIdempotencyKey: string | null = null): Promise<ResetResult> {
  const tables: string[] = scope === 'everything' ? [...DATA_TABLES, ...CONFIGURATION_TABLES] : [...DATA_TABLES];
  const tasks: string[] = scope === 'everything' ? [...DATA_TASKS, ...CONFIGURATION_TASKS] : [...DATA_TASKS];
  return db.tenant(sandboxTenantId, async (tx) => {
    const { rows: tenant } = await tx.query<{ environment: string }>('SELECT environment FROM tenants WHERE id = $1 FOR UPDATE', [sandboxTenantId]);
    // Programmer error, not a user's: the caller resolved a sandbox. Never delete a live tenant's rows.
    if (tenant[0]?.environment !== 'sandbox') throw new Error(`sandbox reset: tenant ${sandboxTenantId} is not a sandbox`);
    await tx.query('SELECT count(*) FROM (SELECT 1 FROM participants WHERE tenant_id = $1 FOR UPDATE) locked', [sandboxTenantId]);

    const deleted: Record<string, number> = {};
    for (const table of await deletionOrder(tx, tables)) {
      // Table names come from the constant lists above, never from the request. The reset's own
      // Idempotency-Key claim (a sandbox credential's) stays, so that a retry of it replays the answer.
      const result =
        table === 'idempotency_keys' && ownIdempotencyKey !== null
          ? await tx.query("DELETE FROM idempotency_keys WHERE tenant_id = $1 AND NOT (scope = 'http' AND key = $2 AND response IS NULL)", [sandboxTenantId, ownIdempotencyKey])
          : await tx.query(`DELETE FROM ${table} WHERE tenant_id = $1`, [sandboxTenantId]);
      deleted[table] = result.rowCount ?? 0;
    }

    let released = 0;
    if (scope === 'data') {
      // The catalogue stays; what participants took from it goes back: pool codes are free
      // again and each reward's claim count starts over, as before any participant.
      released = (await tx.query('UPDATE reward_codes SET claim_id = NULL WHERE tenant_id = $1 AND claim_id IS NOT NULL', [sandboxTenantId])).rowCount ?? 0;
      await tx.query('UPDATE rewards SET claimed_count = 0 WHERE tenant_id = $1 AND claimed_count <> 0', [sandboxTenantId]);
    }

    // Jobs waiting to run. A running job (locked) is left to finish: deleting its row would
    // leave its queue locked by the worker (graphile-worker unlocks a queue through the job row),
    // and it finds the sandbox's rows gone or waits for this transaction.
    const jobs = await tx.query(
      `DELETE FROM graphile_worker._private_jobs j
       USING graphile_worker._private_tasks t
       WHERE t.id = j.task_id AND t.identifier = ANY ($2::text[]) AND j.locked_at IS NULL AND j.payload ->> 'tenant_id' = $1::text`,
      [sandboxTenantId, tasks],
    );
    deleted[JOBS_KEY] = jobs.rowCount ?? 0;

    const sorted = Object.fromEntries(Object.entries(deleted).sort(([a], [b]) => a.localeCompare(b)));
    return { sandbox_tenant_id: sandboxTenantId, scope, deleted: sorted, released_reward_codes: released, reset_at: clock.now(sandboxTenantId).toISOString() };
  });
}
