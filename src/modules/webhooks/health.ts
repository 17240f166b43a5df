import type { Tx } from '../../platform/db.js';
import type { DestinationHealthView } from './schemas.js';

/**
 * A destination's health, computed when it is read from its recent delivery
 * attempts (docs/decisions.md, "Webhook health"): a destination whose every
 * delivery fails is `failing`, whatever its `active` flag says.
 *
 * The look-back is bounded so that a read costs the same for a quiet and a busy
 * destination: the attempts of its latest HEALTH_SAMPLE_DELIVERIES deliveries
 * (the log index, newest first). A run of failures longer than the sample is
 * reported as the sample's length, which is far past the failing threshold.
 * Interrupted attempts (a worker stopped) say nothing about the receiver and
 * are left out.
 */
export const HEALTH_SAMPLE_DELIVERIES = 200;
/** Consecutive failed attempts, across deliveries, from which a destination is `failing`. */
export const FAILING_CONSECUTIVE_FAILURES = 3;
/** Share of failed attempts over the last hour from which a destination that still succeeds is `degraded`. */
export const DEGRADED_FAILURE_SHARE_HOUR = 0.1;

interface HealthRow {
  destination_id: string;
  last_attempt_at: Date | null;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  last_error: string | null;
  last_response_status: number | null;
  consecutive_failures: number;
  attempts_hour: number;
  failed_hour: number;
  attempts_day: number;
  failed_day: number;
}

/** The attempt figures of each destination named, from its latest deliveries; a destination without attempts has no row. */
async function healthRows(tx: Tx, tenantId: string, destinationIds: string[], now: Date): Promise<Map<string, HealthRow>> {
  if (destinationIds.length === 0) return new Map();
  const { rows } = await tx.query<HealthRow>(
    `WITH recent AS (
       SELECT d.id AS destination_id, a.outcome, a.started_at, a.error, a.response_status
       FROM unnest($2::text[]) AS d (id)
       CROSS JOIN LATERAL (
         SELECT w.id FROM webhook_deliveries w
         WHERE w.tenant_id = $1 AND w.destination_id = d.id
         ORDER BY w.created_at DESC, w.id DESC
         LIMIT $3
       ) w
       JOIN webhook_delivery_attempts a ON a.tenant_id = $1 AND a.delivery_id = w.id AND a.outcome <> 'interrupted'
     ), last_success AS (
       SELECT destination_id, max(started_at) AS at FROM recent WHERE outcome = 'succeeded' GROUP BY destination_id
     )
     SELECT r.destination_id,
            max(r.started_at) AS last_attempt_at,
            s.at AS last_success_at,
            max(r.started_at) FILTER (WHERE r.outcome = 'failed') AS last_failure_at,
            (array_agg(r.error ORDER BY r.started_at DESC) FILTER (WHERE r.outcome = 'failed'))[1] AS last_error,
            (array_agg(r.response_status ORDER BY r.started_at DESC) FILTER (WHERE r.outcome = 'failed'))[1] AS last_response_status,
            count(*) FILTER (WHERE r.outcome = 'failed' AND (s.at IS NULL OR r.started_at > s.at))::int AS consecutive_failures,
            count(*) FILTER (WHERE r.started_at > $4::timestamptz - interval '1 hour')::int AS attempts_hour,
            count(*) FILTER (WHERE r.outcome = 'failed' AND r.started_at > $4::timestamptz - interval '1 hour')::int AS failed_hour,
            count(*) FILTER (WHERE r.started_at > $4::timestamptz - interval '1 day')::int AS attempts_day,
            count(*) FILTER (WHERE r.outcome = 'failed' AND r.started_at > $4::timestamptz - interval '1 day')::int AS failed_day
     FROM recent r LEFT JOIN last_success s USING (destination_id)
     GROUP BY r.destination_id, s.at`,
    [tenantId, destinationIds, HEALTH_SAMPLE_DELIVERIES, now],
  );
  return new Map(rows.map((row) => [row.destination_id, row]));
}

const iso = (value: Date | string | null): string | null => (value === null ? null : new Date(value).toISOString());

/** The thresholds of docs/decisions.md applied to one destination's figures. */
export function healthStatus(active: boolean, row: Pick<HealthRow, 'consecutive_failures' | 'attempts_hour' | 'failed_hour'> | undefined): DestinationHealthView['status'] {
  if (!active) return 'disabled';
  if (!row) return 'idle';
  if (row.consecutive_failures >= FAILING_CONSECUTIVE_FAILURES) return 'failing';
  if (row.consecutive_failures > 0) return 'degraded';
  if (row.attempts_hour > 0 && row.failed_hour / row.attempts_hour >= DEGRADED_FAILURE_SHARE_HOUR) return 'degraded';
  return 'healthy';
}

function toHealthView(active: boolean, row: HealthRow | undefined): DestinationHealthView {
  return {
    status: healthStatus(active, row),
    last_attempt_at: iso(row?.last_attempt_at ?? null),
    last_success_at: iso(row?.last_success_at ?? null),
    last_failure_at: iso(row?.last_failure_at ?? null),
    last_error: row?.last_error ?? null,
    last_response_status: row?.last_response_status ?? null,
    consecutive_failures: row?.consecutive_failures ?? 0,
    last_hour: { attempts: row?.attempts_hour ?? 0, failed: row?.failed_hour ?? 0 },
    last_day: { attempts: row?.attempts_day ?? 0, failed: row?.failed_day ?? 0 },
  };
}

/** The health of each destination given, keyed by id. */
export async function destinationHealth(tx: Tx, tenantId: string, destinations: ReadonlyArray<{ id: string; active: boolean }>, now: Date): Promise<Map<string, DestinationHealthView>> {
  const rows = await healthRows(tx, tenantId, destinations.map((d) => d.id), now);
  return new Map(destinations.map((d) => [d.id, toHealthView(d.active, rows.get(d.id))]));
}
