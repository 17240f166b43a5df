import type { Database, Tx } from '../../platform/db.js';
import { invalid, notFound, ruleViolation } from '../../platform/errors.js';
import { scanStoredEvents } from '../../platform/event-store.js';
import { hasBadgeInTx } from '../badges/index.js';
import { conditionsHold, type FactSource } from './conditions.js';
import { applyRuleInTx, participantAttributes, type RuleState, type RuleTarget } from './engine.js';
import { points } from './ports.js';
import { segmentIdsOf, segmentMemberships, type SegmentMemberships } from './segment-conditions.js';
import { draftFromBody, validateRuleInTx } from './service.js';
import * as store from './store.js';
import { SIMULATION_RANGE_DAYS_MAX, type CreateRuleBody } from './schemas.js';

/**
 * Rule simulation: replays the stored events of a time range through a draft
 * (or existing) rule and reports what it would have awarded. Every decision
 * (conditions, multiplier, caps, budget, badges) is taken by the live
 * engine's `applyRuleInTx`, given state kept in memory instead of the
 * database (`simulationState`), in a READ ONLY transaction, so it cannot
 * change anything. Usage and the budget start from zero at `from`;
 * participant attributes and segment memberships are read as they are now;
 * streaks are not simulated.
 */
export const SIMULATION_EVENTS_MAX = 20_000;
const SCAN_PAGE_SIZE = 1_000;
const DAY_MS = 86_400_000;

/** Period starts as the database computes them for usage rows (store.lockUsage): the tenant's local day, and the Monday of its week. */
function localPeriods(timezone: string): (at: Date) => { day: string; week: string } {
  const format = new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' });
  return (at) => {
    const day = format.format(at);
    const date = new Date(`${day}T00:00:00Z`);
    const monday = new Date(date.getTime() - ((date.getUTCDay() + 6) % 7) * DAY_MS);
    return { day, week: monday.toISOString().slice(0, 10) };
  };
}

/** The rule's usage, budget and badges kept in memory for a simulation (see RuleState). */
function simulationState(tx: Tx, tenantId: string, timezone: string, budget: { left: number }): RuleState {
  const periodsOf = localPeriods(timezone);
  const counters = new Map<string, { times: number; points: number }>();
  const keyOf = (participantId: string, period: string, start: string) => `${participantId}|${period}|${start}`;
  const badgesSeen = new Set<string>();
  return {
    async usage(_rule, participantId, at, periods) {
      const local = periodsOf(at);
      return periods.map((period) => {
        const start = period === 'day' ? local.day : period === 'week' ? local.week : '1970-01-01';
        const used = counters.get(keyOf(participantId, period, start)) ?? { times: 0, points: 0 };
        return { period, period_start: start, ...used };
      });
    },
    async addUsage(_rule, participantId, usage, points) {
      for (const u of usage) counters.set(keyOf(participantId, u.period, u.period_start), { times: u.times + 1, points: u.points + points });
    },
    async spendBudget(_rule, wanted) {
      const taken = Math.min(wanted, budget.left);
      budget.left -= taken;
      return taken;
    },
    async award() {
      // Counted from the rule's result by the caller.
    },
    async awardBadge(_rule, participantId, badgeCode) {
      const key = `${participantId}|${badgeCode}`;
      if (badgesSeen.has(key)) return false;
      badgesSeen.add(key);
      return !(await hasBadgeInTx(tx, tenantId, participantId, badgeCode));
    },
    async continueStreaks() {
      return [];
    },
  };
}

