import type { Database } from '../../platform/db.js';
import type { JobHandler } from '../../platform/jobs.js';
import { addJob } from '../../platform/jobs.js';
import { clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import { conditionsHold } from './conditions.js';
import { applyRuleInTx, participantAttributes } from './engine.js';
import { birthdayParticipants } from './ports.js';
import { segmentIdsOf, segmentMemberships } from './segment-conditions.js';
import * as store from './store.js';

/**
 * Scheduled earn rules. Every 15 minutes (time zones may be offset by a
 * quarter hour) the tick records, per tenant, the occurrences of birthday and
 * recurring rules that have begun in the tenant time zone, once each, and
 * queues a run for each. A run walks the candidate participants page by page;
 * each participant is claimed for the occurrence in the same transaction as
 * the effects, so a crashed and retried run applies nothing twice.
 */
// graphile-worker's crontab accepts no dots in task names, so the recurring tick uses a colon.
export const TICK_TASK = 'rules:schedule_tick';
export const RUN_TASK = 'rules.run_occurrence';
const PAGE_SIZE = 200;
const PAGES_MAX = 100_000;

export async function startDueOccurrences(db: Database): Promise<number> {
  let started = 0;
  for (const tenantId of await store.tenantsWithScheduledRules(db.system)) {
    started += await db.tenant(tenantId, async (tx) => {
      const due = await store.startDueOccurrences(tx, tenantId, clock.now());
      for (const occurrence of due) {
        await addJob(tx, RUN_TASK, { tenant_id: tenantId, rule_id: occurrence.rule_id, occurrence: occurrence.occurrence }, {
          jobKey: `${RUN_TASK}:${tenantId}:${occurrence.rule_id}:${occurrence.occurrence}`,
        });
      }
      return due.length;
    });
  }
  return started;
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** Applies one occurrence of a scheduled rule to every candidate participant; returns how many it applied to. */
export async function runOccurrence(db: Database, log: Logger, tenantId: string, ruleId: string, occurrence: string): Promise<number> {
  const [year, month, day] = occurrence.split('-').map(Number);
  let after: string | null = null;
  let applied = 0;
  for (let page = 0; page < PAGES_MAX; page++) {
    const outcome = await db.tenant(tenantId, async (tx) => {
      const rule = await store.findRule(tx, tenantId, ruleId);
      if (!rule || rule.status !== 'active' || rule.trigger === 'event') return null;
      let candidates: string[];
      if (rule.trigger === 'birthday') {
        candidates = await birthdayParticipants(tx, tenantId, { month, day, after, limit: PAGE_SIZE });
        // Participants born on 29 February celebrate on the 28th in other years.
        if (month === 2 && day === 28 && !isLeapYear(year)) {
          const leapBorn = await birthdayParticipants(tx, tenantId, { month: 2, day: 29, after, limit: PAGE_SIZE });
          candidates = [...new Set([...candidates, ...leapBorn])].sort().slice(0, PAGE_SIZE);
        }
      } else {
        candidates = await store.participantIdsPage(tx, tenantId, after, PAGE_SIZE);
      }
      if (candidates.length === 0) return null;
      const fresh = await store.claimOccurrenceParticipants(tx, tenantId, ruleId, occurrence, candidates, clock.now());
      let count = 0;
      for (const participantId of fresh) {
        const participant = participantAttributes(tx, tenantId, participantId);
        const segments = segmentMemberships(tx, tenantId, participantId, segmentIdsOf([rule]));
        if (!(await conditionsHold(rule.conditions, { properties: {}, participant, segments }))) continue;
        const result = await applyRuleInTx(
          tx,
          tenantId,
          rule,
          { participantId, engagementId: null, properties: {}, at: clock.now(), eventName: null, memo: `${rule.trigger} rule occurrence ${occurrence}` },
          async () => ({ multiplier: 1, multiplierId: null }),
        );
        if (result) count += 1;
      }
      return { last: candidates[candidates.length - 1], count };
    });
    if (!outcome) break;
    applied += outcome.count;
    after = outcome.last;
  }
  await db.tenant(tenantId, (tx) => store.finishOccurrence(tx, tenantId, ruleId, occurrence, clock.now()));
  return applied;
}

export const scheduleTickJob: JobHandler = async (_payload, { db }) => {
  await startDueOccurrences(db);
};

export const runOccurrenceJob: JobHandler = async (payload, { db, log }) => {
  const { tenant_id: tenantId, rule_id: ruleId, occurrence } = payload as { tenant_id: string; rule_id: string; occurrence: string };
  const applied = await runOccurrence(db, log, tenantId, ruleId, occurrence);
  log.info({ tenantId, ruleId, occurrence, applied }, 'scheduled earn rule occurrence finished');
};
