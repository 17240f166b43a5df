/**
 * Examples for the OpenAPI document, so that `/docs` and generated clients
 * show requests and answers a person would send and read instead of
 * placeholders shaped like the schemas' patterns.
 *
 * A schema may carry its own `examples` (JSON Schema's keyword): the first is
 * used for that schema wherever it appears, so the examples that matter most
 * are written by hand beside the schema they illustrate. Everything else is
 * composed from the schemas with the value a loyalty program would use for a
 * field of that name. `test/reference.test.ts` validates every example against
 * its schema, so a composed value that stops fitting fails the suite and gets
 * a hand-written example instead.
 */
import type { FieldError } from './errors.js';

type Schema = Record<string, any>;
type Document = { paths: Record<string, Record<string, any>>; components?: { schemas?: Record<string, Schema> } };

const NOW = '2026-11-26T09:30:00.000Z';
/**
 * Time windows: a campaign runs from NOW to the end of next year (a window
 * that has ended cannot be published), a report covers the month before NOW.
 */
const WINDOW_END = '2027-12-31T23:00:00.000Z';
const REPORT_START = '2026-11-01T00:00:00.000Z';
const WINDOWS: ReadonlyArray<[string, string, string, string]> = [
  ['starts_at', 'ends_at', NOW, WINDOW_END],
  ['available_from', 'available_until', NOW, WINDOW_END],
  ['from', 'to', REPORT_START, NOW],
  ['since', 'until', REPORT_START, NOW],
];
const DEPTH_MAX = 8;

