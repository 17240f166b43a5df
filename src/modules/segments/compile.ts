import type { FactContext, FactDefinition, FactType } from './facts.js';
import { factCatalogue, findFact } from './facts.js';
import type { Operator, SegmentCondition, SegmentFilter } from './schemas.js';

/**
 * The one compiler of segment filters to SQL. A filter becomes a FROM list
 * (participants `p` and what its facts need, each joined once) and a WHERE
 * clause; size, sample, members, one participant's membership and the
 * materialized refresh all select from the same text.
 *
 * Set-based: a count fact (event_count, referrals, contests) is a subquery
 * grouped by participant and joined once, never a count per participant; a
 * badge is a semi-join (EXISTS, which PostgreSQL runs as a hash semi-join).
 * When a count condition cannot hold at zero (`gte 3`), it compares the
 * joined column itself, which lets the planner turn the outer join into an
 * inner one. Every value travels as a parameter; the only names written into
 * the text are standard profile columns, checked against the catalogue.
 *
 * Absent values: `not_equals`, `not_in` and `not_contains` hold for a
 * participant without the value; every other comparison does not.
 */
export interface CompiledFilter {
  /** `participants p LEFT JOIN …`. */
  from: string;
  /** Includes the tenant, no test participants, and the filter. */
  where: string;
  /** The values of `$firstParam…`. */
  params: unknown[];
}

export interface CompileOptions {
  tenantId: string;
  /** The evaluation time (the tenant's clock): windows and day counts are measured from it. */
  now: Date;
  /** The number of the first placeholder (default 1), for embedding in a larger statement. */
  firstParam?: number;
  /** Restricts the evaluation to one participant (membership checks): pushed into every grouped subquery. */
  participantId?: string;
}

const DAY_MS = 86_400_000;

