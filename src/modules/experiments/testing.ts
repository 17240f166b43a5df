import assert from 'node:assert/strict';
import type { TestService, TestTenant } from '../../../test/helper.js';

/** Helpers shared by the experiments tests. */
export async function createRule(svc: TestService, tenant: TestTenant, name: string, eventName: string, points: number, status: 'draft' | 'active' = 'active'): Promise<string> {
  const response = await svc.request('POST', '/api/v1/admin/rules', { key: tenant.apiKey, body: { name, event_name: eventName, status, effects: [{ type: 'award_points', points }] } });
  assert.equal(response.status, 201, response.text);
  return response.body.id;
}

/** A rule experiment: control A (active, `pointsA`) against B (draft, `pointsB`), with the holdout given. */
export async function ruleExperiment(
  svc: TestService,
  tenant: TestTenant,
  eventName: string,
  options: { pointsA?: number; pointsB?: number; holdout?: number; allocation?: [number, number]; segmentId?: string } = {},
) {
  const ruleA = await createRule(svc, tenant, `${eventName} A`, eventName, options.pointsA ?? 10, 'active');
  const ruleB = await createRule(svc, tenant, `${eventName} B`, eventName, options.pointsB ?? 20, 'draft');
  const holdout = options.holdout ?? 0;
  const [a, b] = options.allocation ?? [(100 - holdout) / 2, (100 - holdout) / 2];
  const created = await svc.request('POST', '/api/v1/admin/experiments', {
    key: tenant.apiKey,
    body: {
      name: `${eventName} points`,
      subject_type: 'rule',
      holdout_percent: holdout,
      variants: [
        { key: 'a', name: 'Ten', subject_id: ruleA, allocation_percent: a },
        { key: 'b', name: 'Twenty', subject_id: ruleB, allocation_percent: b },
      ],
      goal: { type: 'event_count', event_name: eventName },
      ...(options.segmentId && { segment_id: options.segmentId }),
    },
  });
  assert.equal(created.status, 201, created.text);
  return { id: created.body.id as string, ruleA, ruleB, body: created.body };
}

export async function start(svc: TestService, tenant: TestTenant, id: string) {
  const started = await svc.request('POST', `/api/v1/admin/experiments/${id}/start`, { key: tenant.apiKey });
  assert.equal(started.status, 200, started.text);
  return started.body;
}

export async function assignments(svc: TestService, tenant: TestTenant, experimentId: string): Promise<Map<string, string>> {
  const rows = await svc.sql<{ participant_id: string; variant_key: string }>(
    'SELECT participant_id, variant_key FROM experiment_assignments WHERE tenant_id = $1 AND experiment_id = $2',
    [tenant.tenantId, experimentId],
  );
  return new Map(rows.map((r) => [r.participant_id, r.variant_key]));
}

/** Points each participant got from the ledger, by participant. */
export async function pointsByParticipant(svc: TestService, tenant: TestTenant, participantIds: string[]): Promise<Map<string, number>> {
  const rows = await svc.sql<{ participant_id: string; lifetime: number }>(
    'SELECT participant_id, lifetime::int AS lifetime FROM points_balances WHERE tenant_id = $1 AND participant_id = ANY($2::text[])',
    [tenant.tenantId, participantIds],
  );
  return new Map(rows.map((r) => [r.participant_id, r.lifetime]));
}
