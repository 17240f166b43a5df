import { invalid } from '../../platform/errors.js';
import { IN_VALUES_MAX, type Condition, type Conditions } from './schemas.js';

/**
 * The condition interpreter. A condition reads one fact by path and compares
 * it with a value through a fixed operator; nothing in a rule is ever
 * executed as code.
 */
export interface FactSource {
  properties: Record<string, unknown>;
  /** Participant attributes; loaded only when a condition reads one. */
  participant: () => Promise<Record<string, unknown>>;
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
      if (!allowEventFacts && condition.fact.startsWith('properties.')) {
        throw invalid(`${at}.fact reads an event property, but scheduled rules have no event; use participant attributes`, 'RULE_INVALID');
      }
      switch (operator) {
        case 'exists':
        case 'not_exists':
          if (value !== undefined) throw invalid(`${at}: operator "${operator}" takes no value`, 'RULE_INVALID');
          break;
        case 'in':
        case 'not_in':
          if (!Array.isArray(value) || value.length === 0 || value.length > IN_VALUES_MAX || !value.every(isScalar)) {
            throw invalid(`${at}: operator "${operator}" needs a list of 1 to ${IN_VALUES_MAX} strings, numbers, booleans or nulls`, 'RULE_INVALID');
          }
          break;
        case 'gt':
        case 'gte':
        case 'lt':
        case 'lte':
          if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(`${at}: operator "${operator}" needs a number`, 'RULE_INVALID');
          break;
        default:
          if (value === undefined || !isScalar(value)) {
            throw invalid(`${at}: operator "${operator}" needs a string, number, boolean or null value`, 'RULE_INVALID');
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

/** True when every `all` condition holds and, if `any` is given, at least one of it. */
export async function conditionsHold(conditions: Conditions, source: FactSource): Promise<boolean> {
  for (const condition of conditions.all ?? []) {
    if (!holds(condition, await factValue(condition, source))) return false;
  }
  const any = conditions.any ?? [];
  if (any.length === 0) return true;
  for (const condition of any) {
    if (holds(condition, await factValue(condition, source))) return true;
  }
  return false;
}
