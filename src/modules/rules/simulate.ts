import type { Database, Tx } from '../../platform/db.js';
import { invalid, notFound, ruleViolation } from '../../platform/errors.js';
import { scanStoredEvents } from '../../platform/event-store.js';
import { hasBadgeInTx } from '../badges/index.js';
import { conditionsHold, type FactSource } from './conditions.js';
import { effectPoints, participantAttributes } from './engine.js';
import { points } from './ports.js';
import { draftFromBody, validateRuleInTx } from './service.js';
import * as store from './store.js';
import { SIMULATION_RANGE_DAYS_MAX, type CreateRuleBody } from './schemas.js';

/**
 * Rule simulation: replays the stored events of a time range through a draft
 * (or existing) rule and reports what it would have awarded. It runs in a
 * READ ONLY transaction, so it cannot change anything: caps and the budget
 * are tracked in memory, and participant attributes are read as they are now.
 */
export const SIMULATION_EVENTS_MAX = 20_000;
const SCAN_PAGE_SIZE = 1_000;
const DAY_MS = 86_400_000;

function localPeriods(timezone: string): (at: Date) => { day: string; week: string } {
  const format = new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' });
  return (at) => {
    const day = format.format(at);
    const date = new Date(`${day}T00:00:00Z`);
    const monday = new Date(date.getTime() - ((date.getUTCDay() + 6) % 7) * DAY_MS);
    return { day, week: monday.toISOString().slice(0, 10) };
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
    let rule: store.RuleDraft & { id?: string };
    if (body.rule_id) {
      const found = await store.findRule(tx, tenantId, body.rule_id);
      if (!found) throw notFound(`earn rule "${body.rule_id}"`);
      rule = found;
    } else {
      rule = draftFromBody(body.rule!);
      await validateRuleInTx(tx, tenantId, rule);
    }
    if (rule.trigger !== 'event') throw ruleViolation('only event rules can be simulated against stored events', 'RULE_NOT_SIMULATABLE');

    const periodsOf = localPeriods(await store.tenantTimezone(tx, tenantId));
    const attributes = new Map<string, FactSource['participant']>();
    const usage = new Map<string, { times: number; points: number }>();
    const badgesSeen = new Set<string>();
    let budgetLeft = rule.budget_points ?? Number.POSITIVE_INFINITY;
    /** The timestamp of the event that spent the last of the budget, when one did. */
    let budgetExhaustedAt: Date | null = null;
    const result = { events_scanned: 0, events_matched: 0, points: 0, badges_awarded: 0, capped_events: 0, truncated: false };
    const participants = new Set<string>();
    const capPeriods = (['per_day', 'per_week', 'lifetime'] as const).filter((k) => rule.caps[k] !== undefined);

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
        if (!(await conditionsHold(rule.conditions, { properties: event.properties, participant }))) continue;

        let wanted = rule.effects.reduce((sum, e) => sum + (e.type === 'award_points' ? effectPoints(e, event.properties) : 0), 0);
        if (wanted > 0) {
          const m = await points.multiplierForEventInTx(tx, tenantId, {
            participantId: event.participant_id,
            eventName: event.event_name,
            attributes: event.properties,
            at: event.occurred_at,
          });
          if (m.multiplierId !== null) wanted = Math.round(wanted * m.multiplier);
        }
        const local = periodsOf(event.occurred_at);
        const keys = capPeriods.map((k) => `${event.participant_id}|${k}|${k === 'per_day' ? local.day : k === 'per_week' ? local.week : ''}`);
        const counters = keys.map((key) => usage.get(key) ?? { times: 0, points: 0 });
        const full = wanted;
        if (capPeriods.some((k, i) => rule.caps[k]!.times !== undefined && counters[i].times >= rule.caps[k]!.times!)) {
          result.capped_events += 1;
          continue;
        }
        capPeriods.forEach((k, i) => {
          const cap = rule.caps[k]!.points;
          if (cap !== undefined) wanted = Math.max(0, Math.min(wanted, cap - counters[i].points));
        });
        wanted = Math.min(wanted, budgetLeft);
        budgetLeft -= wanted;
        if (budgetLeft === 0 && budgetExhaustedAt === null) budgetExhaustedAt = event.occurred_at;
        if (wanted < full) result.capped_events += 1;
        keys.forEach((key, i) => usage.set(key, { times: counters[i].times + 1, points: counters[i].points + wanted }));

        result.events_matched += 1;
        result.points += wanted;
        participants.add(event.participant_id);
        for (const effect of rule.effects) {
          if (effect.type !== 'award_badge') continue;
          const key = `${event.participant_id}|${effect.badge_code}`;
          if (badgesSeen.has(key)) continue;
          badgesSeen.add(key);
          if (!(await hasBadgeInTx(tx, tenantId, event.participant_id, effect.badge_code!))) result.badges_awarded += 1;
        }
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
