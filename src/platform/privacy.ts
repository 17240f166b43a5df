import type { FastifyInstance, FastifyReply, FastifyRequest, preSerializationAsyncHookHandler } from 'fastify';
import type { AuthContext } from './auth.js';

/**
 * Personal data: what is personal, and the one step that masks it.
 *
 * The classification lives on the schemas. A response schema marks each
 * property that holds personal data with the keyword `x-personal` (the
 * option `personal(kind)`), and the kind says how it is masked:
 *
 * - a standard profile field (`email`, `first_name`, …, the spec's masking
 *   table plus gender): its own partial mask (`a***@example.com`, `***5678`);
 * - `contact` (payment method, device fingerprint) and `secret` (a prize
 *   code): `***`;
 * - `custom`: an object of the tenant's custom field values; the keys the
 *   tenant declared personal read `***`;
 * - `profile`: a profile-shaped object: standard fields at its top level and
 *   its `custom` object;
 * - `free-form`: data the tenant sent (event properties, webhook payloads):
 *   standard field names at any depth, and `custom` objects inside it;
 * - `conditions`: a list of filter conditions `{ fact, value }` (a segment's
 *   filter): the value of a condition whose fact is a personal standard field
 *   (`profile.email`) or a personal custom field (`custom.<key>`) is masked as
 *   that field would be (each item of a list value);
 * - `revealed`: a value shown in full on purpose to a caller the route lets
 *   see it (a reveal: `pii:reveal`, with a reason, logged); never masked in
 *   the answer, never kept in the audit log;
 * - `staff`: a console user's own contact (their email), shown to the
 *   colleagues a route lets see it and kept in the audit log: a person's
 *   work identity, not a participant's personal data.
 *
 * `x-secret: true` marks a credential in an answer (an invitation link, a new
 * key, a signing secret): shown once to its creator, never stored in the
 * audit log (platform/audit.ts drops it).
 *
 * Every route whose response schema holds such a mark gets one
 * preSerialization hook (installMasking) that masks its answer for callers
 * without `read:pii`; routes whose schemas hold none pay nothing. Export files
 * and audit snapshots go through the same functions (`maskWithPlan`,
 * `compileMaskPlan`). test/access-matrix.test.ts calls every route as every
 * role on seeded personal values and fails when one reaches a caller without
 * `read:pii`, so a property left unmarked is found without anyone listing it.
 */
export const PII_SCOPE = 'read:pii';
export const PERSONAL_KEYWORD = 'x-personal';
export const SECRET_KEYWORD = 'x-secret';

/** Standard profile fields masked without `read:pii` (the spec's table, plus gender: docs/decisions/privacy.md). */
export const PERSONAL_STANDARD_FIELDS = ['email', 'first_name', 'last_name', 'full_name', 'mobile_number', 'date_of_birth', 'gender'] as const;
export type PersonalStandardField = (typeof PERSONAL_STANDARD_FIELDS)[number];
/** Personal values outside the profile: contest fraud signals. */
export const CONTACT_FIELDS = ['payment_method', 'device_fingerprint'] as const;

export type PersonalKind = PersonalStandardField | 'contact' | 'secret' | 'custom' | 'profile' | 'free-form' | 'conditions' | 'revealed' | 'staff';

/** What a personal value reads as when masked and no partial form is defined. */
export const FULLY_MASKED = '***';
/** Free-form data is walked at most this deep; deeper values are masked whole. */
const FREE_FORM_DEPTH_MAX = 16;

const STANDARD: ReadonlySet<string> = new Set(PERSONAL_STANDARD_FIELDS);
/** Names that are personal wherever they appear in free-form data. */
const FREE_FORM_PERSONAL: ReadonlySet<string> = new Set([...PERSONAL_STANDARD_FIELDS, ...CONTACT_FIELDS]);

export const mayReadPersonalData = (auth: Pick<AuthContext, 'scopes'> | null | undefined): boolean => !!auth && auth.scopes.has(PII_SCOPE);

/** The schema option that marks personal data of a kind (see above): `Type.String({ ...personal('email') })`. */
export function personal(kind: PersonalKind): { [PERSONAL_KEYWORD]: PersonalKind } {
  return { [PERSONAL_KEYWORD]: kind };
}

