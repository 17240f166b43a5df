import type { ResponseBody } from '@loyalty/sdk';
import type { RuleInput, RulePatch } from '../../../hooks/api/programs';

/**
 * What the rule editor edits: every field of `EarnRuleInput`, held as the
 * person typed it (numbers may be empty strings), and turned into the API's
 * body on save or backtest. Nothing is validated here: the server checks the
 * rule against its schema and says what is wrong (the form shows its detail).
 */
export type { RuleInput, RulePatch };
export type Rule = ResponseBody<'getRule'>;

export const OPERATORS = ['equals', 'not_equals', 'in', 'not_in', 'gt', 'gte', 'lt', 'lte', 'exists', 'not_exists', 'contains'] as const;
export type Operator = (typeof OPERATORS)[number];
/** Operators that take no value. */
export const VALUELESS: readonly Operator[] = ['exists', 'not_exists'];
export const TRIGGERS = ['event', 'birthday', 'recurring'] as const;
export const SCHEDULES = ['daily', 'weekly', 'monthly'] as const;
export const EFFECT_TYPES = ['award_points', 'award_badge', 'continue_streak'] as const;
export const CAP_PERIODS = ['per_day', 'per_week', 'lifetime'] as const;
export const ROUNDINGS = ['floor', 'round', 'ceil'] as const;
/** The API's own limits (src/modules/rules/schemas.ts): the editor stops offering rows beyond them. */
export const CONDITIONS_MAX = 20;
export const EFFECTS_MAX = 10;

export type NumberText = number | string;

export interface ConditionDraft {
  key: number;
  fact: string;
  operator: Operator;
  /** As typed: a list is comma-separated; `"…"` keeps a number-like value a string. */
  value: string;
}

export interface EffectDraft {
  key: number;
  type: (typeof EFFECT_TYPES)[number];
  /** award_points: a fixed amount, or a rate per unit of a numeric event property. */
  mode: 'fixed' | 'rate';
  points: NumberText;
  property: string;
  points_per_unit: NumberText;
  rounding: (typeof ROUNDINGS)[number];
  max_points: NumberText;
  reason: string;
  badge_code: string;
  streak_code: string;
}

export type CapDraft = { times: NumberText; points: NumberText };

export interface RuleDraft {
  name: string;
  description: string;
  status: 'draft' | 'active' | 'paused';
  trigger: (typeof TRIGGERS)[number];
  event_name: string;
  schedule: (typeof SCHEDULES)[number];
  all: ConditionDraft[];
  any: ConditionDraft[];
  effects: EffectDraft[];
  caps: Record<(typeof CAP_PERIODS)[number], CapDraft>;
  budget_points: NumberText;
  priority: NumberText;
  stop_processing: boolean;
  /** `datetime-local` text, in the browser's time zone; empty for none. */
  starts_at: string;
  ends_at: string;
}

let nextKey = 1;
/** A key for a new row, so React keeps each row's focus when rows above it are removed. */
export const rowKey = (): number => nextKey++;

export function newCondition(): ConditionDraft {
  return { key: rowKey(), fact: 'properties.', operator: 'equals', value: '' };
}

export function newEffect(type: EffectDraft['type'] = 'award_points'): EffectDraft {
  return { key: rowKey(), type, mode: 'fixed', points: 10, property: 'properties.', points_per_unit: 1, rounding: 'floor', max_points: '', reason: '', badge_code: '', streak_code: '' };
}

export function emptyDraft(): RuleDraft {
  return {
    name: '',
    description: '',
    status: 'draft',
    trigger: 'event',
    event_name: '',
    schedule: 'daily',
    all: [],
    any: [],
    effects: [newEffect()],
    caps: { per_day: { times: '', points: '' }, per_week: { times: '', points: '' }, lifetime: { times: '', points: '' } },
    budget_points: '',
    priority: 0,
    stop_processing: false,
    starts_at: '',
    ends_at: '',
  };
}

const blank = (value: NumberText): boolean => value === '' || value === undefined || value === null;
const numberOrUndefined = (value: NumberText): number | undefined => (blank(value) ? undefined : Number(value));

/** One scalar as typed: true, false, null and numbers become themselves; `"…"` stays a string. */
export function parseScalar(text: string): string | number | boolean | null {
  const trimmed = text.trim();
  if (/^".*"$/.test(trimmed)) return trimmed.slice(1, -1);
  if (trimmed === 'true') return true;
  if (trimmed === 'false') return false;
  if (trimmed === 'null') return null;
  if (trimmed !== '' && Number.isFinite(Number(trimmed))) return Number(trimmed);
  return trimmed;
}

function conditionValue(condition: ConditionDraft): unknown {
  if (VALUELESS.includes(condition.operator)) return undefined;
  if (condition.operator === 'in' || condition.operator === 'not_in') return condition.value.split(',').filter((part) => part.trim() !== '').map(parseScalar);
  // A comparison needs a number; a non-number is sent as typed and the server names the mistake.
  if (['gt', 'gte', 'lt', 'lte'].includes(condition.operator)) return parseScalar(condition.value);
  return parseScalar(condition.value);
}

function formatValue(value: unknown): string {
  if (value === undefined) return '';
  if (Array.isArray(value)) return value.map(formatValue).join(', ');
  if (typeof value === 'string') return /^(true|false|null)$/.test(value) || (value.trim() !== '' && Number.isFinite(Number(value))) ? `"${value}"` : value;
  return String(value);
}

function toConditions(rows: ConditionDraft[]) {
  return rows.map((row) => {
    const value = conditionValue(row);
    return value === undefined ? { fact: row.fact.trim(), operator: row.operator } : { fact: row.fact.trim(), operator: row.operator, value };
  });
}