/** Values by field name: the first pattern that matches the name wins. */
const STRINGS: ReadonlyArray<[RegExp, string]> = [
  [/^participant_id$|^referrer_id$|^referee_id$|^user_id$/, 'user_1042'],
  [/^tenant_id$/, '5b7e0a3c-2f4d-4c61-9a8e-0d2b6c1f7e93'],
  [/^idempotency_key$/, 'order-88412-points'],
  [/^session_id$/, 'ses_9c41d7e2a0b34f58'],
  [/^engagement_id$/, 'eng_3fa85f64'],
  // Ids a caller chooses: the ones the creators' examples choose.
  [/^contest_id$/, 'spring-rally-2026'],
  [/^reward_id$/, 'spring-coupon-10'],
  [/^(message_id|event_id)$/, 'evt_01JDX4S7Q9M2K8'],
  [/^ledger_entry_id$|^entry_id$/, 'ple_7d2c91a04b3e'],
  [/^(job_id|import_id|export_id)$/, 'job_4e1f8a2b'],
  [/^(event_name|event_type|fact_name)$/, 'purchase_completed'],
  // A webhook event of the catalogue (src/modules/webhooks/catalog.ts).
  [/^event$/, 'points.awarded.v1'],
  [/email/, 'ada@example.com'],
  [/phone/, '+14155550123'],
  [/^(first_name|given_name)$/, 'Ada'],
  [/^(last_name|family_name)$/, 'Lovelace'],
  [/^display_name$|^name$/, 'Gold Explorer'],
  [/^title$/, 'Spring Rally'],
  [/^reason$/, 'Welcome bonus'],
  [/^(memo|note)$/, 'Goodwill gesture after a late delivery'],
  [/description/, 'Earn 2× points on every purchase this weekend.'],
  [/^country_code$/, 'DE'],
  [/^postal_code$/, '10115'],
  [/^code$|_code$/, 'first_purchase'],
  [/^key$/, 'favourite_store'],
  [/slug/, 'spring-rally'],
  [/^(url|.*_url)$/, 'https://shop.example.com/loyalty'],
  [/^(secret|signing_secret)$/, 'whsec_3k9Qm2Vx7Lp1Zt8Rb4Nc6Yd0Hf5Ja2Gs'],
  [/^(api_key|key_plaintext|plaintext)$/, 'lk_live_9f86d081884c7d659a2feaa0c55ad015'],
  [/^prefix$/, 'lk_live_9f86'],
  [/^currency$|currency_code/, 'EUR'],
  [/^currency_name$/, 'Stars'],
  [/^(locale|language)$/, 'en-US'],
  [/^(time_?zone|tz)$/, 'Europe/Berlin'],
  [/^country/, 'DE'],
  [/^cursor$|^next_cursor$/, 'eyJpZCI6IjAxSkRYNFM3In0'],
  [/^password$/, 'correct horse battery staple'],
  [/^token$|_token$/, 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJl'],
  [/^role$/, 'marketer'],
  [/^status$|^state$/, 'active'],
  [/^(sku|product_id)$/, 'SKU-1042'],
  [/^(id|.*_id)$/, 'rwd_5c2e9a71'],
  [/^(full_name|actor_label|moved_by|decided_by|actor)$/, 'Ada Lovelace'],
  [/^(label|prize_label|reward_name|item_name|badge_name|rule_name)$/, 'Free coffee'],
  [/^(decision_note)$/, 'Checked the copy and the dates; fine to publish'],
  [/^(unlock_hint)$/, 'Finish the quiz to open this screen'],
  [/^colou?r$/, '#F5A623'],
  [/^text$/, 'Which drink do we brew with single-origin beans?'],
  [/^options?$/, 'Flat white'],
  [/^metric$/, 'lifetime_points'],
  [/^period$/, 'weekly'],
  [/^plan$/, 'enterprise'],
  [/^environment$/, 'live'],
  [/^(url_patterns?)$/, '/checkout/*'],
  [/^(attribute|score_attribute|property|field|columns?)$/, 'order_total'],
  [/^(last_error|error)$/, 'the receiver answered 503 Service Unavailable'],
  [/^(detail|message)$/, 'amount must be a positive integer'],
  [/^item_revision$/, '4'],
  [/^gender$/, 'female'],
  [/^city$/, 'Berlin'],
  [/^(date_of_birth|birthday)$/, '1990-12-10'],
  [/^mobile/, '+14155550123'],
  [/^(code_source)$/, 'pool'],
  [/^(code_prefix)$/, 'SPRING-'],
  [/^response_body$/, '{"received":true}'],
  [/^(device_fingerprint|device_id)$/, 'fp_2f8a61c94d7b'],
  [/^payment_method$/, 'card_4242'],
  [/^signal$/, 'same_device'],
  [/^(from_status)$/, 'draft'],
  [/^(to_status)$/, 'scheduled'],
  [/^(activity_type)$/, 'quiz'],
  [/^(type|kind|display_type|source_kind|actor_type|emitter)$/, 'standard'],
  [/^(action)$/, 'rule.updated'],
  [/^(method)$/, 'PATCH'],
  [/^(route)$/, '/api/v1/admin/rules/:rule_id'],
  [/^(resource_type)$/, 'rule'],
  [/^(conditions?|conditions_met|conditions_remaining)$/, 'quiz_completed'],
  [/^(current_password|new_password)$/, 'correct horse battery staple'],
  [/^(export_format)$/, 'csv'],
  [/^(fields_accessed|personal_data|milestones_reached|badges_awarded)$/, 'email'],
  [/^(around)$/, 'user_1042'],
  [/^(replay_of)$/, 'dlv_4c1e9a72'],
  [/^(store)$/, 'berlin-mitte'],
  [/^prize_type$/, 'points'],
  [/^evaluator$/, 'event_count'],
  [/^prize_status$/, 'held'],
  [/^(capped_rules?|streaks_continued)$/, 'daily_login'],
  [/^statuse$/, 'FAILED'],
];

const INTEGERS: ReadonlyArray<[RegExp, number]> = [
  [/^(amount|points|delta|points_awarded|award)$/, 250],
  [/^(available|balance|lifetime|total_points|score)$/, 1250],
  [/^(limit|page_size)$/, 50],
  [/^(offset)$/, 0],
  [/seconds$/, 30],
  [/(^|_)(count|total|rank|attempts?|version)/, 3],
  [/threshold/, 1000],
];

const BOOLEANS_TRUE = /^(active|enabled|eligible|accepted|allowed|ok|unlocked|ready|verified)$/;

export class ExampleComposer {
  constructor(private readonly document: Document) {}

  /** The schema behind a `$ref` into the document's components. */
  resolve(schema: Schema): Schema {
    let current = schema;
    for (let hops = 0; current && typeof current.$ref === 'string' && hops < 10; hops++) {
      const name = current.$ref.replace('#/components/schemas/', '');
      current = this.document.components?.schemas?.[name] ?? {};
    }
    return current ?? {};
  }

  example(schema: Schema, name = '', depth = 0): unknown {
    const own = this.resolve(schema);
    if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
    if (Array.isArray(own.examples) && own.examples.length > 0) return own.examples[0];
    if (own.example !== undefined) return own.example;
    if (own.const !== undefined) return own.const;
    if (Array.isArray(own.enum) && own.enum.length > 0) return own.enum[0];
    if (own.default !== undefined && typeof own.default !== 'object') return own.default;
    const variants: Schema[] | undefined = own.anyOf ?? own.oneOf;
    if (variants) {
      const chosen = variants.find((variant) => this.resolve(variant).type !== 'null') ?? variants[0];
      return this.example(chosen, name, depth + 1);
    }
    if (Array.isArray(own.allOf)) return Object.assign({}, ...own.allOf.map((part: Schema) => this.example(part, name, depth + 1)));
    const type = Array.isArray(own.type) ? own.type.find((t: string) => t !== 'null') : own.type;
    switch (type ?? (own.properties ? 'object' : undefined)) {
      case 'object':
        return this.objectExample(own, depth, name);
      case 'array': {
        if (depth >= DEPTH_MAX || !own.items) return [];
        const count = Math.max(1, own.minItems ?? 1);
        return Array.from({ length: count }, (_, i) => this.distinct(this.example(own.items, singular(name), depth + 1), i));
      }
      case 'string':
        return stringExample(own, name);
      case 'integer':
        return numberExample(own, name, true);
      case 'number':
        return numberExample(own, name, false);
      case 'boolean':
        return BOOLEANS_TRUE.test(name);
      case 'null':
        return null;
      default:
        return {};
    }
  }

  private objectExample(schema: Schema, depth: number, name = ''): Record<string, unknown> {
    const result: Record<string, unknown> = {};
    if (depth >= DEPTH_MAX) return result;
    const properties: Record<string, Schema> = schema.properties ?? {};
    for (const [key, property] of Object.entries(properties)) result[key] = this.example(property, key, depth + 1);
    for (const [start, end, startValue, endValue] of WINDOWS) {
      if (!(start in properties) || !(end in properties)) continue;
      if (result[start] === NOW || result[start] === REPORT_START) result[start] = startValue;
      if (result[end] === NOW || result[end] === REPORT_START) result[end] = endValue;
    }
    if (Object.keys(properties).length === 0 && schema.additionalProperties && typeof schema.additionalProperties === 'object') {
      // A participant's custom fields are keyed by the field the participant-fields example defines.
      result[name === 'custom' ? 'favourite_store' : 'store'] = this.example(schema.additionalProperties, 'store', depth + 1);
    }
    return result;
  }

  /** The second item of an example list differs from the first where that is easy to see. */
  private distinct(value: unknown, index: number): unknown {
    if (index === 0) return value;
    if (typeof value === 'string') return `${value}_${index + 1}`;
    if (typeof value === 'number') return value + index;
    return value;
  }
}

function singular(name: string): string {
  return name.endsWith('ies') ? `${name.slice(0, -3)}y` : name.endsWith('s') ? name.slice(0, -1) : name;
}

function stringExample(schema: Schema, name: string): string {
  switch (schema.format) {
    case 'date-time':
      return NOW;
    case 'date':
      return NOW.slice(0, 10);
    case 'email':
      return 'ada@example.com';
    case 'uri':
      return 'https://shop.example.com/loyalty';
    case 'uuid':
      return '5b7e0a3c-2f4d-4c61-9a8e-0d2b6c1f7e93';
    case 'ipv4':
      return '203.0.113.7';
    case 'ipv6':
      return '2001:db8::7';
  }
  let value = 'Spring weekend bonus';
  if (name.endsWith('_at') || name === 'at' || name === 'since' || name === 'until') value = NOW;
  else {
    const hit = STRINGS.find(([pattern]) => pattern.test(name));
    if (hit) value = hit[1];
  }
  if (schema.pattern && !new RegExp(schema.pattern, 'u').test(value)) {
    const plain = 'spring_bonus';
    if (new RegExp(schema.pattern, 'u').test(plain)) value = plain;
  }
  if (typeof schema.maxLength === 'number' && value.length > schema.maxLength) value = value.slice(0, schema.maxLength);
  if (typeof schema.minLength === 'number' && value.length < schema.minLength) value = value.padEnd(schema.minLength, 'x');
  return value;
}

function numberExample(schema: Schema, name: string, integer: boolean): number {
  let value = integer ? 3 : 1.5;
  const hit = INTEGERS.find(([pattern]) => pattern.test(name));
  if (hit) value = hit[1];
  if (!integer && /multiplier|factor/.test(name)) value = 2;
  if (!integer && /(rate|ratio|probability|weight|share)/.test(name)) value = 0.25;
  const minimum = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + (integer ? 1 : 0.5) : undefined);
  const maximum = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - (integer ? 1 : 0.5) : undefined);
  if (minimum !== undefined && value < minimum) value = minimum;
  if (maximum !== undefined && value > maximum) value = maximum;
  return integer ? Math.round(value) : value;
}

