import { deleteBatch, type RetentionRule } from '../../platform/retention.js';

/** The oldest moment still kept: `months` calendar months before `now`. */
export function retentionCutoff(now: Date, months: number): Date {
  const cutoff = new Date(now.getTime());
  cutoff.setUTCMonth(cutoff.getUTCMonth() - months);
  return cutoff;
}

/**
 * Retention of the personal-data access log: rows older than
 * PII_ACCESS_LOG_RETENTION_MONTHS (at least 12) calendar months are deleted by
 * the platform's retention job (owner connection: the application role may not
 * delete from the log).
 */
export const retention: RetentionRule[] = [
  {
    name: 'personal-data access log',
    purge: (client, limit, now, config) =>
      deleteBatch(client, 'pii_access_log', 'occurred_at < $2', [retentionCutoff(now, config.piiAccessLogRetentionMonths)], limit),
  },
];
