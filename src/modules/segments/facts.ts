import { AppError, fieldError, type FieldError } from '../../platform/errors.js';
import { PERSONAL_STANDARD_FIELDS } from '../../platform/privacy.js';
import { STANDARD_FIELDS } from '../participants/index.js';
import { IN_VALUES_MAX, type Operator, type SegmentCondition, type SegmentFact, type SegmentFilter } from './schemas.js';

/**
 * The facts a segment filter reads: the catalogue the builder shows
 * (`GET /admin/segments/facts`) and the checks of a filter against it, with
 * one field error per problem (`/filter/all/0/value`). Pure: the tenant's
 * custom fields, tiers, badges and streaks come in as a FactContext.
 */
export type FactType = 'string' | 'number' | 'boolean' | 'date' | 'code';

/** How the compiler reads a fact. */
export type FactKind =
  | 'profile'
  | 'custom'
  | 'tier'
  | 'available_points'
  | 'lifetime_points'
  | 'badges'
  | 'streak'
  | 'days_since_last_activity'
  | 'days_since_joined'
  | 'event_count'
  | 'referrals_converted'
  | 'contests_entered';

export interface FactDefinition {
  fact: string;
  kind: FactKind;
  /** The profile field, custom key or streak code after the dot. */
  key: string | null;
  type: FactType;
  operators: readonly Operator[];
  personal: boolean;
  needsEvent: boolean;
  allowed?: readonly string[];
  description: string;
}

/** What the tenant has defined, read in the caller's transaction (store.factContext). */
export interface FactContext {
  custom: Array<{ key: string; type: 'string' | 'number' | 'boolean' | 'date'; personal: boolean }>;
  tiers: string[];
  badges: string[];
  streaks: string[];
}

const TEXT_OPS: readonly Operator[] = ['equals', 'not_equals', 'in', 'not_in', 'contains', 'not_contains', 'exists', 'not_exists'];
const CODE_OPS: readonly Operator[] = ['equals', 'not_equals', 'in', 'not_in', 'exists', 'not_exists'];
const COUNT_OPS: readonly Operator[] = ['equals', 'not_equals', 'gt', 'gte', 'lt', 'lte'];
const NUMBER_OPS: readonly Operator[] = ['equals', 'not_equals', 'in', 'not_in', 'gt', 'gte', 'lt', 'lte', 'exists', 'not_exists'];
const DATE_OPS: readonly Operator[] = ['equals', 'not_equals', 'gt', 'gte', 'lt', 'lte', 'exists', 'not_exists'];
const BOOLEAN_OPS: readonly Operator[] = ['equals', 'not_equals', 'exists', 'not_exists'];
const SET_OPS: readonly Operator[] = ['contains', 'not_contains'];

const GENDERS = ['female', 'male', 'non_binary', 'other', 'prefer_not_to_say'];
const PERSONAL: ReadonlySet<string> = new Set(PERSONAL_STANDARD_FIELDS);

function profileFact(field: string): FactDefinition {
  const type: FactType = field === 'date_of_birth' ? 'date' : field === 'gender' || field === 'country_code' ? 'code' : 'string';
  const operators = type === 'date' ? DATE_OPS : type === 'code' ? CODE_OPS : TEXT_OPS;
  return {
    fact: `profile.${field}`,
    kind: 'profile',
    key: field,
    type,
    operators,
    personal: PERSONAL.has(field),
    needsEvent: false,
    ...(field === 'gender' ? { allowed: GENDERS } : {}),
    description: `The standard profile field ${field}${type === 'date' ? ' (YYYY-MM-DD)' : ''}; text compares exactly, contains ignores case.`,
  };
}

const opsOfType = { string: TEXT_OPS, number: NUMBER_OPS, boolean: BOOLEAN_OPS, date: DATE_OPS } as const;