/** The schema option that marks a credential shown once: never written to the audit log. */
export function secret(): { [SECRET_KEYWORD]: true } {
  return { [SECRET_KEYWORD]: true };
}

// ---- masks ----------------------------------------------------------------------
// Each mask is idempotent (a masked value masks to itself), so that data masked
// where it is built (an export row) passes the answer's step unchanged.

/** First character, `***`, then `@domain`: `a***@example.com`. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  // Unvalidated text (event properties) without an address form shows nothing.
  if (at < 1) return FULLY_MASKED;
  const first = Array.from(email.slice(0, at))[0] ?? '';
  return `${first}${FULLY_MASKED}@${email.slice(at + 1)}`;
}

/** The last 4 digits only, after `***`: `***5678`. */
export function maskMobileNumber(mobile: string): string {
  return `${FULLY_MASKED}${mobile.replace(/\D/g, '').slice(-4)}`;
}

/** The first 2 characters followed by `***`: `Ad***`. */
export function maskName(name: string): string {
  return `${Array.from(name).slice(0, 2).join('')}${FULLY_MASKED}`;
}

const INITIALS = /^(?:\p{Lu}\.)+$/u;

/** Initials only, each followed by a dot: `Ada King Lovelace` → `A.K.L.`. */
export function maskFullName(fullName: string): string {
  if (INITIALS.test(fullName)) return fullName;
  return fullName
    .split(/\s+/)
    .filter((word) => word !== '')
    .map((word) => `${(Array.from(word)[0] ?? '').toLocaleUpperCase()}.`)
    .join('');
}

/** The year only: `1990-05-17` → `1990`. */
export function maskDateOfBirth(date: string): string {
  if (/^\d{4}$/.test(date)) return date;
  return /^\d{4}-/.test(date) ? date.slice(0, 4) : FULLY_MASKED;
}

export function maskStandardField(field: PersonalStandardField, value: string): string {
  switch (field) {
    case 'email':
      return maskEmail(value);
    case 'mobile_number':
      return maskMobileNumber(value);
    case 'first_name':
    case 'last_name':
      return maskName(value);
    case 'full_name':
      return maskFullName(value);
    case 'date_of_birth':
      return maskDateOfBirth(value);
    case 'gender':
      return FULLY_MASKED;
  }
}

/** One personal value masked by its kind's rule; null stays null. */
function maskValue(field: string, value: unknown): unknown {
  if (value === null || value === undefined) return value;
  if (typeof value === 'string' && STANDARD.has(field)) return maskStandardField(field as PersonalStandardField, value);
  return FULLY_MASKED;
}

// ---- plans ------------------------------------------------------------------------

/** How to mask one value of a schema; compiled once per schema. */
export type MaskPlan =
  | { kind: 'value'; field: string }
  | { kind: 'custom' }
  | { kind: 'profile' }
  | { kind: 'free-form' }
  | { kind: 'conditions' }
  | { kind: 'object'; properties: ReadonlyMap<string, MaskPlan>; rest: MaskPlan | null }
  | { kind: 'array'; items: MaskPlan };

export interface MaskViewer {
  /** Whether the tenant declared the custom field of this key personal. */
  isPersonalCustomKey(key: string): boolean;
}

/** The viewer of a tenant whose personal custom fields are these keys. */
export const viewerWith = (personalCustomKeys: ReadonlySet<string>): MaskViewer => ({ isPersonalCustomKey: (key) => personalCustomKeys.has(key) });

/** A viewer that treats every custom field as personal: where the tenant's definitions cannot be read, mask more, not less. */
export const EVERY_CUSTOM_FIELD: MaskViewer = { isPersonalCustomKey: () => true };

type Schema = Record<string, unknown>;
export type SchemaResolver = (ref: string) => Schema | undefined;

