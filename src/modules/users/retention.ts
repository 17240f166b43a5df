import { daysBefore, deleteBatch, type RetentionRule } from '../../platform/retention.js';

/** Ended console sign-ins go with the participant sessions' retention; the audit log is kept for good. */
export const retention: RetentionRule[] = [
  {
    name: 'console sign-ins',
    purge: (client, limit, now, config) =>
      deleteBatch(client, 'console_sessions', '(expires_at < $2 OR revoked_at < $2)', [daysBefore(now, config.sessionRetentionDays)], limit),
  },
];