/**
 * An error body for each documented error status: the shape every error
 * shares, with the usual code there. The 400 shows the per-field `errors`
 * that every refusal by a route's schema carries.
 */
const ERROR_EXAMPLES: Record<string, { code: string; detail: string; errors?: FieldError[] }> = {
  400: {
    code: 'VALIDATION_INVALID_REQUEST',
    detail: 'body.effects.0.type must be one of "award_points", "award_badge", "continue_streak"',
    errors: [{ in: 'body', path: '/effects/0/type', code: 'enum', message: 'must be one of: award_points, award_badge, continue_streak', allowed: ['award_points', 'award_badge', 'continue_streak'] }],
  },
  401: { code: 'AUTH_UNAUTHENTICATED', detail: 'this route needs an API key (X-API-Key)' },
  403: { code: 'AUTH_FORBIDDEN', detail: 'the credential lacks the required scope (one of: admin, gamify:admin)' },
  404: { code: 'RESOURCE_NOT_FOUND', detail: 'participant not found' },
  409: { code: 'IDEMPOTENCY_IN_PROGRESS', detail: 'a request with this idempotency key is still running; retry when it has answered' },
  413: { code: 'PAYLOAD_TOO_LARGE', detail: 'the request body is larger than 1048576 bytes' },
  415: { code: 'UNSUPPORTED_MEDIA_TYPE', detail: 'the request body must be JSON (Content-Type: application/json)' },
  422: { code: 'IDEMPOTENCY_KEY_REUSED', detail: 'this idempotency key was already used with a different request (route, parameters or body) in the last 24 hours' },
  429: { code: 'RATE_LIMITED', detail: 'rate limit exceeded (tenant: 1000 requests per window); retry after 12 s' },
  500: { code: 'INTERNAL_ERROR', detail: 'internal error; the request id is in X-Request-Id' },
  503: { code: 'SERVICE_OVERLOADED', detail: 'the service is at its limit of 1000 requests in progress; nothing was done: retry after 1 s' },
};