class Params {
  readonly values: unknown[] = [];
  constructor(private readonly first: number) {}
  /** The number the next placeholder takes. */
  get next(): number {
    return this.first + this.values.length;
  }
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.first + this.values.length - 1}`;
  }
}

const SQL_TYPE: Record<FactType, string> = { string: 'text', code: 'text', number: 'numeric', boolean: 'boolean', date: 'date' };

/** A compiled fact: the expression that reads it, and whether it is null when absent (counts read 0). */
interface Expression {
  sql: string;
  /** For count facts: the raw joined column (null when no rows), used when the condition cannot hold at 0. */
  raw?: string;
}

/** Compiles a filter already checked against the tenant's catalogue (facts.ts `assertFilter`). */
export function compileSegmentFilter(filter: SegmentFilter, context: FactContext, options: CompileOptions): CompiledFilter {
  const params = new Params(options.firstParam ?? 1);
  const tenant = params.add(options.tenantId);
  const one = options.participantId === undefined ? null : params.add(options.participantId);
  const catalogue = factCatalogue(context);
  const joins = new Map<string, string>();
  let now: string | null = null;
  const nowParam = () => (now ??= params.add(options.now.toISOString()));
  const onParticipant = (alias: string) => `${alias}.tenant_id = p.tenant_id AND ${alias}.participant_id = p.participant_id`;
  const onlyOne = (column: string) => (one ? ` AND ${column} = ${one}` : '');

  const join = (key: string, build: (alias: string) => string): string => {
    const existing = joins.get(key);
    if (existing) return existing.split(' ', 1)[0];
    const alias = `j${joins.size}`;
    joins.set(key, `${alias} ${build(alias)}`);
    return alias;
  };

  const grouped = (key: string, select: string): Expression => {
    const alias = join(key, (a) => `LEFT JOIN (${select}) ${a} ON ${a}.participant_id = p.participant_id`);
    return { sql: `coalesce(${alias}.n, 0)`, raw: `${alias}.n` };
  };

  const balances = () => join('balances', (a) => `LEFT JOIN points_balances ${a} ON ${onParticipant(a)}`);

  function expression(definition: FactDefinition, condition: SegmentCondition): Expression {
    switch (definition.kind) {
      case 'profile':
        return { sql: `p.${definition.key}` };
      case 'custom': {
        const key = definition.key!;
        const alias = join(`custom:${key}`, (a) => `LEFT JOIN participant_custom_values ${a} ON ${onParticipant(a)} AND ${a}.key = ${params.add(key)}`);
        const text = `(${alias}.value #>> '{}')`;
        switch (definition.type) {
          case 'number':
            return { sql: `(CASE WHEN jsonb_typeof(${alias}.value) = 'number' THEN ${text}::numeric END)` };
          case 'boolean':
            return { sql: `(CASE WHEN jsonb_typeof(${alias}.value) = 'boolean' THEN ${text}::boolean END)` };
          case 'date':
            return { sql: `(CASE WHEN ${text} ~ '^\\d{4}-\\d{2}-\\d{2}$' THEN ${text}::date END)` };
          default:
            return { sql: text };
        }
      }
      case 'tier':
        return { sql: `${balances()}.tier_code` };
      // Like counts: a comparison that cannot hold at 0 reads the column itself, which lets the planner join only the matching balances.
      case 'available_points': {
        const alias = balances();
        return { sql: `coalesce(${alias}.available, 0)`, raw: `${alias}.available` };
      }
      case 'lifetime_points': {
        const alias = balances();
        return { sql: `coalesce(${alias}.lifetime, 0)`, raw: `${alias}.lifetime` };
      }
      case 'streak': {
        const alias = join(`streak:${definition.key}`, (a) => `LEFT JOIN participant_streaks ${a} ON ${onParticipant(a)} AND ${a}.streak_code = ${params.add(definition.key)}`);
        return { sql: `coalesce(${alias}.current_length, 0)`, raw: `${alias}.current_length` };
      }
      case 'days_since_last_activity': {
        const alias = join(
          'last_activity',
          (a) =>
            `LEFT JOIN (SELECT e.participant_id, max(e.occurred_at) AS at FROM ingested_events e WHERE e.tenant_id = ${tenant}${onlyOne('e.participant_id')} GROUP BY e.participant_id) ${a} ON ${a}.participant_id = p.participant_id`,
        );
        return { sql: `floor(extract(epoch FROM (${nowParam()}::timestamptz - ${alias}.at)) / 86400)` };
      }
      case 'days_since_joined':
        return { sql: `floor(extract(epoch FROM (${nowParam()}::timestamptz - p.created_at)) / 86400)` };
      case 'event_count': {
        const days = condition.within_days!;
        const name = condition.event_name!;
        const since = new Date(options.now.getTime() - days * DAY_MS).toISOString();
        return grouped(
          `events:${name}:${days}`,
          `SELECT e.participant_id, count(*) AS n FROM ingested_events e WHERE e.tenant_id = ${tenant} AND e.event_name = ${params.add(name)} AND e.occurred_at > ${params.add(since)}::timestamptz AND e.occurred_at <= ${nowParam()}::timestamptz${onlyOne('e.participant_id')} GROUP BY e.participant_id`,
        );
      }
      case 'referrals_converted':
        return grouped(
          'referrals',
          `SELECT r.referrer_id AS participant_id, count(*) AS n FROM referral_conversions r WHERE r.tenant_id = ${tenant} AND r.status = 'converted'${onlyOne('r.referrer_id')} GROUP BY r.referrer_id`,
        );
      case 'contests_entered':
        return grouped('contests', `SELECT c.participant_id, count(*) AS n FROM contest_entries c WHERE c.tenant_id = ${tenant}${onlyOne('c.participant_id')} GROUP BY c.participant_id`);
      case 'badges':
        // Compiled as a semi-join in `predicate`.
        return { sql: '' };
    }
  }

  function predicate(condition: SegmentCondition): string {
    const definition = findFact(catalogue, condition.fact) ?? fallbackFact(condition.fact);
    if (!definition) return 'false';
    const { operator, value } = condition;
    if (definition.kind === 'badges') {
      const exists = `EXISTS (SELECT 1 FROM participant_badges b WHERE b.tenant_id = p.tenant_id AND b.participant_id = p.participant_id AND b.badge_code = ${params.add(value)})`;
      return operator === 'not_contains' ? `NOT ${exists}` : exists;
    }
    if (definition.kind === 'days_since_last_activity') {
      const windowed = lastActivityByWindows(operator, value);
      if (windowed) return windowed;
    }
    const expr = expression(definition, condition);
    const type = SQL_TYPE[definition.type];
    // A count condition that cannot hold at zero compares the joined column itself (null when no rows: false either way).
    const e = expr.raw && !holdsAtZero(operator, value) ? expr.raw : expr.sql;
    const v = () => `${params.add(value)}::${type}`;
    switch (operator) {
      case 'equals':
        return `${e} = ${v()}`;
      case 'not_equals':
        return `${e} IS DISTINCT FROM ${v()}`;
      case 'in':
        return `${e} = ANY(${params.add(value)}::${type}[])`;
      case 'not_in':
        return `(${e} IS NULL OR NOT (${e} = ANY(${params.add(value)}::${type}[])))`;
      case 'gt':
        return `${e} > ${v()}`;
      case 'gte':
        return `${e} >= ${v()}`;
      case 'lt':
        return `${e} < ${v()}`;
      case 'lte':
        return `${e} <= ${v()}`;
      case 'exists':
        return `${e} IS NOT NULL`;
      case 'not_exists':
        return `${e} IS NULL`;
      case 'contains':
        return `strpos(lower(${e}::text), lower(${params.add(value)}::text)) > 0`;
      case 'not_contains':
        return `(${e} IS NULL OR strpos(lower(${e}::text), lower(${params.add(value)}::text)) = 0)`;
    }
  }

  /**
   * `days_since_last_activity` compared with a bound is a question about a
   * window: "at most 10 days" is "an event in the last 11 days". Written as
   * semi-joins on the events of a window, it reads the events of that window
   * only (or probes each participant's newest event), never the maximum over
   * every event of the tenant; the other operators read that maximum.
   */
  function lastActivityByWindows(operator: Operator, value: unknown): string | null {
    if (typeof value !== 'number') return null;
    const activeSince = (days: number) => {
      const since = new Date(options.now.getTime() - days * DAY_MS).toISOString();
      return `EXISTS (SELECT 1 FROM ingested_events e WHERE e.tenant_id = p.tenant_id AND e.participant_id = p.participant_id AND e.occurred_at > ${params.add(since)}::timestamptz)`;
    };
    const anyActivity = 'EXISTS (SELECT 1 FROM ingested_events e WHERE e.tenant_id = p.tenant_id AND e.participant_id = p.participant_id)';
    // Whole days: days <= n holds exactly when the last event is after now - (n + 1) days.
    const atMost = (n: number) => (n < 0 ? 'false' : activeSince(n + 1));
    const atLeast = (n: number) => (n <= 0 ? anyActivity : `(${anyActivity} AND NOT ${activeSince(n)})`);
    switch (operator) {
      case 'lte':
        return atMost(Math.floor(value));
      case 'lt':
        return atMost(Math.ceil(value) - 1);
      case 'gte':
        return atLeast(Math.ceil(value));
      case 'gt':
        return atLeast(Math.floor(value) + 1);
      case 'equals':
        return Number.isInteger(value) ? (value < 0 ? 'false' : `(${atMost(value)} AND NOT ${activeSince(value)})`) : 'false';
      default:
        return null;
    }
  }

  /**
   * An `any` group of several conditions is the union of each condition's
   * members, each compiled as a filter of its own: every branch joins only
   * what its condition reads and, where the condition cannot hold without a
   * row, only the matching rows; an OR across joined tables would outer-join
   * every table of the group to every participant before testing
   * (bench/segments.bench.ts: 2.0 s against 0.6 s for a hand-written union
   * over 1,000,000 participants).
   */
  const anyMembers = (conditions: SegmentCondition[]): string => {
    const branches = conditions.map((condition) => {
      const branch = compileSegmentFilter({ all: [condition] }, context, { ...options, firstParam: params.next });
      params.values.push(...branch.params);
      return membersSql(branch);
    });
    return `p.participant_id IN (\n    ${branches.join('\n    UNION ALL\n    ')})`;
  };

  const parts = [`p.tenant_id = ${tenant}`, 'NOT p.test'];
  if (one) parts.push(`p.participant_id = ${one}`);
  for (const condition of filter.all ?? []) parts.push(predicate(condition));
  const any = filter.any ?? [];
  if (any.length === 1) parts.push(predicate(any[0]));
  else if (any.length > 1) parts.push(anyMembers(any));
  const from = ['participants p', ...[...joins.values()].map((entry) => entry.slice(entry.indexOf(' ') + 1))].join('\n  ');
  return { from, where: parts.join('\n  AND '), params: params.values };
}

