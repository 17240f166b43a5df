import { fieldError, invalid } from '../../platform/errors.js';
import { EVERY_CUSTOM_FIELD, redactFreeForm } from '../../platform/privacy.js';
import { IN_VALUES_MAX, type Condition, type Conditions } from './schemas.js';
import { SEGMENT_FACT, segmentConditionHolds, segmentFactValue, validateSegmentCondition, type SegmentMemberships } from './segment-conditions.js';

/**
 * The condition interpreter. A condition reads one fact by path and compares
 * it with a value through a fixed operator; nothing in a rule is ever
 * executed as code.
 */
export interface FactSource {
  properties: Record<string, unknown>;
  /** Participant attributes; loaded only when a condition reads one. */
  participant: () => Promise<Record<string, unknown>>;
  /** The participant's segment memberships (`participant.segment`); read only when a condition names a segment. */
  segments: SegmentMemberships;
}

type Scalar = string | number | boolean | null;

const isScalar = (value: unknown): value is Scalar =>
  value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));

/** Reads `a.b.c` from nested plain objects; undefined when any step is missing. */
export function readPath(root: unknown, path: string[]): unknown {
  let current: unknown = root;
  for (const step of path) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined;
    if (!Object.prototype.hasOwnProperty.call(current, step)) return undefined;
    current = (current as Record<string, unknown>)[step];
  }
  return current;
}

/** Checks that each condition's value fits its operator; throws a 422 naming the first one that does not. */
export function validateConditions(conditions: Conditions, where: string, allowEventFacts: boolean): void {
  const groups: Array<[string, Condition[] | undefined]> = [
    ['all', conditions.all],
    ['any', conditions.any],
  ];
  for (const [group, list] of groups) {
    (list ?? []).forEach((condition, index) => {
      const at = `${where}.${group}[${index}]`;
      const { operator, value } = condition;
      // The refusal names its field (`/conditions/all/0/value`), so a form shows it there.
      const pointer = `/${where.replaceAll('.', '/')}/${group}/${index}`;
      const on = (field: 'fact' | 'value', code: string, message: string) => ({ errors: [fieldError(`${pointer}/${field}`, code, message)] });
      if (!allowEventFacts && condition.fact.startsWith('properties.')) {
        throw invalid(`${at}.fact reads an event property, but scheduled rules have no event; use participant attributes`, 'RULE_INVALID', on('fact', 'not_allowed', 'reads an event property, but scheduled rules have no event'));
      }
      if (condition.fact === SEGMENT_FACT) return validateSegmentCondition(condition, at, pointer);
      switch (operator) {
        case 'exists':
        case 'not_exists':
          if (value !== undefined) throw invalid(`${at}: operator "${operator}" takes no value`, 'RULE_INVALID', on('value', 'not_allowed', `takes no value with ${operator}`));
          break;
        case 'in':
        case 'not_in':
          if (!Array.isArray(value) || value.length === 0 || value.length > IN_VALUES_MAX || !value.every(isScalar)) {
            throw invalid(`${at}: operator "${operator}" needs a list of 1 to ${IN_VALUES_MAX} strings, numbers, booleans or nulls`, 'RULE_INVALID', on('value', 'type_list', `needs a list of 1 to ${IN_VALUES_MAX} values`));
          }
          break;
        case 'gt':
        case 'gte':
        case 'lt':
        case 'lte':
          if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(`${at}: operator "${operator}" needs a number`, 'RULE_INVALID', on('value', 'type_number', 'must be a number'));
          break;
        default:
          if (value === undefined || !isScalar(value)) {
            throw invalid(`${at}: operator "${operator}" needs a string, number, boolean or null value`, 'RULE_INVALID', on('value', 'required', 'needs a string, number, boolean or null value'));
          }
      }
    });
  }
}

function holds(condition: Condition, actual: unknown): boolean {
  const expected = condition.value;
  switch (condition.operator) {
    case 'exists':
      return actual !== undefined && actual !== null;
    case 'not_exists':
      return actual === undefined || actual === null;
    case 'equals':
      return actual === expected;
    case 'not_equals':
      return actual !== expected;
    case 'in':
      return (expected as Scalar[]).some((v) => v === actual);
    case 'not_in':
      return !(expected as Scalar[]).some((v) => v === actual);
    case 'gt':
      return typeof actual === 'number' && actual > (expected as number);
    case 'gte':
      return typeof actual === 'number' && actual >= (expected as number);
    case 'lt':
      return typeof actual === 'number' && actual < (expected as number);
    case 'lte':
      return typeof actual === 'number' && actual <= (expected as number);
    case 'contains':
      if (Array.isArray(actual)) return actual.some((v) => v === expected);
      return typeof actual === 'string' && typeof expected === 'string' && actual.includes(expected);
    default:
      return false;
  }
}

