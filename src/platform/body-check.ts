import type { TSchema } from '@sinclair/typebox';
import { AppError, fieldError, invalid, type RequestPart } from './errors.js';
import { compileCheck } from './validation.js';

/**
 * Checks a body that reaches a module's `…InTx` function from another module
 * (a sandbox promotion copying definitions) against the schema its admin route
 * validates with, so that no caller writes what the route would refuse. The
 * refusal is a 400 naming the item and the first problem, with every problem
 * in `errors` (paths into the definition).
 */
export function bodyChecker(schema: TSchema, what: string): (body: unknown, name: string) => void {
  const check = compileCheck(schema, { in: 'body', label: '', whole: 'the definition' });
  return (body, name) => {
    const text = unstorableTextError(body, { in: 'body', label: 'the definition' });
    if (text) throw invalid(`${what} ${JSON.stringify(name)}: ${text.message}`, 'VALIDATION_INVALID_REQUEST', text.extra);
    const problems = check(body);
    if (problems) throw invalid(`${what} ${JSON.stringify(name)}: ${problems.detail}`, 'VALIDATION_INVALID_VALUE', { errors: problems.errors });
  };
}

// ---- text PostgreSQL cannot store ---------------------------------------------------------

/**
 * PostgreSQL's text and jsonb cannot hold U+0000, and a UTF-16 surrogate that
 * is not half of a pair is no Unicode character at all (JSON.parse turns the
 * escape "\ud800" into one). Either reaches the database as a class 22 error
 * whose text names the server's internals, so every input is checked for them
 * first and refused with a detail that names the field.
 */
/** Fast pre-check: a NUL or any surrogate. Most strings have neither, and the test allocates nothing. */
const SUSPECT = /[\u0000\uD800-\uDFFF]/;
/** The exact rule: a NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True when PostgreSQL can store the string as text. */
export function isStorableText(text: string): boolean {
  return !SUSPECT.test(text) || !UNSTORABLE.test(text);
}

/** What is wrong with a string that is not storable, for a detail: "contains U+0000" or "contains a lone surrogate (U+D800)". */
export function unstorableReason(text: string): string {
  const match = UNSTORABLE.exec(text);
  if (!match || match[0] === '\u0000') return 'contains U+0000 (NUL), which cannot be stored';
  return `contains a lone UTF-16 surrogate (U+${match[0].charCodeAt(0).toString(16).toUpperCase()}), which is not a Unicode character`;
}

/** The string with each NUL and lone surrogate replaced by U+FFFD: for text of ours that quotes input (a parser's message). */
export function storableText(text: string): string {
  return isStorableText(text) ? text : text.replace(new RegExp(UNSTORABLE.source, 'g'), '\uFFFD');
}

/**
 * Containers the walk descends into: arrays and plain objects, never a stream.
 * JSON.parse makes objects of Object.prototype; the query string and path
 * parsers make objects of a prototype of their own whose prototype is null.
 */
function isPlainContainer(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return true;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null || Object.getPrototypeOf(prototype) === null;
}

/**
 * The walk's stack, kept between calls: the walk is synchronous, so one is
 * enough, and a request allocates nothing for it. A stack rather than
 * recursion: a JSON body may nest 100,000 levels deep.
 */
const pending: unknown[] = [];

/** True when every string and property name in `value` is storable. The hot path: no allocation per string. */
function allTextStorable(value: unknown): boolean {
  if (typeof value === 'string') return isStorableText(value);
  if (!isPlainContainer(value)) return true;
  pending.length = 0;
  pending.push(value);
  try {
    while (pending.length > 0) {
      const current = pending.pop() as Record<string, unknown> | unknown[];
      if (Array.isArray(current)) {
        for (let i = 0; i < current.length; i++) {
          const item = current[i];
          if (typeof item === 'string') {
            if (!isStorableText(item)) return false;
          } else if (isPlainContainer(item)) pending.push(item);
        }
        continue;
      }
      for (const key in current) {
        if (!isStorableText(key)) return false;
        const item = current[key];
        if (typeof item === 'string') {
          if (!isStorableText(item)) return false;
        } else if (isPlainContainer(item)) pending.push(item);
      }
    }
    return true;
  } finally {
    pending.length = 0;
  }
}

/** The longest field path a detail repeats; a longer one is cut. */
const PATH_LENGTH_MAX = 200;

const pathOf = (path: string) => (path.length <= PATH_LENGTH_MAX ? path : `${path.slice(0, PATH_LENGTH_MAX)}…`);

/** Where the first unstorable string is: the keys down to it, and whether the string is a property name there. */
interface UnstorableText {
  keys: string[];
  reason: string;
  inPropertyName: boolean;
}

/** Finds the first unstorable string again, this time keeping paths: only run once the fast walk has found one. */
function findFirst(value: unknown): UnstorableText | null {
  const stack: Array<[unknown, string[]]> = [[value, []]];
  while (stack.length > 0) {
    const [current, keys] = stack.pop()!;
    if (typeof current === 'string') {
      if (!isStorableText(current)) return { keys, reason: unstorableReason(current), inPropertyName: false };
      continue;
    }
    if (!isPlainContainer(current)) continue;
    // Pushed in reverse, so that the first problem in document order is the one named.
    const entries = Array.isArray(current) ? current.map((item, i) => [String(i), item] as const) : Object.entries(current);
    for (const [key] of entries) {
      if (!Array.isArray(current) && !isStorableText(key)) return { keys, reason: unstorableReason(key), inPropertyName: true };
    }
    for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i][1], [...keys, entries[i][0]]]);
  }
  return null;
}

function sentenceOf(found: UnstorableText | null, root: string): string {
  if (!found) return `${pathOf(root)} contains text that cannot be stored`;
  const path = pathOf([root, ...found.keys].join('.'));
  return found.inPropertyName ? `${path} has a property name that ${found.reason}` : `${path} ${found.reason}`;
}

/**
 * Null when every string and property name in `value` can be stored, else
 * what is wrong and where, the path starting at `root`: for example
 * `body.properties.note contains U+0000 (NUL), which cannot be stored`.
 */
export function unstorableTextIn(value: unknown, root: string): string | null {
  return allTextStorable(value) ? null : sentenceOf(findFirst(value), root);
}

/**
 * Null when every string and property name in a request part can be stored,
 * else a 400 VALIDATION_INVALID_REQUEST whose detail reads like
 * unstorableTextIn's and whose `errors` points at the field (code
 * `unstorable_text`; the object, for a property name).
 */
export function unstorableTextError(value: unknown, where: { in: RequestPart; label: string }): AppError | null {
  if (allTextStorable(value)) return null;
  const found = findFirst(value);
  const pointer = (found?.keys ?? []).map((key) => key.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
  const message = found ? (found.inPropertyName ? `has a property name that ${found.reason}` : found.reason) : 'contains text that cannot be stored';
  return invalid(sentenceOf(found, where.label), 'VALIDATION_INVALID_REQUEST', {
    errors: [fieldError(pathOf(pointer ? `/${pointer}` : '/'), 'unstorable_text', message, { in: where.in })],
  });
}
