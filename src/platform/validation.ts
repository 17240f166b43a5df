import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FieldError, RequestPart } from './errors.js';
import { onFirstUse } from './first-use.js';

/**
 * The one home of JSON Schema validation: the Ajv configurations, one compile
 * cache, and one describer that turns Ajv's errors into the `detail` sentence
 * and the per-field `errors` of an error body. The request validators
 * (platform/http.ts) and every module that checks a value by hand (an event
 * of a batch, a reward's metadata, a catalog payload, a promoted definition)
 * go through here, so that one failure reads the same wherever it is found.
 *
 * Validation runs in two passes. The first stops at the first problem
 * (`allErrors: false`), as Ajv advises for untrusted input: the success path
 * is the code it always was, and a body far over a size limit is refused
 * without walking it. Only when it fails does a second validator, compiled on
 * first use with `allErrors: true`, run over the same value to list every
 * problem (up to FIELD_ERRORS_MAX); it is skipped when the first problem is a
 * count limit (`maxItems`, `maxProperties`), the one case where walking the
 * rest costs in proportion to an oversized input.
 */

/** The most per-field errors one answer lists; the detail says how many more there were. */
export const FIELD_ERRORS_MAX = 20;

/** The longest property name a detail or a path repeats; a longer one is cut. */
const NAME_LENGTH_MAX = 200;

/** First-pass failures after which the value is not walked again for every error. */
const COUNT_LIMIT_KEYWORDS = new Set(['maxItems', 'maxProperties']);

// ---- Ajv instances and the compile cache ----------------------------------------------

/**
 * Bodies are validated strictly: no type coercion, no silently removed
 * properties. Query strings, path parameters and headers arrive as text, so
 * those are coerced to the declared types (a lone value becomes a one-item
 * array). Defaults are filled in; unknown keywords (TypeBox's, OpenAPI's) are
 * allowed.
 */
export type Coercion = 'none' | 'text';

const AJV_OPTIONS = { useDefaults: true, removeAdditional: false as const, strict: false, allowUnionTypes: true };

const instances = new Map<string, Ajv.default>();
/** Schemas with an $id that `$ref`s name; added to every instance, also those created later. */
const sharedSchemas = new Map<string, object>();
/** Compiled validators by configuration and schema text: a route's schema and a module's are compiled once. */
const compiled = new Map<string, ValidateFunction>();

function ajvFor(coercion: Coercion, allErrors: boolean): Ajv.default {
  const key = `${coercion}:${allErrors}`;
  let ajv = instances.get(key);
  if (!ajv) {
    ajv = new Ajv.default({ ...AJV_OPTIONS, allErrors, coerceTypes: coercion === 'text' ? 'array' : false });
    addFormats.default(ajv);
    for (const schema of sharedSchemas.values()) ajv.addSchema(schema);
    instances.set(key, ajv);
  }
  return ajv;
}

/** True when the instance already holds a schema with this $id (added, or compiled on its own). */
const knows = (ajv: Ajv.default, id: string) => ajv.schemas[id] !== undefined || ajv.refs[id] !== undefined;

/**
 * Adds schemas that others reference by `$id` (the service's shared schemas)
 * to every configuration. A schema already known by its $id is not added again:
 * one process may build several apps (the tests do).
 */
export function registerSharedSchemas(schemas: ReadonlyArray<object>): void {
  for (const schema of schemas) {
    const id = (schema as { $id?: unknown }).$id;
    if (typeof id !== 'string') throw new Error('a shared schema needs an $id');
    if (sharedSchemas.has(id)) continue;
    sharedSchemas.set(id, schema);
    for (const ajv of instances.values()) if (!knows(ajv, id)) ajv.addSchema(schema);
  }
}

function compileOnce(schema: object, coercion: Coercion, allErrors: boolean): ValidateFunction {
  const key = `${coercion}:${allErrors}:${JSON.stringify(schema)}`;
  let validate = compiled.get(key);
  if (!validate) {
    const id = (schema as { $id?: unknown }).$id;
    // A schema with an $id the instance knows (a shared one, or one a module compiled first) is
    // taken from it: Ajv refuses to claim an $id twice.
    const ajv = ajvFor(coercion, allErrors);
    validate = (typeof id === 'string' && knows(ajv, id) ? ajv.getSchema(id) : undefined) ?? ajv.compile(schema);
    compiled.set(key, validate);
  }
  return validate;
}

/**
 * A validator as Ajv makes them (Fastify's validator compiler takes one): true
 * or false, and on false `errors` holds every problem found by the second pass.
 */