/** Every fact a tenant's filters may read, in the builder's order. */
export function factCatalogue(context: FactContext): FactDefinition[] {
  const fixed = (fact: FactKind, type: FactType, operators: readonly Operator[], description: string, extra: Partial<FactDefinition> = {}): FactDefinition => ({
    fact,
    kind: fact,
    key: null,
    type,
    operators,
    personal: false,
    needsEvent: false,
    description,
    ...extra,
  });
  return [
    ...STANDARD_FIELDS.map(profileFact),
    ...context.custom.map(
      (field): FactDefinition => ({
        fact: `custom.${field.key}`,
        kind: 'custom',
        key: field.key,
        type: field.type,
        operators: opsOfType[field.type],
        personal: field.personal,
        needsEvent: false,
        description: `The custom field ${field.key} (${field.type}${field.type === 'date' ? ', YYYY-MM-DD' : ''}).`,
      }),
    ),
    fixed('tier', 'code', CODE_OPS, 'The tier code the participant holds.', { allowed: context.tiers }),
    fixed('available_points', 'number', COUNT_OPS, 'Points available to spend (0 without a balance).'),
    fixed('lifetime_points', 'number', COUNT_OPS, 'Points ever earned (0 without a balance).'),
    fixed('badges', 'code', SET_OPS, 'The badges earned: contains / not_contains a badge code.', { allowed: context.badges }),
    ...context.streaks.map((code): FactDefinition => ({ ...fixed('streak', 'number', COUNT_OPS, `The current length of the streak ${code} (0 when none or broken).`), fact: `streak.${code}`, key: code })),
    fixed('days_since_last_activity', 'number', NUMBER_OPS, 'Whole days since the participant\'s last event; absent when they sent none.'),
    fixed('days_since_joined', 'number', COUNT_OPS, 'Whole days since the participant was first seen.'),
    fixed('event_count', 'number', COUNT_OPS, 'How many events named event_name the participant sent in the last within_days days.', { needsEvent: true }),
    fixed('referrals_converted', 'number', COUNT_OPS, 'Referrals the participant made that converted.'),
    fixed('contests_entered', 'number', COUNT_OPS, 'Contests the participant entered.'),
  ];
}

/** The catalogue entry as the API shows it. */
export function factView(definition: FactDefinition): SegmentFact {
  return {
    fact: definition.fact,
    type: definition.type,
    operators: [...definition.operators],
    personal: definition.personal,
    needs_event: definition.needsEvent,
    ...(definition.allowed ? { allowed_values: [...definition.allowed] } : {}),
    description: definition.description,
  };
}

/** Looks a condition's fact up in the catalogue (null when the tenant has no such fact). */
export function findFact(catalogue: readonly FactDefinition[], fact: string): FactDefinition | null {
  return catalogue.find((definition) => definition.fact === fact) ?? null;
}

const DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

function valueProblem(definition: FactDefinition, value: unknown): string | null {
  switch (definition.type) {
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? null : 'must be a number';
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be true or false';
    case 'date':
      return typeof value === 'string' && DATE.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) ? null : 'must be a date written YYYY-MM-DD';
    default:
      if (typeof value !== 'string' || value === '') return 'must be a non-empty string';
      if (definition.allowed && !definition.allowed.includes(value)) return `must be one of: ${definition.allowed.join(', ') || '(none defined yet)'}`;
      return null;
  }
}

/**
 * Every problem of a filter against the tenant's catalogue, as field errors
 * under `pointer` (`/filter`). Personal facts are refused separately
 * (`personalFactsOf`), after these checks pass.
 */
export function filterProblems(filter: SegmentFilter, catalogue: readonly FactDefinition[], pointer = '/filter'): FieldError[] {
  const problems: FieldError[] = [];
  for (const group of ['all', 'any'] as const) {
    (filter[group] ?? []).forEach((condition, index) => {
      const at = `${pointer}/${group}/${index}`;
      const definition = findFact(catalogue, condition.fact);
      if (!definition) {
        problems.push(fieldError(`${at}/fact`, 'unknown_fact', `"${condition.fact}" is not a fact of this tenant`, { allowed: catalogue.map((f) => f.fact) }));
        return;
      }
      problems.push(...conditionProblems(condition, definition, at));
    });
  }
  return problems;
}

