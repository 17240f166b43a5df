import { List, Text } from '@mantine/core';
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import type { EventOutcome, RuleResult } from '../../../hooks/api/events';
import { useFormat, type Format } from '../../../lib/format';

/**
 * Why an event earned what it did, in plain words, from its outcome: each
 * rule listening to its name with its result (the API's `outcome.rules`),
 * and, when none listens, the nearest event names that rules do listen to.
 */
type Reading = { actual?: unknown; actual_type: string; actual_withheld?: 'personal' };

const shown = (value: unknown) => JSON.stringify(value);

function valueOf(t: TFunction, reading: Reading): string {
  if (reading.actual_withheld === 'personal') return t('events.value.personal');
  if (reading.actual_type === 'missing' || reading.actual_type === 'null') return t(`events.value.${reading.actual_type}`);
  const type = t(`events.type.${reading.actual_type}`);
  return reading.actual === undefined ? t('events.value.of', { type }) : t('events.value.typed', { value: shown(reading.actual), type });
}

/** One rule's result as a sentence. */
export function ruleSentence(t: TFunction, f: Format, rule: RuleResult): string {
  switch (rule.result) {
    case 'applied': {
      const parts = [t('events.sentence.applied', { count: rule.points })];
      if (rule.cap) parts.push(t('events.sentence.cutByCap', { wanted: rule.points_wanted, max: rule.cap.max, period: t(`events.period.${rule.cap.period}`) }));
      else if (rule.budget) parts.push(t('events.sentence.cutByBudget', { wanted: rule.points_wanted, budget: rule.budget.budget_points }));
      return parts.join(' ');
    }
    case 'condition_failed': {
      const condition = rule.condition!;
      const needs = t(`events.needs.${condition.operator}`, { value: shown(condition.expected) });
      const key = condition.group === 'any' ? 'events.sentence.anyCondition' : 'events.sentence.condition';
      return t(key, { fact: condition.fact, actual: valueOf(t, condition), needs });
    }
    case 'capped': {
      const cap = rule.cap!;
      const key = cap.limit === 'times' ? 'events.sentence.cappedTimes' : 'events.sentence.cappedPoints';
      return t(key, { max: cap.max, used: cap.used, period: t(`events.period.${cap.period}`) });
    }
    case 'budget_spent':
      return t('events.sentence.budgetSpent', { budget: rule.budget?.budget_points });
    case 'rate_unusable':
      return t('events.sentence.rateUnusable', { fact: rule.rate!.fact, actual: valueOf(t, rule.rate!) });
    case 'outside_window':
      return rule.window!.event_is === 'before_start'
        ? t('events.sentence.beforeStart', { at: f.dateTime(rule.window!.starts_at!) })
        : t('events.sentence.afterEnd', { at: f.dateTime(rule.window!.ends_at!) });
    case 'stopped':
      return t('events.sentence.stopped');
    case 'other_variant':
      return t('events.sentence.otherVariant', { variant: rule.experiment?.variant_key });
  }
}

/** A short summary for the events list: the points, or why there were none. */
export function outcomeSummary(t: TFunction, outcome: EventOutcome | null): string {
  if (!outcome) return '—';
  if (outcome.points_awarded > 0) return t('events.summary.points', { count: outcome.points_awarded });
  if (outcome.unmatched_event_name) return t('events.summary.unmatched');
  const first = outcome.rules.find((rule) => rule.result !== 'applied') ?? outcome.rules[0];
  return first ? t('events.summary.none', { reason: t(`events.result.${first.result}`) }) : '—';
}

export function RuleResults({ eventName, outcome }: { eventName: string; outcome: EventOutcome | null }) {
  const { t } = useTranslation();
  const f = useFormat();
  if (!outcome) return <Text size="sm">{t('events.notProcessed')}</Text>;
  const unmatched = outcome.unmatched_event_name;
  return (
    <>
      {unmatched && (
        <Text size="sm">
          {t('events.unmatched', { name: eventName })}
          {unmatched.nearest.length > 0 && ` ${t('events.nearest', { names: unmatched.nearest.map((name) => `"${name}"`).join(', ') })}`}
        </Text>
      )}
      {!unmatched && outcome.rules.length === 0 && <Text size="sm">{t('events.noRules')}</Text>}
      {outcome.rules.length > 0 && (
        <List spacing="xs" size="sm">
          {outcome.rules.map((rule) => (
            <List.Item key={rule.rule_id}>
              <Text span fw={600} size="sm">
                {rule.rule_name}
              </Text>
              {' — '}
              {ruleSentence(t, f, rule)}
            </List.Item>
          ))}
        </List>
      )}
    </>
  );
}
