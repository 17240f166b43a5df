import fs from 'node:fs';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

/**
 * The served reference checked against the suite's own traffic (issue 34 item
 * 11): every exchange a test makes through `svc.request` is validated
 * in-process against the service's `/openapi.json`. When the service accepted
 * a request (2xx), the request must be one the document describes: its
 * required path and query parameters present, their values (text, coerced to
 * the declared type as the service does) and its JSON body valid against their
 * schemas. Every JSON answer must be documented for its status and validate
 * against that status's schema. Requests the service refused (4xx, 5xx) are
 * not checked (tests send malformed ones on purpose); their answers are.
 * Paths the document does not name (hidden routes such as /openapi.json, the
 * console, routes a test adds) are not checked.
 *
 * A mismatch fails the request that made it (svc.request throws). Compiled
 * lazily per operation and status, in a `ContractDocument` that the services
 * of a test file built with the same options share (test/helper.ts); each
 * service counts its own exchanges in its `ContractChecker`. With
 * CONTRACT_LOG=<file>, each service appends a line with its exchange count and
 * mismatches (for surveys).
 */

/**
 * Operations the document still misdescribes, by operationId, with the
 * mismatch each has: their mismatches are counted but do not fail the test.
 * Keep it short and honest; remove an entry when its operation is fixed.
 */
const CONTRACT_ALLOW_LIST: Readonly<Record<string, string>> = {};

/** A path segment decoded, or as sent when it is not valid percent-encoding (the service answers that itself). */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** A JSON media type (application/json, application/problem+json), not JSON lines. */
const JSON_TYPE = /^application\/([\w.-]+\+)?json\s*(;|$)/i;

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

interface Operation {
  id: string;
  method: string;
  template: string;
  pattern: RegExp;
  names: string[];
  /** Literal characters in the template: the most literal match wins. */
  literal: number;
  spec: any;
  requestCheck?: ValidateFunction | null;
  answerChecks: Map<string, ValidateFunction | null>;
}

/**
 * The request schema with each `x-validated-per-item` schema (an item the
 * service checks on its own, rejecting it inside a 2xx, such as a batch's
 * events) accepting anything: a batch accepted with a bad event is not a
 * misdescribed request. Answers are checked in full.
 */
function isPlainEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}

function perItemLoosened(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(perItemLoosened);
  if (typeof schema !== 'object' || schema === null) return schema;
  if ((schema as Record<string, unknown>)['x-validated-per-item'] === true) return {};
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, perItemLoosened(value)]));
}

export interface Exchange {
  method: string;
  path: string;
  requestBody: unknown;
  requestContentType: string | undefined;
  status: number;
  contentType: string | null;
  body: unknown;
  text: string;
}

/** An Ajv that knows the document's components (`#/components/…` references, rooted by `rooted`) and formats. */
function documentAjv(document: any, options: Record<string, unknown> = {}): Ajv.default {
  const ajv = new Ajv.default({ strict: false, allErrors: false, validateFormats: true, allowUnionTypes: true, ...options });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'reference', components: document.components ?? {} }, 'reference');
  return ajv;
}

/** A schema of the document as Ajv compiles it beside `documentAjv`'s components. */
function rooted(schema: unknown): string {
  return JSON.stringify(schema ?? {}).replaceAll('"#/components/', '"reference#/components/');
}

/** Checks a value against a schema of the document: null when it fits, else Ajv's words for what does not. */
export function schemaChecker(document: any): (schema: unknown, value: unknown) => string | null {
  const ajv = documentAjv(document);
  return (schema, value) => {
    const validate = ajv.compile(JSON.parse(rooted(schema)));
    return validate(value) ? null : ajv.errorsText(validate.errors);
  };
}

/** A served document's operations, with the checks compiled from it as they are first needed. */
export class ContractDocument {
  private operations: Operation[] = [];
  private readonly strict: Ajv.default;
  private readonly coercing: Ajv.default;

