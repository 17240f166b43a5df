import type { Tx } from '../../platform/db.js';
import { batchCached } from '../../platform/batch.js';
import type { Caps, Conditions, Effect } from './schemas.js';

/** Every SQL statement on earn_rules, earn_rule_usage and the scheduled-run tables. */
export interface RuleRow {
  id: string;
  name: string;
  description: string | null;
  status: 'draft' | 'active' | 'paused';
  trigger: 'event' | 'birthday' | 'recurring';
  event_name: string | null;
  schedule: 'daily' | 'weekly' | 'monthly' | null;
  conditions: Conditions;
  effects: Effect[];
  caps: Caps;
  budget_points: number | null;
  budget_spent: number;
  priority: number;
  stop_processing: boolean;
  starts_at: Date | null;
  ends_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type RuleDraft = Omit<RuleRow, 'id' | 'budget_spent' | 'created_at' | 'updated_at'>;

const COLUMNS = `id, name, description, status, trigger, event_name, schedule, conditions, effects, caps, budget_points, budget_spent,
  priority, stop_processing, starts_at, ends_at, created_at, updated_at`;

export async function insertRule(tx: Tx, tenantId: string, id: string, rule: RuleDraft, now: Date): Promise<RuleRow> {
  const { rows } = await tx.query<RuleRow>(
    `INSERT INTO earn_rules (tenant_id, id, name, description, status, trigger, event_name, schedule, conditions, effects, caps,
                             budget_points, priority, stop_processing, starts_at, ends_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $17)
     RETURNING ${COLUMNS}`,
    [
      tenantId,
      id,
      rule.name,
      rule.description,
      rule.status,
      rule.trigger,
      rule.event_name,
      rule.schedule,
      JSON.stringify(rule.conditions),
      JSON.stringify(rule.effects),
      JSON.stringify(rule.caps),
      rule.budget_points,
      rule.priority,
      rule.stop_processing,
      rule.starts_at,
      rule.ends_at,
      now,
    ],
  );
  return rows[0];
}

export async function findRule(tx: Tx, tenantId: string, id: string, forUpdate = false): Promise<RuleRow | null> {
  const { rows } = await tx.query<RuleRow>(`SELECT ${COLUMNS} FROM earn_rules WHERE tenant_id = $1 AND id = $2 ${forUpdate ? 'FOR UPDATE' : ''}`, [
    tenantId,
    id,
  ]);
  return rows[0] ?? null;
}

export async function replaceRule(tx: Tx, tenantId: string, id: string, rule: RuleDraft, now: Date): Promise<RuleRow> {
  const { rows } = await tx.query<RuleRow>(
    `UPDATE earn_rules SET name = $3, description = $4, status = $5, event_name = $6, schedule = $7, conditions = $8, effects = $9,
       caps = $10, budget_points = $11, priority = $12, stop_processing = $13, starts_at = $14, ends_at = $15, updated_at = $16
     WHERE tenant_id = $1 AND id = $2
     RETURNING ${COLUMNS}`,
    [
      tenantId,
      id,
      rule.name,
      rule.description,
      rule.status,
      rule.event_name,
      rule.schedule,
      JSON.stringify(rule.conditions),
      JSON.stringify(rule.effects),
      JSON.stringify(rule.caps),
      rule.budget_points,
      rule.priority,
      rule.stop_processing,
      rule.starts_at,
      rule.ends_at,
      now,
    ],
  );
  return rows[0];
}

export async function deleteRule(tx: Tx, tenantId: string, id: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM earn_rules WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
  return rowCount === 1;
}

export async function listRules(
  tx: Tx,
  tenantId: string,
  filter: { eventName?: string; status?: string; trigger?: string },
  after: { created_at: string; id: string } | null,
  limit: number,
): Promise<RuleRow[]> {
  const { rows } = await tx.query<RuleRow>(
    `SELECT ${COLUMNS} FROM earn_rules
     WHERE tenant_id = $1 AND ($2::text IS NULL OR event_name = $2) AND ($3::text IS NULL OR status = $3) AND ($4::text IS NULL OR trigger = $4)
       AND ($5::timestamptz IS NULL OR (created_at, id) > ($5::timestamptz, $6::text))
     ORDER BY created_at, id
     LIMIT $7`,
    [tenantId, filter.eventName ?? null, filter.status ?? null, filter.trigger ?? null, after?.created_at ?? null, after?.id ?? null, limit],
  );
  return rows;
}

/**
 * The active event rules listening to an event name, whatever their window,
 * highest priority first: the engine checks each rule's window against the
 * event timestamp itself, to say when one is outside it. In a processing
 * batch they are read once per event name.
 */
export async function eventRulesAnyTime(tx: Tx, tenantId: string, eventName: string): Promise<RuleRow[]> {
  return batchCached(tx, `rules:event:${tenantId}:${eventName}`, () => readEventRules(tx, tenantId, eventName)) ?? readEventRules(tx, tenantId, eventName);
}

async function readEventRules(tx: Tx, tenantId: string, eventName: string): Promise<RuleRow[]> {
  const { rows } = await tx.query<RuleRow>(
    `SELECT ${COLUMNS} FROM earn_rules
     WHERE tenant_id = $1 AND status = 'active' AND trigger = 'event' AND event_name = $2
     ORDER BY priority DESC, created_at, id`,
    [tenantId, eventName],
  );
  return rows;
}

/** The most event names with active rules read to suggest the nearest one to an event no rule listens to. */
export const LIVE_EVENT_NAMES_MAX = 1_000;

/** The event names that active event rules listen to (read once per processing batch). */
export async function liveEventNames(tx: Tx, tenantId: string): Promise<string[]> {
  const read = async () => {
    const { rows } = await tx.query<{ event_name: string }>(
      `SELECT DISTINCT event_name FROM earn_rules WHERE tenant_id = $1 AND status = 'active' AND trigger = 'event' ORDER BY event_name LIMIT $2`,
      [tenantId, LIVE_EVENT_NAMES_MAX],
    );
    return rows.map((r) => r.event_name);
  };
  return batchCached(tx, `rules:event-names:${tenantId}`, read) ?? read();
}

export interface UsageRow {
  period: 'day' | 'week' | 'lifetime';
  period_start: string;
  times: number;
  points: number;
}

/**
 * Creates (if new), locks and reads the participant's usage rows of the rule
 * for the periods `at` falls in (tenant time zone). The no-op update of the
 * upsert takes the row lock, so concurrent events of one participant queue
 * here and each sees the usage of the one before it.
 */
export async function lockUsage(tx: Tx, tenantId: string, ruleId: string, participantId: string, at: Date, periods: string[]): Promise<UsageRow[]> {
  const { rows } = await tx.query<UsageRow>(
    `WITH tz AS (SELECT timezone FROM tenants WHERE id = $1),
     periods AS (
       SELECT p.period, p.period_start
       FROM tz, LATERAL (VALUES
         ('day', ($4::timestamptz AT TIME ZONE tz.timezone)::date),
         ('week', date_trunc('week', $4::timestamptz AT TIME ZONE tz.timezone)::date),
         ('lifetime', DATE '1970-01-01')) AS p (period, period_start)
       WHERE p.period = ANY($5::text[])
     )
     INSERT INTO earn_rule_usage (tenant_id, rule_id, participant_id, period, period_start, times, points)
     SELECT $1, $2, $3, period, period_start, 0, 0 FROM periods
     ON CONFLICT (tenant_id, rule_id, participant_id, period, period_start) DO UPDATE SET times = earn_rule_usage.times
     RETURNING period, period_start::text AS period_start, times, points`,
    [tenantId, ruleId, participantId, at, periods],
  );
  return rows;
}

export async function addUsage(tx: Tx, tenantId: string, ruleId: string, participantId: string, usage: UsageRow[], points: number): Promise<void> {
  if (usage.length === 0) return;
  await tx.query(
    `UPDATE earn_rule_usage u SET times = u.times + 1, points = u.points + $4
     FROM unnest($5::text[], $6::date[]) AS p (period, period_start)
     WHERE u.tenant_id = $1 AND u.rule_id = $2 AND u.participant_id = $3 AND u.period = p.period AND u.period_start = p.period_start`,
    [tenantId, ruleId, participantId, points, usage.map((u) => u.period), usage.map((u) => u.period_start)],
  );
}

/**
 * Takes up to `wanted` points from the rule's budget under the rule's row
 * lock and returns what was taken (0 once spent). The lock serializes the
 * budgeted rule's awards, so concurrent events can never overspend it.
 */
export async function spendBudget(tx: Tx, tenantId: string, ruleId: string, wanted: number): Promise<number> {
  const { rows } = await tx.query<{ taken: number }>(
    `WITH current AS (
       SELECT budget_points, budget_spent FROM earn_rules WHERE tenant_id = $1 AND id = $2 FOR UPDATE
     )
     UPDATE earn_rules r SET budget_spent = current.budget_spent + LEAST($3::bigint, current.budget_points - current.budget_spent)
     FROM current
     WHERE r.tenant_id = $1 AND r.id = $2 AND current.budget_points IS NOT NULL
     RETURNING LEAST($3::bigint, current.budget_points - current.budget_spent) AS taken`,
    [tenantId, ruleId, wanted],
  );
  return rows[0]?.taken ?? 0;
}

/** Tenants with active scheduled rules (a cross-tenant scan on the owner pool, to find due work). */
export async function tenantsWithScheduledRules(system: { query: Tx['query'] }): Promise<string[]> {
  const { rows } = await system.query<{ tenant_id: string }>(
    `SELECT DISTINCT tenant_id FROM earn_rules WHERE status = 'active' AND trigger IN ('birthday', 'recurring')`,
  );
  return rows.map((r) => r.tenant_id);
}

export interface DueOccurrence {
  rule_id: string;
  occurrence: string;
}

/**
 * Records the current occurrence of every active scheduled rule of the tenant
 * that has not started yet, and returns those it recorded. An occurrence is
 * the local day (birthday, daily), the Monday of the local week (weekly) or
 * the first of the local month (monthly).
 */
export async function startDueOccurrences(tx: Tx, tenantId: string, now: Date): Promise<DueOccurrence[]> {
  const { rows } = await tx.query<DueOccurrence>(
    `WITH tz AS (SELECT timezone FROM tenants WHERE id = $1),
     due AS (
       SELECT r.id AS rule_id,
              CASE
                WHEN r.trigger = 'birthday' OR r.schedule = 'daily' THEN ($2::timestamptz AT TIME ZONE tz.timezone)::date
                WHEN r.schedule = 'weekly' THEN date_trunc('week', $2::timestamptz AT TIME ZONE tz.timezone)::date
                ELSE date_trunc('month', $2::timestamptz AT TIME ZONE tz.timezone)::date
              END AS occurrence
       FROM earn_rules r, tz
       WHERE r.tenant_id = $1 AND r.status = 'active' AND r.trigger IN ('birthday', 'recurring')
         AND (r.starts_at IS NULL OR r.starts_at <= $2) AND (r.ends_at IS NULL OR r.ends_at > $2)
     )
     INSERT INTO earn_rule_occurrences (tenant_id, rule_id, occurrence, started_at)
     SELECT $1, rule_id, occurrence, $2 FROM due
     ON CONFLICT DO NOTHING
     RETURNING rule_id, occurrence::text AS occurrence`,
    [tenantId, now],
  );
  return rows;
}

/** Marks the participants of this page as handled for the occurrence; returns those not handled before. */
export async function claimOccurrenceParticipants(
  tx: Tx,
  tenantId: string,
  ruleId: string,
  occurrence: string,
  participantIds: string[],
  now: Date,
): Promise<string[]> {
  const { rows } = await tx.query<{ participant_id: string }>(
    `INSERT INTO earn_rule_occurrence_participants (tenant_id, rule_id, occurrence, participant_id, applied_at)
     SELECT $1, $2, $3::date, p, $5 FROM unnest($4::text[]) AS p
     ON CONFLICT DO NOTHING
     RETURNING participant_id`,
    [tenantId, ruleId, occurrence, participantIds, now],
  );
  return rows.map((r) => r.participant_id);
}

export async function finishOccurrence(tx: Tx, tenantId: string, ruleId: string, occurrence: string, now: Date): Promise<void> {
  await tx.query(
    `UPDATE earn_rule_occurrences o SET finished_at = $4,
       participants_applied = (SELECT count(*) FROM earn_rule_occurrence_participants p
                               WHERE p.tenant_id = $1 AND p.rule_id = $2 AND p.occurrence = $3::date)
     WHERE o.tenant_id = $1 AND o.rule_id = $2 AND o.occurrence = $3::date`,
    [tenantId, ruleId, occurrence, now],
  );
}

/** A page of the tenant's participant ids, for recurring rules that apply to everyone. */
export async function participantIdsPage(tx: Tx, tenantId: string, after: string | null, limit: number): Promise<string[]> {
  const { rows } = await tx.query<{ participant_id: string }>(
    `SELECT participant_id FROM participants WHERE tenant_id = $1 AND ($2::text IS NULL OR participant_id > $2) ORDER BY participant_id LIMIT $3`,
    [tenantId, after, limit],
  );
  return rows.map((r) => r.participant_id);
}

export async function tenantTimezone(tx: Tx, tenantId: string): Promise<string> {
  const { rows } = await tx.query<{ timezone: string }>('SELECT timezone FROM tenants WHERE id = $1', [tenantId]);
  return rows[0]?.timezone ?? 'UTC';
}
