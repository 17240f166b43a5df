import assert from 'node:assert/strict';
import type { TestService, TestTenant } from '../../../test/helper.ts';
import { QUIZ, createEngagement, createReward } from '../../../src/modules/engagements/testing.ts';

/**
 * A published engagement built through the admin API, as a tenant would: a
 * spin wheel whose every segment claims a coupon (so the outcome is known), a
 * quiz that awards 50 points and a badge when passed, and gated screens.
 */
export const SITE_SLUG = 'summer-sdk';
export const CORRECT_ANSWERS = [
  { question_id: 'q1', selected_option: 1 },
  { question_id: 'q2', selected_option: 1 },
];

export async function publishDemoEngagement(svc: TestService, tenant: TestTenant, overrides: Record<string, unknown> = {}) {
  const badge = await svc.request('POST', '/api/v1/admin/badges', { key: tenant.apiKey, body: { code: 'quizzer', name: 'Quizzer' } });
  assert.equal(badge.status, 201, badge.text);
  const coupon = await createReward(svc, tenant, { id: 'coupon10', name: '10% off', type: 'coupon', metadata: { discount_percent: 10 } });
  return createEngagement(svc, tenant, {
    site_slug: SITE_SLUG,
    allow_anonymous_sessions: true,
    screens: [
      { id: 'intro', name: 'Intro' },
      { id: 'vip', name: 'VIP', gate: { conditions: ['quiz_completed', 'screen_visited:intro'] } },
      { id: 'rich', name: 'Rich', gate: { conditions: ['min_points_50'], unlock_hint: 'Collect 50 points.' } },
    ],
    activities: [
      {
        id: 'wheel1',
        type: 'spin_wheel',
        name: 'Lucky wheel',
        max_attempts: 2,
        segments: [
          { label: 'Coupon A', prize_type: 'reward', reward_id: coupon.id, weight: 1 },
          { label: 'Coupon B', prize_type: 'reward', reward_id: coupon.id, weight: 1 },
        ],
        on_completion: [{ type: 'award_points', amount: 5 }],
      },
      { ...QUIZ, on_completion: [...QUIZ.on_completion, { type: 'grant_badge', badge_code: 'quizzer', when: 'passed' }] },
    ],
    ...overrides,
  });
}