function conditionProblems(condition: SegmentCondition, definition: FactDefinition, at: string): FieldError[] {
  const problems: FieldError[] = [];
  const { operator, value } = condition;
  if (!definition.operators.includes(operator)) {
    problems.push(fieldError(`${at}/operator`, 'enum', `${definition.fact} takes the operators ${definition.operators.join(', ')}`, { allowed: [...definition.operators] }));
  }
  if (definition.needsEvent) {
    if (condition.event_name === undefined) problems.push(fieldError(`${at}/event_name`, 'required', `${definition.fact} needs event_name`));
    if (condition.within_days === undefined) problems.push(fieldError(`${at}/within_days`, 'required', `${definition.fact} needs within_days (1 to 3650)`));
  } else {
    if (condition.event_name !== undefined) problems.push(fieldError(`${at}/event_name`, 'not_allowed', `only event_count takes event_name`));
    if (condition.within_days !== undefined) problems.push(fieldError(`${at}/within_days`, 'not_allowed', `only event_count takes within_days`));
  }
  if (problems.some((p) => p.path === `${at}/operator`)) return problems;
  const valuePath = `${at}/value`;
  const allowed = definition.allowed ? { allowed: [...definition.allowed] } : {};
  if (operator === 'exists' || operator === 'not_exists') {
    if (value !== undefined) problems.push(fieldError(valuePath, 'not_allowed', `takes no value with ${operator}`));
  } else if (operator === 'in' || operator === 'not_in') {
    if (!Array.isArray(value) || value.length === 0 || value.length > IN_VALUES_MAX) {
      problems.push(fieldError(valuePath, 'type_list', `needs a list of 1 to ${IN_VALUES_MAX} values`, allowed));
    } else {
      value.forEach((item, index) => {
        const problem = valueProblem(definition, item);
        if (problem) problems.push(fieldError(`${valuePath}/${index}`, 'invalid_value', problem, allowed));
      });
    }
  } else if (value === undefined) {
    problems.push(fieldError(valuePath, 'required', `needs a value with ${operator}`, allowed));
  } else if (Array.isArray(value)) {
    problems.push(fieldError(valuePath, 'type', `takes one value with ${operator} (a list only with in / not_in)`, allowed));
  } else {
    const problem = valueProblem(definition, value);
    if (problem) problems.push(fieldError(valuePath, 'invalid_value', problem, allowed));
    else if (typeof value === 'string' && (operator === 'contains' || operator === 'not_contains') && definition.type === 'date') {
      problems.push(fieldError(valuePath, 'invalid_value', 'contains compares text'));
    }
  }
  return problems;
}

/** The pointers of the conditions that read a personal fact (`/filter/all/0/fact`). */
export function personalFactsOf(filter: SegmentFilter, catalogue: readonly FactDefinition[], pointer = '/filter'): FieldError[] {
  const found: FieldError[] = [];
  for (const group of ['all', 'any'] as const) {
    (filter[group] ?? []).forEach((condition, index) => {
      if (findFact(catalogue, condition.fact)?.personal) {
        found.push(fieldError(`${pointer}/${group}/${index}/fact`, 'personal_data', `${condition.fact} is personal data: filtering on it needs read:pii`));
      }
    });
  }
  return found;
}

/** Checks a filter: a 400 listing every problem, or a 403 when it reads personal facts and the caller may not. */
export function assertFilter(filter: SegmentFilter, catalogue: readonly FactDefinition[], mayUsePersonal: boolean, pointer = '/filter'): void {
  const problems = filterProblems(filter, catalogue, pointer);
  if (problems.length > 0) {
    throw new AppError('invalid', 'SEGMENT_FILTER_INVALID', `${problems[0].path}: ${problems[0].message}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''}`, { errors: problems });
  }
  if (mayUsePersonal) return;
  const personal = personalFactsOf(filter, catalogue, pointer);
  if (personal.length > 0) {
    throw new AppError('forbidden', 'SEGMENT_PERSONAL_FACT', `${personal[0].path}: ${personal[0].message}`, { errors: personal });
  }
}