export const ERROR_CODES_BY_STATUS: Record<string, readonly string[]> = {
  400: ['VALIDATION_INVALID_VALUE', 'VALIDATION_INVALID_REQUEST', 'INVALID_JSON', 'INVALID_CURSOR', 'IDEMPOTENCY_KEY_MISMATCH', 'IDEMPOTENCY_KEY_REQUIRED', 'AUTH_CONFLICTING_CREDENTIALS'],
  401: ['AUTH_UNAUTHENTICATED'],
  403: ['AUTH_FORBIDDEN'],
  404: ['RESOURCE_NOT_FOUND', 'ROUTE_NOT_FOUND'],
  409: ['CONFLICT', 'IDEMPOTENCY_IN_PROGRESS', 'IDEMPOTENCY_KEY_ABANDONED', 'and conflicts of the route (for example a duplicate code)'],
  413: ['PAYLOAD_TOO_LARGE'],
  415: ['UNSUPPORTED_MEDIA_TYPE'],
  422: ['IDEMPOTENCY_KEY_REUSED', 'and the rule violations of the route (for example `insufficient_points`)'],
  429: ['RATE_LIMITED'],
  500: ['INTERNAL_ERROR'],
  503: ['SERVICE_OVERLOADED', 'COMMIT_OUTCOME_UNKNOWN', "and the route's own (for example `REFERRAL_CODE_EXHAUSTED`)"],
};

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/**
 * A schema validated loosely on purpose (a batch's events, each checked on
 * its own so that one bad event does not sink the batch) names the shared
 * schema it stands for under this keyword; the document shows that schema,
 * so readers and generated clients see the real shape.
 */