function merge(a: MaskPlan | null, b: MaskPlan | null): MaskPlan | null {
  if (!a) return b;
  if (!b) return a;
  // A leaf mark wins over structure: the whole value is personal.
  if (a.kind !== 'object' && a.kind !== 'array') return a;
  if (b.kind !== 'object' && b.kind !== 'array') return b;
  if (a.kind === 'array' && b.kind === 'array') return { kind: 'array', items: merge(a.items, b.items)! };
  if (a.kind === 'object' && b.kind === 'object') {
    const properties = new Map(a.properties);
    for (const [key, plan] of b.properties) properties.set(key, merge(properties.get(key) ?? null, plan)!);
    return { kind: 'object', properties, rest: merge(a.rest, b.rest) };
  }
  // An object in one branch and an array in the other: keep both by walking freely.
  return { kind: 'free-form' };
}

/** The plan of a value marked with a kind: its own mask for a standard field, `***` for any other value kind. */
function leafPlan(kind: unknown): MaskPlan | null {
  switch (kind) {
    case 'revealed':
    case 'staff':
      return null;
    case 'custom':
    case 'profile':
    case 'free-form':
    case 'conditions':
      return { kind };
    default:
      return { kind: 'value', field: String(kind) };
  }
}

/**
 * The mask plan of a schema: null when it can hold no personal data. `$ref`s
 * are followed through `resolve`; a schema met again inside itself adds nothing.
 */