export async function simulateRule(
  db: Database,
  tenantId: string,
  body: { rule?: CreateRuleBody; rule_id?: string; from: string; to: string; participant_id?: string },
) {
  if ((body.rule === undefined) === (body.rule_id === undefined)) throw invalid('give exactly one of "rule" (a draft) or "rule_id"');
  const from = new Date(body.from);
  const to = new Date(body.to);
  if (from >= to) throw invalid('"from" must be before "to"');
  if (to.getTime() - from.getTime() > SIMULATION_RANGE_DAYS_MAX * DAY_MS) throw invalid(`the range may span at most ${SIMULATION_RANGE_DAYS_MAX} days`);

  return db.tenant(tenantId, async (tx) => {
    await tx.query('SET TRANSACTION READ ONLY');
    let rule: store.RuleRow;
    if (body.rule_id) {
      const found = await store.findRule(tx, tenantId, body.rule_id);
      if (!found) throw notFound(`earn rule "${body.rule_id}"`);
      rule = found;
    } else {
      const draft = draftFromBody(body.rule!);
      await validateRuleInTx(tx, tenantId, draft);
      rule = { ...draft, id: 'draft', budget_spent: 0, created_at: from, updated_at: from };
    }
    if (rule.trigger !== 'event') throw ruleViolation('only event rules can be simulated against stored events', 'RULE_NOT_SIMULATABLE');

    const budget = { left: rule.budget_points ?? Number.POSITIVE_INFINITY };
    const state = simulationState(tx, tenantId, await store.tenantTimezone(tx, tenantId), budget);
    const attributes = new Map<string, FactSource['participant']>();
    const memberships = new Map<string, SegmentMemberships>();
    const ruleSegments = segmentIdsOf([rule]);
    /** The timestamp of the event that spent the last of the budget, when one did. */
    let budgetExhaustedAt: Date | null = null;
    const result = { events_scanned: 0, events_matched: 0, points: 0, badges_awarded: 0, capped_events: 0, truncated: false };
    const participants = new Set<string>();

    let after: { occurredAt: Date; seq: number } | null = null;
    scanning: for (;;) {
      const page = await scanStoredEvents(tx, tenantId, {
        eventName: rule.event_name!,
        from,
        to,
        participantId: body.participant_id ?? null,
        after,
        limit: SCAN_PAGE_SIZE,
      });
      for (const event of page) {
        if (result.events_scanned >= SIMULATION_EVENTS_MAX) {
          result.truncated = true;
          break scanning;
        }
        result.events_scanned += 1;
        if ((rule.starts_at && event.occurred_at < rule.starts_at) || (rule.ends_at && event.occurred_at >= rule.ends_at)) continue;
        let participant = attributes.get(event.participant_id);
        if (!participant) {
          participant = participantAttributes(tx, tenantId, event.participant_id);
          attributes.set(event.participant_id, participant);
        }
        let segments = memberships.get(event.participant_id);
        if (!segments) {
          segments = segmentMemberships(tx, tenantId, event.participant_id, ruleSegments);
          memberships.set(event.participant_id, segments);
        }
        if (!(await conditionsHold(rule.conditions, { properties: event.properties, participant, segments }))) continue;
        const target: RuleTarget = {
          participantId: event.participant_id,
          engagementId: null,
          properties: event.properties,
          at: event.occurred_at,
          eventName: event.event_name,
          memo: 'simulation',
        };
        const multiplierOf = () =>
          points.multiplierForEventInTx(tx, tenantId, { participantId: event.participant_id, eventName: event.event_name, attributes: event.properties, at: event.occurred_at });
        const applied = await applyRuleInTx(tx, tenantId, rule, target, multiplierOf, state);
        if (!applied) {
          result.capped_events += 1;
          continue;
        }
        if (applied.points < applied.points_wanted) result.capped_events += 1;
        if (budget.left === 0 && budgetExhaustedAt === null) budgetExhaustedAt = event.occurred_at;
        result.events_matched += 1;
        result.points += applied.points;
        result.badges_awarded += applied.badges_awarded.length;
        participants.add(event.participant_id);
      }
      if (page.length < SCAN_PAGE_SIZE) break;
      const last = page[page.length - 1];
      after = { occurredAt: last.occurred_at, seq: last.seq };
    }
    return {
      from: from.toISOString(),
      to: to.toISOString(),
      participants: participants.size,
      ...result,
      budget_exhausted_at: budgetExhaustedAt === null ? null : budgetExhaustedAt.toISOString(),
    };
  });
}