export const DOCUMENTED_AS = 'x-documented-as';
/** Marks, in the document, a schema shown through DOCUMENTED_AS: the service checks each such item on its own. */
const VALIDATED_PER_ITEM = 'x-validated-per-item';

function showDocumentedSchemas(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(showDocumentedSchemas);
  if (typeof node !== 'object' || node === null) return;
  const record = node as Record<string, unknown>;
  for (const [key, value] of Object.entries(record)) {
    if (value && typeof value === 'object' && typeof (value as Schema)[DOCUMENTED_AS] === 'string') {
      const { description } = value as Schema;
      // `x-validated-per-item`: a request the service accepts (2xx) may still hold items that do not fit; it rejects them in the answer.
      record[key] = { $ref: `#/components/schemas/${(value as Schema)[DOCUMENTED_AS]}`, ...(description ? { description } : {}), [VALIDATED_PER_ITEM]: true };
    } else {
      showDocumentedSchemas(value);
    }
  }
}

/**
 * Shows the schemas loosely validated ones stand for (DOCUMENTED_AS), adds an
 * example to every JSON request body and answer that has none, and an
 * error body with its codes to every error answer. Mutates and returns the
 * document (`@fastify/swagger`'s `transformObject`).
 */
export function addExamples<T extends Document>(document: T): T {
  showDocumentedSchemas(document.paths);
  const composer = new ExampleComposer(document);
  for (const item of Object.values(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const body = operation.requestBody?.content?.['application/json'];
      if (body?.schema && body.example === undefined) body.example = composer.example(body.schema);
      for (const [status, answer] of Object.entries<any>(operation.responses ?? {})) {
        const json = answer?.content?.['application/json'];
        if (!json?.schema || json.example !== undefined) continue;
        const error = ERROR_EXAMPLES[status];
        if (error && status !== '200' && composer.resolve(json.schema) === document.components?.schemas?.ErrorResponse) {
          json.example = {
            detail: error.detail,
            code: error.code,
            error_version: 1,
            ...(error.errors && { errors: error.errors }),
            request_id: '9b2f4c1e-3a57-4d0b-8e61-5f0a2c7d9e14',
            doc_url: `https://loyalty.example.com/docs#/${(operation.tags?.[0] ?? 'default').replace(/\s/g, '_')}/${operation.operationId}`,
          };
          const codes = ERROR_CODES_BY_STATUS[status];
          if (codes && !String(answer.description ?? '').includes('Codes:')) answer.description = `${answer.description ?? ''} Codes: ${codes.map((c) => (c.startsWith('and ') ? c : `\`${c}\``)).join(', ')}.`.trim();
        } else {
          json.example = composer.example(json.schema);
        }
      }
    }
  }
  return document;
}
