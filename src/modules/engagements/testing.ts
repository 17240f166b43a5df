import assert from 'node:assert/strict';
import type { TestService, TestTenant, TestSession } from '../../../test/helper.js';

/** Test fixtures shared by the engagements, activities, rewards and gates tests. */

export const QUIZ = {
  id: 'quiz1',
  type: 'quiz',
  name: 'Product quiz',
  max_attempts: 3,
  pass_percent: 50,
  questions: [
    { id: 'q1', text: 'Colour of the sky?', options: ['green', 'blue', 'red'], correct_option: 1 },
    { id: 'q2', text: 'Two plus two?', options: ['3', '4'], correct_option: 1 },
  ],
  on_completion: [{ type: 'award_points', amount: 50, when: 'passed' }],
};

export function wheel(overrides: Record<string, unknown> = {}) {
  return {
    id: 'wheel1',
    type: 'spin_wheel',
    name: 'Lucky wheel',
    max_attempts: 5,
    segments: [
      { label: '100 points', prize_type: 'points', prize_value: 100, weight: 1 },
      { label: 'Nothing', prize_type: 'none', weight: 1 },
    ],
    on_completion: [],
    ...overrides,
  };
}

/** A wheel's segments whose first can never be drawn (inventory 0): every spin lands on segment 1, 10 points. */
export const ALWAYS_TEN_POINTS = [
  { label: 'gone', prize_type: 'points', prize_value: 1, weight: 1, inventory: 0 },
  { label: '10 points', prize_type: 'points', prize_value: 10, weight: 1 },
];

export async function createReward(svc: TestService, tenant: TestTenant, body: Record<string, unknown>) {
  const response = await svc.request('POST', '/api/v1/admin/rewards', { key: tenant.apiKey, body });
  assert.equal(response.status, 201, response.text);
  return response.body;
}

export async function createEngagement(svc: TestService, tenant: TestTenant, body: Record<string, unknown>, publish = true) {
  const created = await svc.request('POST', '/api/v1/admin/engagements', {
    key: tenant.apiKey,
    body: { name: 'Summer campaign', site_slug: `site-${Math.random().toString(36).slice(2, 8)}`, ...body },
  });
  assert.equal(created.status, 201, created.text);
  if (!publish) return created.body;
  const published = await svc.request('POST', `/api/v1/admin/engagements/${created.body.id}/publish`, { key: tenant.apiKey });
  assert.equal(published.status, 200, published.text);
  return published.body;
}

export async function session(svc: TestService, tenant: TestTenant, engagementId: string, participantId?: string, ttlSeconds?: number): Promise<TestSession> {
  return svc.createSession(tenant, { engagementId, ...(participantId ? { participantId } : {}), ...(ttlSeconds ? { ttlSeconds } : {}) });
}

export function complete(svc: TestService, s: TestSession, activityId: string, activityType: string, extra: Record<string, unknown> = {}) {
  return svc.request('POST', `/api/v1/activities/${activityId}/complete-with-actions`, {
    body: { session_id: s.sessionId, engagement_id: s.engagementId, activity_type: activityType, ...extra },
  });
}

export function validate(svc: TestService, s: TestSession, activityId: string, activityType: string, extra: Record<string, unknown> = {}) {
  return svc.request('POST', `/api/v1/activities/${activityId}/validate`, {
    body: { session_id: s.sessionId, engagement_id: s.engagementId, activity_type: activityType, ...extra },
  });
}

export async function outbox(svc: TestService, tenantId: string, event: string) {
  return svc.sql<{ event: string; participant_id: string; data: Record<string, any> }>(
    'SELECT event, participant_id, data FROM outbox_events WHERE tenant_id = $1 AND event = $2 ORDER BY seq',
    [tenantId, event],
  );
}

export async function balance(svc: TestService, tenantId: string, participantId: string): Promise<number> {
  const rows = await svc.sql<{ available: number }>('SELECT available FROM points_balances WHERE tenant_id = $1 AND participant_id = $2', [tenantId, participantId]);
  return rows[0] ? Number(rows[0].available) : 0;
}
