import { daysBefore, deleteBatch, type RetentionRule } from '../../platform/retention.js';

/** Retention of the webhook logs. */

/** Finished deliveries (their attempts go by cascade) and finished replay jobs, WEBHOOK_LOG_RETENTION_DAYS after they finished. */
export const retention: RetentionRule[] = [
  {
    name: 'webhook deliveries',
    purge: (client, limit, now, config) =>
      deleteBatch(client, 'webhook_deliveries', `completed_at < $2 AND status IN ('SUCCEEDED', 'EXHAUSTED', 'CANCELLED')`, [daysBefore(now, config.webhookLogRetentionDays)], limit),
  },
  {
    name: 'webhook replay jobs',
    purge: (client, limit, now, config) =>
      deleteBatch(client, 'webhook_replay_jobs', `completed_at < $2 AND status IN ('completed', 'failed')`, [daysBefore(now, config.webhookLogRetentionDays)], limit),
  },
];
