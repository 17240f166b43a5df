import type { Segment, SegmentCondition, SegmentFact, SegmentFilter, SegmentInput, SegmentOperator } from '../../../hooks/api/segments';

/**
 * The segment builder's form and its translation to the API's filter. A
 * condition is a row of pickers (fact → operator → value, and for event
 * counts the event name and the window); the rows are all `all` or all `any`.
 * A segment saved through the API with both lists is shown with its `all`
 * rows; its `any` list is kept as it is (`kept`) and sent back unchanged, so
 * saving in the builder never drops a condition it does not show.
 */
export interface ConditionDraft {
  fact: string;
  operator: SegmentOperator | '';
  value: string;
  event_name: string;
  within_days?: number;
}

export type Match = 'all' | 'any';

export interface SegmentDraft {
  name: string;
  description: string;
  match: Match;
  materialized: boolean;
  conditions: ConditionDraft[];
  /** The `any` list of a segment that has both lists: not shown as rows, sent back as it came. */
  kept: SegmentCondition[];
}

export const CONDITIONS_MAX = 20;
export const VALUELESS: readonly SegmentOperator[] = ['exists', 'not_exists'];
const LISTS: readonly SegmentOperator[] = ['in', 'not_in'];

export function emptySegmentDraft(): SegmentDraft {
  return { name: '', description: '', match: 'all', materialized: false, conditions: [], kept: [] };
}

export function newCondition(): ConditionDraft {
  return { fact: '', operator: '', value: '', event_name: '', within_days: undefined };
}

export function isNumeric(fact: SegmentFact | undefined): boolean {
  return fact?.type === 'number';
}

type Scalar = string | number | boolean;

function parseValue(text: string, fact: SegmentFact | undefined, operator: SegmentOperator): Scalar | Scalar[] {
  const one = (part: string): Scalar => {
    const value = part.trim();
    if (isNumeric(fact) && value !== '' && !Number.isNaN(Number(value))) return Number(value);
    if (fact?.type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
    return value;
  };
  if (LISTS.includes(operator)) return text.split(',').map(one).filter((v) => v !== '');
  return one(text);
}

function showValue(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return value.map(String).join(', ');
  return String(value);
}

/** One row as the API's condition; `null` while it is not complete enough to ask the service about. */
export function toCondition(row: ConditionDraft, facts: Map<string, SegmentFact>): SegmentCondition | null {
  if (!row.fact || !row.operator) return null;
  const fact = facts.get(row.fact);
  const condition: SegmentCondition = { fact: row.fact, operator: row.operator };
  if (!VALUELESS.includes(row.operator)) {
    if (row.value.trim() === '') return null;
    condition.value = parseValue(row.value, fact, row.operator);
  }
  if (fact?.needs_event) condition.event_name = row.event_name.trim();
  if (fact?.needs_event && row.within_days !== undefined && !Number.isNaN(row.within_days)) condition.within_days = row.within_days;
  return condition;
}

/** The filter of the rows that are complete: what the live size is asked for while the rest is still being typed. */
export function completeFilter(draft: SegmentDraft, facts: Map<string, SegmentFact>): SegmentFilter {
  const conditions = draft.conditions.map((row) => toCondition(row, facts)).filter((c): c is SegmentCondition => c !== null);
  return withKept(draft, conditions);
}

/** The filter of the shown rows and, for a segment with both lists, its kept `any` list. */
function withKept(draft: SegmentDraft, conditions: SegmentCondition[]): SegmentFilter {
  const kept = draft.kept ?? [];
  return kept.length > 0 ? { all: conditions, any: kept } : { [draft.match]: conditions };
}

/** The whole draft as the body to save: an incomplete row is sent as it is, so the service names what it lacks on its field. */
export function toInput(draft: SegmentDraft, facts: Map<string, SegmentFact>): SegmentInput {
  const conditions = draft.conditions.map((row) => {
    const complete = toCondition(row, facts);
    if (complete) return complete;
    const partial: Record<string, unknown> = { fact: row.fact, operator: row.operator };
    if (facts.get(row.fact)?.needs_event) Object.assign(partial, { event_name: row.event_name.trim() || undefined, within_days: row.within_days });
    if (row.operator && !VALUELESS.includes(row.operator)) partial.value = row.value === '' ? undefined : row.value;
    return partial as unknown as SegmentCondition;
  });
  return { name: draft.name.trim(), description: draft.description.trim() || undefined, filter: withKept(draft, conditions), materialized: draft.materialized };
}

/** The form of a saved segment: its pending draft when one waits for review (the author goes on editing it), else its live filter. */
export function fromSegment(saved: Segment): SegmentDraft {
  const segment = saved.draft ? { ...saved, filter: saved.draft.filter, materialized: saved.draft.materialized } : saved;
  const both = (segment.filter.any?.length ?? 0) > 0 && (segment.filter.all?.length ?? 0) > 0;
  const match: Match = (segment.filter.any?.length ?? 0) > 0 && !both ? 'any' : 'all';
  return {
    name: segment.name,
    description: segment.description ?? '',
    match,
    materialized: segment.materialized,
    conditions: (segment.filter[match] ?? []).map((c) => ({ fact: c.fact, operator: c.operator, value: showValue(c.value), event_name: c.event_name ?? '', within_days: c.within_days })),
    kept: both ? (segment.filter.any ?? []) : [],
  };
}
