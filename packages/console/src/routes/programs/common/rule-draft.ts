import type { ResponseBody } from '@loyalty/sdk';
import type { RuleInput, RulePatch } from '../../../hooks/api/programs';

/**
 * What the rule editor edits (its react-hook-form values): every field of
 * `EarnRuleInput`, numbers undefined when empty, times in the tenant's zone,
 * turned into the API's body on save or backtest. The limits are the
 * schema's (lib/forms); what only the server knows, it says on the field
 * (`/conditions/all/0/value`, `/effects/0/points`).
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

/** A number field as react-hook-form holds it: undefined when empty (never clamped; the schema's limits are checked and named). */
export type NumberField = number | undefined;

/** The JSON type a condition's fact holds, as seen on stored events ('' when not known: the value is read as typed). */
export type FactType = '' | 'string' | 'number' | 'boolean' | 'array';

export interface ConditionDraft {
  fact: string;
  /** Set from the properties seen on the event (or the participant attribute's type) when the fact is picked. */
  type: FactType;
  operator: Operator;
  /** As typed: a list is comma-separated; with an unknown type, `"…"` keeps a number-like value a string. */
  value: string;
}

export interface EffectDraft {
  type: (typeof EFFECT_TYPES)[number];
  /** award_points: a fixed amount, or a rate per unit of a numeric event property. */
  mode: 'fixed' | 'rate';
  points: NumberField;
  property: string;
  points_per_unit: NumberField;
  rounding: (typeof ROUNDINGS)[number];
  max_points: NumberField;
  reason: string;
  badge_code: string;
  streak_code: string;
}

export type CapDraft = { times: NumberField; points: NumberField };

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
  budget_points: NumberField;
  priority: NumberField;
  stop_processing: boolean;
  /** `datetime-local` text in the tenant's time zone (lib/format); empty for none. */
  starts_at: string;
  ends_at: string;
}

/** The operators that make sense for a fact's type (numbers compare, text contains, a list contains). */
export const OPERATORS_BY_TYPE: Record<FactType, readonly Operator[]> = {
  '': OPERATORS,
  number: ['equals', 'not_equals', 'gt', 'gte', 'lt', 'lte', 'in', 'not_in', 'exists', 'not_exists'],
  string: ['equals', 'not_equals', 'in', 'not_in', 'contains', 'exists', 'not_exists'],
  boolean: ['equals', 'not_equals', 'exists', 'not_exists'],
  array: ['contains', 'exists', 'not_exists'],
};

/** The participant attributes a condition may read, with their types. */
export const PARTICIPANT_FACTS: ReadonlyArray<{ fact: string; type: FactType }> = [
  { fact: 'participant.lifetime_points', type: 'number' },
  { fact: 'participant.available_points', type: 'number' },
  { fact: 'participant.badges', type: 'array' },
];

export function newCondition(): ConditionDraft {
  return { fact: '', type: '', operator: 'equals', value: '' };
}

export function newEffect(type: EffectDraft['type'] = 'award_points'): EffectDraft {
  return { type, mode: 'fixed', points: 10, property: '', points_per_unit: 1, rounding: 'floor', max_points: undefined, reason: '', badge_code: '', streak_code: '' };
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
    caps: { per_day: { times: undefined, points: undefined }, per_week: { times: undefined, points: undefined }, lifetime: { times: undefined, points: undefined } },
    budget_points: undefined,
    priority: 0,
    stop_processing: false,
    starts_at: '',
    ends_at: '',
  };
}

const blank = (value: unknown): boolean => value === '' || value === undefined || value === null || (typeof value === 'number' && Number.isNaN(value));
const numberOrUndefined = (value: unknown): number | undefined => (blank(value) ? undefined : Number(value));

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

/** One value as its fact's type reads it: a number stays the text typed when it is not one (the server names the mistake). */
function typedScalar(text: string, type: FactType): unknown {
  const trimmed = text.trim();
  if (type === 'string' || type === 'array') return trimmed;
  if (type === 'number') return trimmed !== '' && Number.isFinite(Number(trimmed)) ? Number(trimmed) : trimmed;
  if (type === 'boolean') return trimmed === 'true' ? true : trimmed === 'false' ? false : trimmed;
  return parseScalar(trimmed);
}