export function compileValidator(schema: object, coercion: Coercion = 'none'): ValidateFunction {
  // Compiled at the first request (platform/first-use.ts), not when the route is registered.
  const firstProblem = onFirstUse(() => compileOnce(schema, coercion, false));
  let everyProblem: ValidateFunction | undefined;
  const validate = ((data: unknown) => {
    if (firstProblem()(data)) {
      validate.errors = null;
      return true;
    }
    const first = firstProblem().errors ?? [];
    if (first.length > 0 && COUNT_LIMIT_KEYWORDS.has(first[0].keyword)) {
      validate.errors = first;
      return false;
    }
    everyProblem ??= compileOnce(schema, coercion, true);
    everyProblem(data);
    validate.errors = everyProblem.errors && everyProblem.errors.length > 0 ? everyProblem.errors : first;
    return false;
  }) as ValidateFunction;
  validate.schema = schema;
  validate.errors = null;
  return validate;
}

// ---- the describer ----------------------------------------------------------------------

/** Where a value being described sits, for the detail sentence and the error paths. */
export interface Location {
  /** The part of the request the value is (or was copied from). */
  in: RequestPart;
  /** The name the detail gives the value itself: `body`, `querystring`, `event`, `metadata`. Empty: paths without a prefix. */
  label: string;
  /** The name the detail gives the value when the problem is the value as a whole and `label` is empty. */
  whole?: string;
  /** A JSON Pointer prefixed to every error's path: `/metadata` when the value is the body's `metadata`. */
  pointer?: string;
}

export interface Problems {
  /** The first problem, as a sentence, and how many more there are. */
  detail: string;
  /** Every problem (up to FIELD_ERRORS_MAX), one per field. */
  errors: FieldError[];
  /** Every problem as a sentence like the detail's (up to FIELD_ERRORS_MAX). */
  sentences: string[];
}

/** One problem before it is written out: where, what kind, and what the schema allows. */
interface Finding {
  /** The JSON Pointer of the value at fault, without the location's prefix. */
  pointer: string;
  /** The pointer of the object that lacks or has a property (`required`, `additional_property`), for the sentence. */
  parentPointer: string;
  code: string;
  message: string;
  /** The sentence after the dotted path: `must be of type string`. */
  says: string;
  allowed?: unknown[];
  /** The bound a minimum, maximum, length or count check broke (so a form can word it in its own language). */
  limit?: number;
  /** The schema location of Ajv's error, to tell a union's branches apart. */
  schemaPath: string;
}

const escapePointer = (name: string) => name.replaceAll('~', '~0').replaceAll('/', '~1');
const shortName = (name: string) => (name.length <= NAME_LENGTH_MAX ? name : `${name.slice(0, NAME_LENGTH_MAX)}…`);

/** A value as plain words show it: strings as they are, anything else as JSON. */
const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

function typeWords(types: string[]): string {
  return oneOf(types.map((t) => TYPE_WORDS[t] ?? t));
}