async function factValue(condition: Condition, source: FactSource): Promise<unknown> {
  const [root, ...path] = condition.fact.split('.');
  if (root === 'properties') return readPath(source.properties, path);
  return readPath(await source.participant(), path);
}

/** The JSON type of a fact as read, `missing` when the event or participant has no such fact. */
export type FactType = 'missing' | 'null' | 'string' | 'number' | 'boolean' | 'array' | 'object';

/**
 * A fact as a rule's outcome shows it: its type always; its value when it is
 * a scalar or a short list of scalars and not personal. Personal values (the
 * privacy classification of free-form data: standard profile field names at
 * any depth, `custom` objects) are never echoed, so the stored outcome holds
 * none; long strings are cut.
 */
export interface FactReading {
  fact: string;
  actual?: unknown;
  actual_type: FactType;
  /** Set when the value exists but is left out because it is personal. */
  actual_withheld?: 'personal';
}

/** One condition that kept a rule from applying. */
export interface ConditionFailure extends FactReading {
  group: 'all' | 'any';
  /** Its position in the group; for `any`, the first of the group (none of them held). */
  index: number;
  operator: Condition['operator'];
  expected?: unknown;
}

const ACTUAL_TEXT_MAX = 200;
const ACTUAL_LIST_MAX = 20;

function factType(value: unknown): FactType {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const type = typeof value;
  return type === 'string' || type === 'number' || type === 'boolean' ? type : 'object';
}

/** Whether the free-form masking (platform/privacy.ts) would hide the value at this path of event properties. */
function isPersonalProperty(path: string[]): boolean {
  const marker = Symbol('value');
  const probe = path.reduceRight<unknown>((inner, step) => ({ [step]: inner }), marker);
  return readPath(redactFreeForm(probe, EVERY_CUSTOM_FIELD), path) !== marker;
}

function shown(value: unknown): unknown {
  if (typeof value === 'string') return value.length > ACTUAL_TEXT_MAX ? `${value.slice(0, ACTUAL_TEXT_MAX)}…` : value;
  if (Array.isArray(value)) return value.length <= ACTUAL_LIST_MAX && value.every(isScalar) ? value.map(shown) : undefined;
  return isScalar(value) ? value : undefined;
}

/** A fact read from an event or participant, as an outcome may show it. */
export function readingOf(fact: string, value: unknown): FactReading {
  const [root, ...path] = fact.split('.');
  const reading: FactReading = { fact, actual_type: factType(value) };
  if (value === undefined || value === null) return reading;
  if (root === 'properties' && isPersonalProperty(path)) return { ...reading, actual_withheld: 'personal' };
  const actual = shown(value);
  return actual === undefined ? reading : { ...reading, actual };
}

function failure(condition: Condition, group: 'all' | 'any', index: number, actual: unknown): ConditionFailure {
  return {
    group,
    index,
    operator: condition.operator,
    ...(condition.value !== undefined && { expected: condition.value }),
    ...readingOf(condition.fact, actual),
  };
}

/**
 * The condition that keeps a rule from applying, or null when the rule's
 * conditions hold: every `all` condition, and at least one `any` condition
 * when `any` is given. Conditions are read in order and reading stops at the
 * first `all` condition that fails.
 */
export async function conditionFailure(conditions: Conditions, source: FactSource): Promise<ConditionFailure | null> {
  for (const [index, condition] of (conditions.all ?? []).entries()) {
    const { actual, held } = await evaluate(condition, source);
    if (!held) return failure(condition, 'all', index, actual);
  }
  const any = conditions.any ?? [];
  if (any.length === 0) return null;
  let first: unknown;
  for (const [index, condition] of any.entries()) {
    const { actual, held } = await evaluate(condition, source);
    if (held) return null;
    if (index === 0) first = actual;
  }
  return failure(any[0], 'any', 0, first);
}

/** Reads a condition's fact and tests it. A segment condition reads the listed segments the participant is in. */
async function evaluate(condition: Condition, source: FactSource): Promise<{ actual: unknown; held: boolean }> {
  if (condition.fact === SEGMENT_FACT) {
    const memberOf = await segmentFactValue(condition, source.segments);
    return { actual: memberOf, held: segmentConditionHolds(condition, memberOf) };
  }
  const actual = await factValue(condition, source);
  return { actual, held: holds(condition, actual) };
}

/** True when every `all` condition holds and, if `any` is given, at least one of it. */
export async function conditionsHold(conditions: Conditions, source: FactSource): Promise<boolean> {
  return (await conditionFailure(conditions, source)) === null;
}