/** Whether a count comparison holds for a participant whose count is 0. */
function holdsAtZero(operator: Operator, value: unknown): boolean {
  const n = typeof value === 'number' ? value : Number.NaN;
  switch (operator) {
    case 'equals':
      return n === 0;
    case 'not_equals':
      return n !== 0;
    case 'gt':
      return 0 > n;
    case 'gte':
      return 0 >= n;
    case 'lt':
      return 0 < n;
    case 'lte':
      return 0 <= n;
    default:
      return true;
  }
}

/**
 * A saved filter may name a fact the tenant has since removed (a custom field,
 * a streak): it reads as absent (a removed streak as 0), never as an error.
 */
function fallbackFact(fact: string): FactDefinition | null {
  const [head, ...rest] = fact.split('.');
  const key = rest.join('.');
  if (head === 'custom' && /^[a-z][a-z0-9_]{0,62}$/.test(key)) {
    return { fact, kind: 'custom', key, type: 'string', operators: [], personal: true, needsEvent: false, description: '' };
  }
  if (head === 'streak' && key !== '') return { fact, kind: 'streak', key, type: 'number', operators: [], personal: false, needsEvent: false, description: '' };
  return null;
}

/** `SELECT count(*)` of a compiled filter. */
export const countSql = (compiled: CompiledFilter): string => `SELECT count(*)::bigint AS n FROM ${compiled.from}\nWHERE ${compiled.where}`;

/** The members' ids of a compiled filter, as one column `participant_id`. */
export const membersSql = (compiled: CompiledFilter): string => `SELECT p.participant_id FROM ${compiled.from}\nWHERE ${compiled.where}`;

/**
 * The size of a compiled filter and its first `sample` members by id, from one
 * pass over the filter (the preview): the members are gathered once, then
 * counted and the first ones taken, instead of running the filter twice.
 */
export const sizeAndSampleSql = (compiled: CompiledFilter, sample: number): string =>
  `WITH members AS MATERIALIZED (${membersSql(compiled)})
SELECT (SELECT count(*) FROM members)::bigint AS n, ARRAY(SELECT participant_id FROM members ORDER BY participant_id LIMIT ${Math.trunc(sample)}) AS sample`;