/** "a", "a or b", "a, b or c". */
function oneOf(words: string[]): string {
  if (words.length <= 1) return words[0] ?? '';
  return `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;
}

const FORMAT_WORDS: Record<string, string> = {
  'date-time': 'an ISO 8601 date-time with a time zone, e.g. 2026-01-31T12:00:00Z',
  date: 'a date written YYYY-MM-DD',
  time: 'a time with a time zone, e.g. 12:00:00Z',
  uuid: 'a UUID',
  email: 'an email address',
  uri: 'an absolute URI',
  url: 'a URL',
  hostname: 'a host name',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
};

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

const CLASS_WORDS: Array<[string, string]> = [
  ['A-Za-z0-9', 'letters, digits'],
  ['A-Za-z', 'letters'],
  ['a-z0-9', 'lower-case letters, digits'],
  ['A-Z0-9', 'capital letters, digits'],
  ['a-z', 'lower-case letters'],
  ['A-Z', 'capital letters'],
  ['0-9a-fA-F', 'hexadecimal digits'],
  ['0-9a-f', 'lower-case hexadecimal digits'],
  ['0-9', 'digits'],
];

/** A character class in words: `A-Za-z0-9_.:-` is "letters, digits and _ . : -". */
function classWords(characterClass: string): string | null {
  let rest = characterClass;
  const parts: string[] = [];
  for (const [range, words] of CLASS_WORDS) {
    if (rest.startsWith(range)) {
      parts.push(words);
      rest = rest.slice(range.length);
      break;
    }
  }
  if (/[\\\]^]|[a-zA-Z0-9]-[a-zA-Z0-9]/.test(rest)) return null;
  const marks = [...rest].map((mark) => (mark === ' ' ? 'space' : mark));
  if (parts.length === 0 && marks.length === 0) return null;
  return marks.length ? `${parts.join(', ')}${parts.length ? ' and ' : ''}${marks.join(' ')}` : parts.join(', ');
}

/** "letters, digits and _" as the first character: "a letter, digit or _". */
const firstCharacterWords = (words: string) => `a ${words.replaceAll('letters', 'letter').replaceAll('digits', 'digit').replace(' and ', ' or ')}`.replace(/, ([^,]+)$/, (_, last: string) => (words.includes(' and ') ? `, ${last}` : ` or ${last}`));

/**
 * A pattern in plain words where it is a plain one (one or two character
 * classes, an optional fixed prefix): "may contain only letters, digits and
 * _ . : / -". Any other pattern is quoted.
 */
export function patternWords(pattern: string): string {
  const plain = /^\^([A-Za-z]+_)?(?:\[([^\]]+)\](?:\{0,?\d*\})?)?\[([^\]]+)\](\+|\*|\{\d+(?:,\d*)?\})\$$/.exec(pattern);
  if (plain) {
    const [, prefix, first, rest] = plain;
    const restWords = classWords(rest);
    const firstWords = first === undefined ? null : classWords(first);
    if (restWords && (first === undefined || firstWords)) {
      const start = prefix ? `must start with "${prefix}" and then ` : '';
      if (firstWords) return `must start with ${firstCharacterWords(firstWords)} and contain only ${restWords}`;
      return `${start}${start ? 'contain' : 'may contain'} only ${restWords}`;
    }
  }
  return `must match the pattern ${pattern}`;
}

/** One Ajv error as a finding: a stable code, plain words, and the sentence the detail has always used. */
function findingOf(error: ErrorObject): Finding {
  const params = error.params as Record<string, any>;
  const base = { pointer: error.instancePath, parentPointer: error.instancePath, schemaPath: error.schemaPath, says: error.message ?? 'is invalid' };
  switch (error.keyword) {
    case 'required': {
      const name = shortName(String(params.missingProperty));
      return { ...base, pointer: `${error.instancePath}/${escapePointer(name)}`, code: 'required', message: 'is required', says: `is missing the required property "${name}"` };
    }
    case 'additionalProperties': {
      const name = shortName(String(params.additionalProperty));
      return { ...base, pointer: `${error.instancePath}/${escapePointer(name)}`, code: 'additional_property', message: 'is not allowed here', says: `has a property that is not allowed: "${name}"` };
    }
    case 'dependentRequired':
    case 'dependencies': {
      const name = shortName(String(params.missingProperty));
      return { ...base, pointer: `${error.instancePath}/${escapePointer(name)}`, code: 'required', message: `is required when ${params.property} is given`, says: `is missing the property "${name}", required with "${params.property}"` };
    }
    case 'type': {
      const types = String(params.type).split(',');
      return { ...base, code: 'type', message: `must be ${typeWords(types)}`, says: `must be of type ${params.type}` };
    }
    case 'enum': {
      const allowed = params.allowedValues as unknown[];
      return { ...base, code: 'enum', allowed, message: `must be one of: ${allowed.map(shown).join(', ')}`, says: `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}` };
    }
    case 'const':
      return { ...base, code: 'const', allowed: [params.allowedValue], message: `must be ${shown(params.allowedValue)}`, says: `must be ${JSON.stringify(params.allowedValue)}` };
    case 'format': {
      const words = FORMAT_WORDS[params.format];
      return { ...base, code: 'format', message: `must be ${words ?? `in the ${params.format} format`}`, says: params.format === 'date-time' ? `must be ${words}` : base.says };
    }
    case 'minimum':
      return { ...base, code: 'minimum', limit: params.limit, message: `must be at least ${params.limit}` };
    case 'exclusiveMinimum':
      return { ...base, code: 'exclusive_minimum', limit: params.limit, message: `must be greater than ${params.limit}` };
    case 'maximum':
      return { ...base, code: 'maximum', limit: params.limit, message: `must be at most ${params.limit}` };
    case 'exclusiveMaximum':
      return { ...base, code: 'exclusive_maximum', limit: params.limit, message: `must be less than ${params.limit}` };
    case 'multipleOf':
      return { ...base, code: 'multiple_of', limit: params.multipleOf, message: `must be a multiple of ${params.multipleOf}` };
    case 'minLength':
      return { ...base, code: 'min_length', limit: params.limit, message: params.limit === 1 ? 'must not be empty' : `must be at least ${plural(params.limit, 'character', 'characters')} long` };
    case 'maxLength':
      return { ...base, code: 'max_length', limit: params.limit, message: `must be at most ${plural(params.limit, 'character', 'characters')} long` };
    case 'pattern':
      return { ...base, code: 'pattern', message: patternWords(String(params.pattern)) };
    case 'minItems':
      return { ...base, code: 'min_items', limit: params.limit, message: `must have at least ${plural(params.limit, 'item', 'items')}` };
    case 'maxItems':
      return { ...base, code: 'max_items', limit: params.limit, message: `must have at most ${plural(params.limit, 'item', 'items')}` };
    case 'uniqueItems':
      return { ...base, code: 'unique_items', message: `must not repeat an item (items ${params.j} and ${params.i} are the same)` };
    case 'minProperties':
      return { ...base, code: 'min_properties', message: `must have at least ${plural(params.limit, 'property', 'properties')}` };
    case 'maxProperties':
      return { ...base, code: 'max_properties', message: `must have at most ${plural(params.limit, 'property', 'properties')}` };
    case 'propertyNames':
      return { ...base, pointer: `${error.instancePath}/${escapePointer(shortName(String(params.propertyName)))}`, code: 'property_name', message: 'is not an allowed property name' };
    case 'oneOf':
      return { ...base, code: 'one_of', message: 'matches more than one of the allowed forms' };
    case 'anyOf':
      return { ...base, code: 'any_of', message: 'does not match any of the allowed forms' };
    default:
      return { ...base, code: 'invalid', message: error.message ?? 'is invalid' };
  }
}

const isWithin = (pointer: string, parent: string) => pointer === parent || pointer.startsWith(`${parent}/`);
const schemaBase = (schemaPath: string) => schemaPath.split('/', 1)[0];

/**
 * What a failed union (`anyOf`, `oneOf`) comes to, from the findings of its
 * branches. TypeBox writes a union of literals as an anyOf of `const`s: those
 * become one `enum` finding with every allowed value (`null` included for a
 * nullable one). A union of objects is reported by the branch that got
 * furthest: a branch refused for a different literal in one of its properties
 * (a discriminator such as `type`) is set aside while another branch remains.
 */
function unionFinding(union: ErrorObject, branches: Finding[][]): Finding[] {
  const at = union.instancePath;
  const all = branches.flat();
  if (branches.length > 0 && branches.every((b) => b.length >= 1) && all.every((f) => f.pointer === at && (f.code === 'enum' || f.code === 'const' || f.code === 'type'))) {
    const allowed: unknown[] = [];
    const types: string[] = [];
    for (const finding of all) {
      if (finding.code === 'type') {
        const named = finding.says.replace(/^must be of type /, '').split(',');
        for (const type of named) {
          if (type === 'null') allowed.push(null);
          else types.push(type);
        }
      } else {
        allowed.push(...(finding.allowed ?? []));
      }
    }
    const base = { pointer: at, parentPointer: at, schemaPath: union.schemaPath };
    if (types.length === 0) {
      return [{ ...base, code: 'enum', allowed, message: `must be one of: ${allowed.map(shown).join(', ')}`, says: `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}` }];
    }
    if (allowed.length === 0 || allowed.every((v) => v === null)) {
      const named = allowed.length > 0 ? [...types, 'null'] : types;
      return [{ ...base, code: 'type', message: `must be ${typeWords(named)}`, says: `must be of type ${named.join(' or ')}` }];
    }
    const words = [...allowed.map(shown), ...types.map((t) => TYPE_WORDS[t] ?? t)];
    return [{ ...base, code: 'any_of', allowed, message: `must be one of: ${oneOf(words)}`, says: `must be one of ${oneOf([...allowed.map((v) => JSON.stringify(v)), ...types])}` }];
  }
  const refusedByLiteral = (branch: Finding[]) => branch.some((f) => f.pointer !== at && (f.code === 'const' || f.code === 'enum') && isWithin(f.pointer, at));
  const candidates = branches.filter((b) => b.length > 0 && !refusedByLiteral(b));
  if (candidates.length === 1) return candidates[0];
  // Every branch was refused by its discriminator: the discriminator itself is what is wrong.
  if (candidates.length === 0 && branches.length > 0) {
    const literals = all.filter((f) => f.pointer !== at && (f.code === 'const' || f.code === 'enum'));
    const pointers = new Set(literals.map((f) => f.pointer));
    if (pointers.size === 1 && literals.length === branches.length) {
      const allowed = literals.flatMap((f) => f.allowed ?? []);
      const pointer = literals[0].pointer;
      return [{ pointer, parentPointer: pointer, schemaPath: union.schemaPath, code: 'enum', allowed, message: `must be one of: ${allowed.map(shown).join(', ')}`, says: `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}` }];
    }
  }
  return [findingOf(union)];
}

/** Ajv's errors as findings, each union's branch errors folded into what the union comes to. */
function findingsOf(errors: readonly ErrorObject[]): Finding[] {
  const findings: Finding[] = [];
  for (const error of errors) {
    if ((error.keyword !== 'anyOf' && error.keyword !== 'oneOf') || (error.keyword === 'oneOf' && (error.params as { passingSchemas?: unknown }).passingSchemas)) {
      findings.push(findingOf(error));
      continue;
    }
    // The branches' errors come just before the union's own, at or below its instance path:
    // in the union's own schema (schemaPath below the union's) or in a schema a branch references.
    const prefix = `${error.schemaPath}/`;
    const ownBase = schemaBase(error.schemaPath);
    let start = findings.length;
    while (start > 0) {
      const finding = findings[start - 1];
      const inBranch = finding.schemaPath.startsWith(prefix) || schemaBase(finding.schemaPath) !== ownBase;
      if (!inBranch || !isWithin(finding.pointer, error.instancePath)) break;
      start--;
    }
    const branchFindings = findings.splice(start);
    const branches: Finding[][] = [];
    let current = -1;
    for (const finding of branchFindings) {
      const index = finding.schemaPath.startsWith(prefix) ? Number(finding.schemaPath.slice(prefix.length).split('/', 1)[0]) : current < 0 ? 0 : current;
      if (index !== current || branches.length === 0) branches.push([]);
      current = index;
      branches[branches.length - 1].push(finding);
    }
    findings.push(...unionFinding(error, branches));
  }
  return findings;
}

/** The dotted path today's details use: `body.effects.0.points`. */
function dotted(location: Location, pointer: string): string {
  const path = pointer.replaceAll('/', '.');
  if (location.label) return `${location.label}${path}`;
  return path.slice(1) || location.whole || 'the value';
}

/** Ajv's errors for a value at `location`, as a detail sentence and per-field errors. */
export function describeProblems(errors: readonly ErrorObject[], location: Location): Problems {
  const findings = findingsOf(errors);
  if (findings.length === 0) findings.push({ pointer: '', parentPointer: '', schemaPath: '', code: 'invalid', message: 'is invalid', says: 'is invalid' });
  const shownFindings = findings.slice(0, FIELD_ERRORS_MAX);
  const prefix = location.pointer ?? '';
  const fieldErrors = shownFindings.map((f): FieldError => {
    const fieldError: FieldError = { in: location.in, path: `${prefix}${f.pointer}` || '/', code: f.code, message: f.message };
    if (f.allowed) fieldError.allowed = f.allowed;
    if (typeof f.limit === 'number') fieldError.limit = f.limit;
    return fieldError;
  });
  const sentences = shownFindings.map((f) => `${dotted(location, f.parentPointer)} ${f.says}`);
  const more = findings.length - 1;
  const detail = more > 0 ? `${sentences[0]} (and ${plural(more, 'more problem', 'more problems')}, listed in errors)` : sentences[0];
  return { detail, errors: fieldErrors, sentences };
}

/** The request part Fastify names (`querystring`) as an error's `in`. */
export function requestPartOf(httpPart: string | undefined): RequestPart {
  switch (httpPart) {
    case 'querystring':
      return 'query';
    case 'params':
    case 'headers':
    case 'body':
      return httpPart;
    default:
      return 'body';
  }
}

/**
 * A check for modules that validate a value by hand: null when the value is
 * valid, else its problems, described like a request's. Compiled once, on the
 * first call; bodies' configuration (no coercion). `pointer`, when given,
 * replaces the location's: an event of a batch is `/events/3`.
 */
export function compileCheck(schema: object, location: Location): (value: unknown, pointer?: string) => Problems | null {
  let validate: ValidateFunction | undefined;
  return (value, pointer) => {
    validate ??= compileValidator(schema);
    if (validate(value)) return null;
    return describeProblems(validate.errors ?? [], pointer === undefined ? location : { ...location, pointer });
  };
}