function toEffect(effect: EffectDraft) {
  if (effect.type === 'award_badge') return { type: effect.type, badge_code: effect.badge_code.trim() };
  if (effect.type === 'continue_streak') return { type: effect.type, streak_code: effect.streak_code.trim() };
  const reason = effect.reason.trim() || undefined;
  if (effect.mode === 'fixed') return { type: effect.type, points: Number(effect.points), reason };
  return {
    type: effect.type,
    rate: { property: effect.property.trim(), points_per_unit: Number(effect.points_per_unit), rounding: effect.rounding },
    max_points: numberOrUndefined(effect.max_points),
    reason,
  };
}

function toCaps(caps: RuleDraft['caps']) {
  const out: Record<string, { times?: number; points?: number }> = {};
  for (const period of CAP_PERIODS) {
    const limit = { times: numberOrUndefined(caps[period].times), points: numberOrUndefined(caps[period].points) };
    if (limit.times !== undefined || limit.points !== undefined) out[period] = limit;
  }
  return out;
}

/** `datetime-local` text (browser time zone) to an ISO timestamp, and back. */
export function localToIso(local: string): string | undefined {
  if (!local) return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? local : date.toISOString();
}

export function isoToLocal(iso: string | null | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  const offset_ms = date.getTimezoneOffset() * 60_000;
  return new Date(date.getTime() - offset_ms).toISOString().slice(0, 16);
}

/** The rule as the create and simulate routes take it. */
export function toInput(draft: RuleDraft): RuleInput {
  const all = toConditions(draft.all);
  const any = toConditions(draft.any);
  const conditions = { ...(all.length ? { all } : {}), ...(any.length ? { any } : {}) };
  const caps = toCaps(draft.caps);
  return {
    name: draft.name.trim(),
    description: draft.description.trim() || undefined,
    status: draft.status,
    trigger: draft.trigger,
    event_name: draft.trigger === 'event' ? draft.event_name.trim() : undefined,
    schedule: draft.trigger === 'recurring' ? draft.schedule : undefined,
    conditions: Object.keys(conditions).length ? conditions : undefined,
    effects: draft.effects.map(toEffect),
    caps: Object.keys(caps).length ? caps : undefined,
    budget_points: numberOrUndefined(draft.budget_points),
    priority: numberOrUndefined(draft.priority),
    stop_processing: draft.stop_processing,
    starts_at: localToIso(draft.starts_at),
    ends_at: localToIso(draft.ends_at),
  } as RuleInput;
}

/** The same rule as a change of a stored one: the trigger stays, and a cleared field is sent as null (or empty) so it is removed. */
export function toPatch(draft: RuleDraft): RulePatch {
  const input = toInput(draft) as Record<string, unknown>;
  return {
    name: input.name,
    description: input.description ?? null,
    status: input.status,
    ...(draft.trigger === 'event' ? { event_name: input.event_name } : {}),
    ...(draft.trigger === 'recurring' ? { schedule: input.schedule } : {}),
    conditions: input.conditions ?? {},
    effects: input.effects,
    caps: input.caps ?? {},
    budget_points: input.budget_points ?? null,
    priority: input.priority ?? 0,
    stop_processing: input.stop_processing,
    starts_at: input.starts_at ?? null,
    ends_at: input.ends_at ?? null,
  } as RulePatch;
}

/** A stored rule, as the editor shows it. */
export function fromRule(rule: Rule): RuleDraft {
  const r = rule as unknown as {
    conditions: { all?: Array<{ fact: string; operator: Operator; value?: unknown }>; any?: Array<{ fact: string; operator: Operator; value?: unknown }> };
    effects: Array<{ type: EffectDraft['type']; points?: number; rate?: { property: string; points_per_unit: number; rounding?: EffectDraft['rounding'] }; max_points?: number; reason?: string; badge_code?: string; streak_code?: string }>;
    caps: Partial<Record<(typeof CAP_PERIODS)[number], { times?: number; points?: number }>>;
  };
  const condition = (c: { fact: string; operator: Operator; value?: unknown }): ConditionDraft => ({ key: rowKey(), fact: c.fact, operator: c.operator, value: formatValue(c.value) });
  const empty = emptyDraft();
  return {
    name: rule.name,
    description: rule.description ?? '',
    status: rule.status,
    trigger: rule.trigger,
    event_name: rule.event_name ?? '',
    schedule: rule.schedule ?? 'daily',
    all: (r.conditions.all ?? []).map(condition),
    any: (r.conditions.any ?? []).map(condition),
    effects: r.effects.map((e) => ({
      ...newEffect(e.type),
      mode: e.rate ? 'rate' : 'fixed',
      points: e.points ?? 10,
      property: e.rate?.property ?? 'properties.',
      points_per_unit: e.rate?.points_per_unit ?? 1,
      rounding: e.rate?.rounding ?? 'floor',
      max_points: e.max_points ?? '',
      reason: e.reason ?? '',
      badge_code: e.badge_code ?? '',
      streak_code: e.streak_code ?? '',
    })),
    caps: Object.fromEntries(CAP_PERIODS.map((period) => [period, { times: r.caps[period]?.times ?? '', points: r.caps[period]?.points ?? '' }])) as RuleDraft['caps'],
    budget_points: rule.budget_points ?? empty.budget_points,
    priority: rule.priority,
    stop_processing: rule.stop_processing,
    starts_at: isoToLocal(rule.starts_at),
    ends_at: isoToLocal(rule.ends_at),
  };
}