export function compileMaskPlan(schema: unknown, resolve: SchemaResolver, seen: Set<unknown> = new Set()): MaskPlan | null {
  if (!schema || typeof schema !== 'object') return null;
  const node = schema as Schema;
  if (seen.has(node)) return null;
  seen.add(node);
  try {
    if (typeof node.$ref === 'string') return compileMaskPlan(resolve(node.$ref.replace(/#$/, '')), resolve, seen);
    if (node[PERSONAL_KEYWORD] !== undefined) return leafPlan(node[PERSONAL_KEYWORD]);
    let plan: MaskPlan | null = null;
    for (const keyword of ['anyOf', 'oneOf', 'allOf'] as const) {
      const branches = node[keyword];
      if (Array.isArray(branches)) for (const branch of branches) plan = merge(plan, compileMaskPlan(branch, resolve, seen));
    }
    if (node.items) {
      const items = compileMaskPlan(node.items, resolve, seen);
      if (items) plan = merge(plan, { kind: 'array', items });
    }
    const properties = new Map<string, MaskPlan>();
    if (node.properties && typeof node.properties === 'object') {
      for (const [key, child] of Object.entries(node.properties as Record<string, unknown>)) {
        const childPlan = compileMaskPlan(child, resolve, seen);
        if (childPlan) properties.set(key, childPlan);
      }
    }
    let rest: MaskPlan | null = null;
    if (node.patternProperties && typeof node.patternProperties === 'object') {
      for (const child of Object.values(node.patternProperties as Record<string, unknown>)) rest = merge(rest, compileMaskPlan(child, resolve, seen));
    }
    if (node.additionalProperties && typeof node.additionalProperties === 'object') rest = merge(rest, compileMaskPlan(node.additionalProperties, resolve, seen));
    if (properties.size > 0 || rest) plan = merge(plan, { kind: 'object', properties, rest });
    return plan;
  } finally {
    seen.delete(node);
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => !!value && typeof value === 'object' && !Array.isArray(value);

/** `items` with `change` applied to each; the same array when nothing changed (answers share cached objects). */
function mapItems(items: unknown[], change: (item: unknown) => unknown): unknown[] {
  let out: unknown[] | null = null;
  items.forEach((item, index) => {
    const changed = change(item);
    if (changed !== item) (out ??= [...items])[index] = changed;
  });
  return out ?? items;
}

/** `record` with `change` applied to each entry; the same object when nothing changed. */
function mapEntries(record: Record<string, unknown>, change: (key: string, item: unknown) => unknown): Record<string, unknown> {
  let out: Record<string, unknown> | null = null;
  for (const [key, item] of Object.entries(record)) {
    const changed = change(key, item);
    if (changed !== item) (out ??= { ...record })[key] = changed;
  }
  return out ?? record;
}

function maskCustom(value: unknown, viewer: MaskViewer): unknown {
  if (!isRecord(value)) return value;
  return mapEntries(value, (key, item) => (item === null || item === undefined || !viewer.isPersonalCustomKey(key) ? item : FULLY_MASKED));
}

/** Standard personal names and `custom` objects at the top level of `value`, or at any depth when `deep`. */
function maskProfileShaped(value: unknown, viewer: MaskViewer, deep: boolean, depth = 0): unknown {
  if (depth > FREE_FORM_DEPTH_MAX) return FULLY_MASKED;
  if (Array.isArray(value)) return deep ? mapItems(value, (item) => maskProfileShaped(item, viewer, deep, depth + 1)) : value;
  if (!isRecord(value)) return value;
  return mapEntries(value, (key, item) => {
    if (FREE_FORM_PERSONAL.has(key)) return maskValue(key, item);
    if (key === 'custom') return maskCustom(item, viewer);
    return deep && item && typeof item === 'object' ? maskProfileShaped(item, viewer, deep, depth + 1) : item;
  });
}

/**
 * Filter conditions with the values of personal facts replaced by `mask(field, value)`:
 * `profile.<standard personal field>` as that field, `custom.<key>` when the tenant declared the key personal.
 */
function maskConditions(value: unknown, viewer: MaskViewer, mask: (field: string, item: unknown) => unknown): unknown {
  if (!Array.isArray(value)) return value;
  return mapItems(value, (condition) => {
    if (!isRecord(condition) || typeof condition.fact !== 'string' || condition.value === undefined || condition.value === null) return condition;
    const dot = condition.fact.indexOf('.');
    const [root, key] = [condition.fact.slice(0, dot), condition.fact.slice(dot + 1)];
    const personalField = root === 'profile' && STANDARD.has(key) ? key : root === 'custom' && dot > 0 && viewer.isPersonalCustomKey(key) ? 'custom' : null;
    if (!personalField) return condition;
    const masked = Array.isArray(condition.value) ? mapItems(condition.value, (item) => mask(personalField, item)) : mask(personalField, condition.value);
    return masked === condition.value ? condition : { ...condition, value: masked };
  });
}

/** `value` masked by `plan` for a caller without `read:pii`; untouched parts are shared, never copied or changed in place. */
export function maskWithPlan(value: unknown, plan: MaskPlan, viewer: MaskViewer): unknown {
  if (value === null || value === undefined) return value;
  switch (plan.kind) {
    case 'value':
      return maskValue(plan.field, value);
    case 'custom':
      return maskCustom(value, viewer);
    case 'profile':
      return maskProfileShaped(value, viewer, false);
    case 'free-form':
      return maskProfileShaped(value, viewer, true);
    case 'conditions':
      return maskConditions(value, viewer, maskValue);
    case 'array':
      return Array.isArray(value) ? mapItems(value, (item) => maskWithPlan(item, plan.items, viewer)) : value;
    case 'object':
      return isRecord(value)
        ? mapEntries(value, (key, item) => {
            const child = plan.properties.get(key) ?? plan.rest;
            return child ? maskWithPlan(item, child, viewer) : item;
          })
        : value;
  }
}

/** Whether a plan needs the tenant's custom field definitions. */
function needsCustomKeys(plan: MaskPlan): boolean {
  switch (plan.kind) {
    case 'value':
      return false;
    case 'custom':
    case 'profile':
    case 'free-form':
    case 'conditions':
      return true;
    case 'array':
      return needsCustomKeys(plan.items);
    case 'object':
      return (plan.rest !== null && needsCustomKeys(plan.rest)) || [...plan.properties.values()].some(needsCustomKeys);
  }
}

// ---- the answer's masking step ----------------------------------------------------------

export interface MaskingOptions {
  /** Shared schemas by `$id`, for `$ref`s in response schemas. */
  schemas: readonly Schema[];
  /** The keys of a tenant's personal custom fields (cached by its owner, the participants module). */
  personalCustomKeys(tenantId: string): Promise<ReadonlySet<string>>;
}

/** Shared schemas by `$id`, for the `$ref`s of route schemas. */
export function schemaResolver(schemas: readonly Schema[]): SchemaResolver {
  const byId = new Map(schemas.filter((schema) => typeof schema.$id === 'string').map((schema) => [schema.$id as string, schema]));
  return (ref) => byId.get(ref);
}

/** A route's response schemas by status key, as Fastify takes them (`200`, `2xx`, `default`). */
export type ResponseSchemas = Record<string, unknown> | undefined;

/** The key a status's schema stands under, as Fastify chooses it: `201`, then `2xx`, then `default`. */
function statusKeyOf(response: ResponseSchemas, status: number): string | undefined {
  return [String(status), `${String(status)[0]}xx`, 'default'].find((key) => response?.[key] !== undefined);
}

/** The body schema of an answer schema (a `content` map's first media type, or the schema itself). */
function bodyOf(schema: unknown): unknown {
  return isRecord(schema) && isRecord(schema.content) ? (Object.values(schema.content)[0] as { schema?: unknown } | undefined)?.schema : schema;
}

/** The body schema of the answer with this status. */
export function answerSchema(response: ResponseSchemas, status: number): unknown {
  const key = statusKeyOf(response, status);
  return key === undefined ? undefined : bodyOf(response![key]);
}

export async function viewerOf(request: FastifyRequest, options: Pick<MaskingOptions, 'personalCustomKeys'>): Promise<MaskViewer> {
  const tenantId = request.auth?.tenantId;
  if (!tenantId) return EVERY_CUSTOM_FIELD;
  try {
    return viewerWith(await options.personalCustomKeys(tenantId));
  } catch (error) {
    request.log.warn({ err: error }, 'the personal custom fields could not be read; every custom field is masked');
    return EVERY_CUSTOM_FIELD;
  }
}

/**
 * The one masking step of answers: every route whose response schema can hold
 * personal data masks its answer for a caller without `read:pii`, before it
 * is serialized. Installed before the modules' routes are registered.
 */
export function installMasking(app: FastifyInstance, options: MaskingOptions): void {
  const resolve = schemaResolver(options.schemas);
  app.addHook('onRoute', (route) => {
    const response = (route.schema as { response?: ResponseSchemas } | undefined)?.response;
    // The plan of each status key the route declares; keys whose answers hold nothing personal are left out.
    const plans = new Map<string, MaskPlan>();
    for (const key of Object.keys(response ?? {})) {
      const plan = compileMaskPlan(bodyOf(response![key]), resolve);
      if (plan) plans.set(key, plan);
    }
    if (plans.size === 0) return;
    const customKeysNeeded = [...plans.values()].some(needsCustomKeys);
    const mask: preSerializationAsyncHookHandler = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      if (mayReadPersonalData(request.auth)) return payload;
      const key = statusKeyOf(response, reply.statusCode);
      const plan = key === undefined ? undefined : plans.get(key);
      if (!plan) return payload;
      const viewer = customKeysNeeded ? await viewerOf(request, options) : EVERY_CUSTOM_FIELD;
      return maskWithPlan(payload, plan, viewer);
    };
    const existing = route.preSerialization;
    route.preSerialization = (existing === undefined ? [mask] : [...(Array.isArray(existing) ? existing : [existing]), mask]) as typeof route.preSerialization;
  });
}

// ---- snapshots for the audit log ------------------------------------------------------------

export const REDACTED = '[redacted]';

/**
 * A value as the audit log keeps it: only what its schema declares (an
 * allowlist: properties the schema does not name are dropped), credentials
 * (`x-secret`) left out, personal values (`x-personal`) replaced by
 * "[redacted]" whoever reads the log, and free-form or open data walked for
 * personal names and the tenant's personal custom fields.
 */
export function auditSnapshot(value: unknown, schema: unknown, resolve: SchemaResolver, viewer: MaskViewer, seen: Set<unknown> = new Set()): unknown {
  if (value === null || value === undefined) return value ?? null;
  if (!schema || typeof schema !== 'object') return redactFreeForm(value, viewer);
  const node = schema as Schema;
  if (typeof node.$ref === 'string') {
    const target = resolve(node.$ref.replace(/#$/, ''));
    if (!target || seen.has(target)) return redactFreeForm(value, viewer);
    seen.add(target);
    try {
      return auditSnapshot(value, target, resolve, viewer, seen);
    } finally {
      seen.delete(target);
    }
  }
  if (node[SECRET_KEYWORD] === true) return undefined;
  const kind = node[PERSONAL_KEYWORD];
  if (kind !== undefined) {
    if (kind === 'custom') return redactCustom(value, viewer);
    if (kind === 'profile' || kind === 'free-form') return redactFreeForm(value, viewer);
    if (kind === 'conditions') return maskConditions(value, viewer, (_field, item) => (item === null ? null : REDACTED));
    if (kind === 'staff') return value;
    return REDACTED;
  }
  if (Array.isArray(node.allOf)) {
    // Every part of an intersection allows what it declares.
    const parts = node.allOf.map((part) => auditSnapshot(value, part, resolve, viewer, seen));
    return parts.every((part) => part && typeof part === 'object' && !Array.isArray(part)) ? Object.assign({}, ...parts) : parts[0];
  }
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const branches = node[keyword];
    if (!Array.isArray(branches)) continue;
    const fitting = branches.filter((candidate) => fits(value, candidate as Schema, resolve));
    if (fitting.length === 0) return redactFreeForm(value, viewer);
    const kept = fitting.map((branch) => auditSnapshot(value, branch, resolve, viewer, seen));
    // Objects that fit several branches keep what any of them declares.
    return kept.every((item) => item && typeof item === 'object' && !Array.isArray(item)) ? Object.assign({}, ...kept) : kept[0];
  }
  if (Array.isArray(value)) return node.items ? value.map((item) => auditSnapshot(item, node.items, resolve, viewer, seen) ?? null) : redactFreeForm(value, viewer);
  if (typeof value !== 'object') return value;
  const properties = (node.properties ?? {}) as Record<string, unknown>;
  const rest = node.patternProperties
    ? Object.values(node.patternProperties as Record<string, unknown>)[0]
    : typeof node.additionalProperties === 'object'
      ? node.additionalProperties
      : null;
  // An open object (additionalProperties: true, or a schema that names no property) holds data no schema describes.
  const open = node.additionalProperties === true || (node.additionalProperties === undefined && node.properties === undefined && !rest);
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if (key in properties) {
      const kept = auditSnapshot(item, properties[key], resolve, viewer, seen);
      if (kept !== undefined) out[key] = kept;
    } else if (rest) {
      const kept = auditSnapshot(item, rest, resolve, viewer, seen);
      if (kept !== undefined) out[key] = kept;
    } else if (open) {
      Object.assign(out, redactFreeForm({ [key]: item }, viewer));
    }
    // Anything else is not on the allowlist: left out.
  }
  return out;
}

/** Whether a value has the JSON type of a schema branch (enough to pick a union's branch). */
function fits(value: unknown, schema: Schema, resolve: SchemaResolver): boolean {
  const target = typeof schema.$ref === 'string' ? (resolve(schema.$ref.replace(/#$/, '')) ?? {}) : schema;
  if (target.const !== undefined) return target.const === value;
  if (Array.isArray(target.enum)) return target.enum.includes(value);
  if (target.type === undefined) return true;
  const types = Array.isArray(target.type) ? target.type : [target.type];
  return types.some((type) => {
    switch (type) {
      case 'null':
        return value === null;
      case 'array':
        return Array.isArray(value);
      case 'object':
        return typeof value === 'object' && value !== null && !Array.isArray(value);
      case 'integer':
      case 'number':
        return typeof value === 'number';
      default:
        return typeof value === type;
    }
  });
}

function redactCustom(value: unknown, viewer: MaskViewer): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, viewer.isPersonalCustomKey(key) && item !== null ? REDACTED : item]));
}

/** Free-form data for the audit log: standard personal names at any depth and personal custom fields read "[redacted]". */
export function redactFreeForm(value: unknown, viewer: MaskViewer, depth = 0): unknown {
  if (depth > FREE_FORM_DEPTH_MAX) return REDACTED;
  if (Array.isArray(value)) return value.map((item) => redactFreeForm(item, viewer, depth + 1));
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (FREE_FORM_PERSONAL.has(key)) out[key] = item === null ? null : REDACTED;
    else if (key === 'custom') out[key] = redactCustom(item, viewer);
    else out[key] = redactFreeForm(item, viewer, depth + 1);
  }
  return out;
}