/** Whether a condition's value fits its fact's type, for the check before sending. */
export function valueFitsType(condition: ConditionDraft): boolean {
  if (VALUELESS.includes(condition.operator) || condition.type !== 'number') return true;
  const parts = condition.operator === 'in' || condition.operator === 'not_in' ? condition.value.split(',').filter((part) => part.trim() !== '') : [condition.value];
  return parts.every((part) => part.trim() !== '' && Number.isFinite(Number(part.trim())));
}

function conditionValue(condition: ConditionDraft): unknown {
  if (VALUELESS.includes(condition.operator)) return undefined;
  if (condition.operator === 'in' || condition.operator === 'not_in') {
    return condition.value.split(',').filter((part) => part.trim() !== '').map((part) => typedScalar(part, condition.type));
  }
  return typedScalar(condition.value, condition.type);
}

function formatValue(value: unknown, type: FactType): string {
  if (value === undefined) return '';
  if (Array.isArray(value)) return value.map((v) => formatValue(v, type)).join(', ');
  if (typeof value === 'string' && type === '') return /^(true|false|null)$/.test(value) || (value.trim() !== '' && Number.isFinite(Number(value))) ? `"${value}"` : value;
  return String(value);
}

/** The type a stored condition's value shows (a fact's own type is known again once the event's properties load). */
function typeOfValue(value: unknown): FactType {
  const first = Array.isArray(value) ? value[0] : value;
  if (typeof first === 'number') return 'number';
  if (typeof first === 'boolean') return 'boolean';
  if (typeof first === 'string') return 'string';
  return '';
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
  if (effect.mode === 'fixed') return { type: effect.type, points: numberOrUndefined(effect.points), reason };
  return {
    type: effect.type,
    rate: { property: effect.property.trim(), points_per_unit: numberOrUndefined(effect.points_per_unit), rounding: effect.rounding },
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

/** `datetime-local` text in the tenant's zone to an ISO timestamp (lib/format's fromZonedInput), and back. */
export interface ZonedInput {
  toZonedInput(iso: string | null | undefined): string;
  fromZonedInput(local: string): string;
}

/** The rule as the create and simulate routes take it. */
export function toInput(draft: RuleDraft, zone: ZonedInput): RuleInput {
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
    starts_at: draft.starts_at ? zone.fromZonedInput(draft.starts_at) : undefined,
    ends_at: draft.ends_at ? zone.fromZonedInput(draft.ends_at) : undefined,
  } as RuleInput;
}

/** The same rule as a change of a stored one: the trigger stays, and a cleared field is sent as null (or empty) so it is removed. */
export function toPatch(draft: RuleDraft, zone: ZonedInput): RulePatch {
  const input = toInput(draft, zone) as Record<string, unknown>;
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
export function fromRule(rule: Rule, zone: ZonedInput): RuleDraft {
  const r = rule as unknown as {
    conditions: { all?: Array<{ fact: string; operator: Operator; value?: unknown }>; any?: Array<{ fact: string; operator: Operator; value?: unknown }> };
    effects: Array<{ type: EffectDraft['type']; points?: number; rate?: { property: string; points_per_unit: number; rounding?: EffectDraft['rounding'] }; max_points?: number; reason?: string; badge_code?: string; streak_code?: string }>;
    caps: Partial<Record<(typeof CAP_PERIODS)[number], { times?: number; points?: number }>>;
  };
  const condition = (c: { fact: string; operator: Operator; value?: unknown }): ConditionDraft => {
    const type = c.fact === 'participant.badges' ? 'array' : typeOfValue(c.value);
    return { fact: c.fact, type, operator: c.operator, value: formatValue(c.value, type) };
  };
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
      property: e.rate?.property ?? '',
      points_per_unit: e.rate?.points_per_unit ?? 1,
      rounding: e.rate?.rounding ?? 'floor',
      max_points: e.max_points,
      reason: e.reason ?? '',
      badge_code: e.badge_code ?? '',
      streak_code: e.streak_code ?? '',
    })),
    caps: Object.fromEntries(CAP_PERIODS.map((period) => [period, { times: r.caps[period]?.times, points: r.caps[period]?.points }])) as RuleDraft['caps'],
    budget_points: rule.budget_points ?? undefined,
    priority: rule.priority,
    stop_processing: rule.stop_processing,
    starts_at: zone.toZonedInput(rule.starts_at),
    ends_at: zone.toZonedInput(rule.ends_at),
  };
}
