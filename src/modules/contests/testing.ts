import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { TestService, TestTenant } from '../../../test/helper.js';
import { runFactHandlers, type Fact } from '../../platform/facts.js';
import { clock } from '../../platform/clock.js';

/**
 * Test-only helpers for the contest tests. `recordFact` records a fact the way
 * the ingestion and activity paths do (runFactHandlers inside the tenant's
 * transaction), so contest scoring can be driven before and alongside the
 * ingestion routes.
 */
export async function recordFact(
  svc: TestService,
  tenantId: string,
  fact: { id?: string; name: string; participantId: string; properties: Record<string, unknown>; occurredAt?: Date },
): Promise<string> {
  const id = fact.id ?? `fct_${randomUUID().replaceAll('-', '')}`;
  const full: Fact = {
    id,
    name: fact.name,
    participantId: fact.participantId,
    engagementId: null,
    properties: fact.properties,
    occurredAt: fact.occurredAt ?? clock.now(),
    source: 'event',
    evaluateChallenges: true,
  };
  await svc.service.db.tenant(tenantId, (tx) => runFactHandlers(tx, tenantId, full));
  return id;
}

export const ENGAGEMENT_ID = '00000000-0000-4000-8000-0000000000e1';

/**
 * A participant session written straight into the sessions table (as the
 * schema owner), so these tests do not depend on which engagements exist.
 */
export async function sessionFor(svc: TestService, tenant: TestTenant, participantId: string, displayName?: string): Promise<string> {
  const token = `ses_${randomBytes(24).toString('base64url')}`;
  await svc.sql('INSERT INTO participants (tenant_id, participant_id, display_name) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [tenant.tenantId, participantId, displayName ?? null]);
  await svc.sql(
    `INSERT INTO sessions (tenant_id, id, token_hash, participant_id, engagement_id, expires_at)
     VALUES ($1, $2, $3, $4, $5, now() + interval '1 day')`,
    [tenant.tenantId, randomUUID(), createHash('sha256').update(token).digest('hex'), participantId, ENGAGEMENT_ID],
  );
  return token;
}

export function contestDefinition(id: string, overrides: Record<string, unknown> = {}) {
  const now = clock.nowMs();
  return {
    id,
    title: `Contest ${id}`,
    description: 'Spend to climb',
    starts_at: new Date(now + 3_600_000).toISOString(),
    ends_at: new Date(now + 7 * 24 * 3_600_000).toISOString(),
    scoring: { event_type: 'purchase', score_attribute: 'amount', weight: 1 },
    prize_structure: [
      { rank_from: 1, rank_to: 1, label: 'Winner', reward: { type: 'cash', value: 500, name: '500 EUR' } },
      { rank_from: 2, rank_to: 3, reward: { type: 'voucher', value: 100 } },
    ],
    max_reward_liability: 1000,
    fraud_rules: {
      max_score_per_minute: 1000,
      max_score_per_hour: 5000,
      max_rank_jump_per_hour: 10,
      block_disposable_emails: true,
      block_repeat_payment_methods: true,
      block_repeat_devices: true,
      review_threshold_score: 10_000,
      auto_disqualify_on_velocity_breach: false,
    },
    verification_window_hours: 48,
    ...overrides,
  };
}