  constructor(document: any) {
    this.strict = documentAjv(document, { coerceTypes: false, useDefaults: true });
    this.coercing = documentAjv(document, { coerceTypes: 'array', useDefaults: true });
    for (const [template, item] of Object.entries<any>(document.paths ?? {})) {
      for (const [method, spec] of Object.entries<any>(item)) {
        if (!METHODS.has(method)) continue;
        const names: string[] = [];
        const source = template
          .split(/(\{[^}]+\})/)
          .map((part) => {
            const name = /^\{([^}]+)\}$/.exec(part);
            if (name) {
              names.push(name[1]);
              return '([^/]+)';
            }
            return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          })
          .join('');
        this.operations.push({
          id: spec.operationId ?? `${method} ${template}`,
          method,
          template,
          pattern: new RegExp(`^${source}/?$`),
          names,
          literal: template.replace(/\{[^}]+\}/g, '').length,
          spec: { ...spec, parameters: [...(item.parameters ?? []), ...(spec.parameters ?? [])] },
          answerChecks: new Map(),
        });
      }
    }
    this.operations.sort((a, b) => b.literal - a.literal);
  }

  private readonly compiled = new Map<string, ValidateFunction>();

  private compile(ajv: Ajv.default, schema: unknown): ValidateFunction {
    const text = rooted(schema);
    const key = `${ajv === this.strict ? 's' : 'c'}${text}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = ajv.compile(JSON.parse(text));
      this.compiled.set(key, validate);
    }
    return validate;
  }

  private find(method: string, pathname: string): { operation: Operation; params: Record<string, string> } | null {
    const lower = method.toLowerCase();
    for (const operation of this.operations) {
      if (operation.method !== lower) continue;
      const match = operation.pattern.exec(pathname);
      if (!match) continue;
      const params: Record<string, string> = {};
      operation.names.forEach((name, index) => {
        params[name] = decoded(match[index + 1]);
      });
      return { operation, params };
    }
    return null;
  }

  /** What the document says is wrong with one exchange, each problem named by its operation; null when the document names no operation for it. */
  problems(exchange: Exchange): { operationId: string; problems: string[] } | null {
    const url = new URL(exchange.path, 'http://service');
    const found = this.find(exchange.method, url.pathname);
    if (!found) return null;
    const { operation, params } = found;
    const name = `${operation.id} (${exchange.method} ${operation.template}) ${exchange.status}`;
    const problems: string[] = [];
    if (exchange.status >= 200 && exchange.status < 300) problems.push(...this.checkRequest(operation, params, url, exchange));
    problems.push(...this.checkAnswer(operation, exchange));
    return { operationId: operation.id, problems: problems.map((problem) => `${name}: ${problem}`) };
  }

  private checkRequest(operation: Operation, params: Record<string, string>, url: URL, exchange: Exchange): string[] {
    const problems: string[] = [];
    for (const parameter of operation.spec.parameters as any[]) {
      if (parameter.in !== 'path' && parameter.in !== 'query') continue;
      let value: unknown;
      if (parameter.in === 'path') value = params[parameter.name];
      else {
        const all = url.searchParams.getAll(parameter.name);
        value = all.length === 0 ? undefined : all.length === 1 ? all[0] : all;
      }
      if (value === undefined) {
        if (parameter.required) problems.push(`request: required ${parameter.in} parameter ${parameter.name} left out`);
        continue;
      }
      if (!parameter.schema) continue;
      // Wrapped in an object so that Ajv can coerce the text in place, as the service does.
      const wrapped = this.compile(this.coercing, { type: 'object', properties: { value: parameter.schema } });
      if (!wrapped({ value })) problems.push(`request: ${parameter.in} parameter ${parameter.name}=${JSON.stringify(value)}: ${this.coercing.errorsText(wrapped.errors)}`);
    }
    const json = operation.spec.requestBody?.content?.['application/json'];
    // An empty object sent to an operation without a body is taken as no body (the service reads none).
    const emptyObject = isPlainEmptyObject(exchange.requestBody);
    const sentJson = exchange.requestBody !== undefined && JSON_TYPE.test(exchange.requestContentType ?? '') && !(emptyObject && !json);
    if (sentJson) {
      if (!json) problems.push('request: a JSON body was sent but the operation documents none');
      else {
        if (operation.requestCheck === undefined) operation.requestCheck = json.schema ? this.compile(this.strict, perItemLoosened(json.schema)) : null;
        const body = structuredClone(exchange.requestBody);
        if (operation.requestCheck && !operation.requestCheck(body)) problems.push(`request body: ${this.strict.errorsText(operation.requestCheck.errors)}`);
      }
    } else if (operation.spec.requestBody?.required && json) {
      problems.push('request: the body is documented as required but none was sent');
    }
    return problems;
  }

  private checkAnswer(operation: Operation, exchange: Exchange): string[] {
    if (!JSON_TYPE.test(exchange.contentType ?? '') || !exchange.text) return [];
    const responses = operation.spec.responses ?? {};
    const status = String(exchange.status);
    const key = [status, `${status[0]}XX`, 'default'].find((candidate) => responses[candidate]);
    if (!key) return [`status ${status} is not documented (answer ${exchange.text.slice(0, 160)})`];
    const json = responses[key].content?.['application/json'] ?? Object.entries<any>(responses[key].content ?? {}).find(([type]) => JSON_TYPE.test(type))?.[1];
    if (!json) return [`status ${status} is documented without a JSON body (answer ${exchange.text.slice(0, 160)})`];
    let validate = operation.answerChecks.get(key);
    if (validate === undefined) {
      validate = json.schema ? this.compile(this.strict, json.schema) : null;
      operation.answerChecks.set(key, validate);
    }
    if (!validate) return [];
    const body = structuredClone(exchange.body);
    return validate(body) ? [] : [`answer: ${this.strict.errorsText(validate.errors)} in ${exchange.text.slice(0, 200)}`];
  }
}

/** One service's exchanges checked against a `ContractDocument`, counted. */
export class ContractChecker {
  exchanges = 0;
  readonly mismatches: string[] = [];
  readonly allowed: string[] = [];
  constructor(private readonly document: ContractDocument) {}

  /** The mismatches of one exchange that fail it (empty when the document describes it, or its operation is allow-listed), recorded. */
  check(exchange: Exchange): string[] {
    const found = this.document.problems(exchange);
    if (!found) return [];
    this.exchanges++;
    if (found.problems.length === 0) return [];
    if (Object.hasOwn(CONTRACT_ALLOW_LIST, found.operationId)) {
      this.allowed.push(...found.problems);
      return [];
    }
    this.mismatches.push(...found.problems);
    return found.problems;
  }

  /** Appends this service's counts to CONTRACT_LOG, when set. */
  log(file: string): void {
    const target = process.env.CONTRACT_LOG;
    if (!target) return;
    fs.appendFileSync(target, `${JSON.stringify({ file, exchanges: this.exchanges, mismatches: this.mismatches, allowed: this.allowed })}\n`);
  }
}
