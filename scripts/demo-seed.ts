/**
 * The demo tenant's content, created through the admin API (so it passes the
 * same validation as any tenant's): badges, a coupon reward, an engagement
 * with three screens (one gated), a spin wheel with prizes and a quiz that
 * awards points, a challenge, a contest and a progression leaderboard.
 * `npm run demo` and the browser tests both seed through here.
 */
export type ApiCall = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any; text?: string }>;

export const DEMO_SITE_SLUG = 'spring';

/** The quiz's right answers, for the browser test to pass it (the public definition never shows them). */
export const DEMO_QUIZ_ANSWERS: Record<string, number> = { q1: 1, q2: 2, q3: 0 };
export const DEMO_QUIZ_POINTS = 50;
export const DEMO_VIP_MIN_POINTS = 50;

export interface DemoSeedOptions {
  siteSlug?: string;
  allowAnonymousSessions?: boolean;
  wheelMaxAttempts?: number;
  embedOrigins?: string[];
}

export interface DemoSeed {
  engagementId: string;
  siteSlug: string;
  challengeId: string;
  contestId: string;
  leaderboardCode: string;
}

async function expect(call: ApiCall, method: string, path: string, body: unknown, status: number) {
  const response = await call(method, path, body);
  if (response.status !== status) {
    throw new Error(`${method} ${path} answered ${response.status}, expected ${status}: ${response.text ?? JSON.stringify(response.body)}`);
  }
  return response.body;
}

export function demoEngagement(options: DemoSeedOptions = {}) {
  return {
    name: 'Spring Rewards',
    site_slug: options.siteSlug ?? DEMO_SITE_SLUG,
    description: 'Spin the wheel, take the quiz and unlock the VIP lounge.',
    allow_anonymous_sessions: options.allowAnonymousSessions ?? true,
    ...(options.embedOrigins ? { embed_origins: options.embedOrigins } : {}),
    screens: [
      {
        id: 'welcome',
        name: 'Spin',
        components: [
          { type: 'text', text: 'Spin the wheel for a prize: points, a coupon or a badge.' },
          { type: 'activity', activity_id: 'wheel' },
          { type: 'button', label: 'Next: the quiz', screen_id: 'quiz' },
        ],
      },
      {
        id: 'quiz',
        name: 'Quiz',
        components: [
          { type: 'text', text: `Pass the quiz to earn ${DEMO_QUIZ_POINTS} points and the Quiz Master badge.` },
          { type: 'activity', activity_id: 'quiz' },
        ],
      },
      {
        id: 'vip',
        name: 'VIP lounge',
        components: [
          { type: 'heading', text: 'Welcome to the VIP lounge' },
          { type: 'text', text: 'You passed the quiz and hold enough points. Thank you for playing!' },
          { type: 'balance' },
          { type: 'badges' },
          { type: 'rewards' },
        ],
        gate: {
          conditions: ['quiz_completed', `min_points_${DEMO_VIP_MIN_POINTS}`],
          unlock_hint: `Complete the quiz and hold ${DEMO_VIP_MIN_POINTS} points to enter.`,
        },
      },
    ],
    activities: [
      {
        id: 'wheel',
        type: 'spin_wheel',
        name: 'Lucky wheel',
        max_attempts: options.wheelMaxAttempts ?? 3,
        segments: [
          { label: '100 points', prize_type: 'points', prize_value: 100, weight: 3, color: '#1d4ed8' },
          { label: '10% coupon', prize_type: 'reward', reward_id: 'spring-coupon', weight: 2, color: '#b45309' },
          { label: '25 points', prize_type: 'points', prize_value: 25, weight: 3, color: '#047857' },
          { label: 'Lucky badge', prize_type: 'badge', badge_code: 'lucky-spinner', weight: 1, color: '#7c3aed' },
          { label: 'Try again', prize_type: 'none', weight: 2, color: '#4b5563' },
        ],
      },
      {
        id: 'quiz',
        type: 'quiz',
        name: 'Spring quiz',
        max_attempts: 2,
        pass_percent: 60,
        questions: [
          { id: 'q1', text: 'Which season comes after winter?', options: ['Autumn', 'Spring', 'Summer'], correct_option: DEMO_QUIZ_ANSWERS.q1 },
          { id: 'q2', text: 'How many days does a week have?', options: ['5', '6', '7'], correct_option: DEMO_QUIZ_ANSWERS.q2 },
          { id: 'q3', text: 'Which of these is a flower?', options: ['Tulip', 'Granite', 'Copper'], correct_option: DEMO_QUIZ_ANSWERS.q3 },
        ],
        on_completion: [
          { type: 'award_points', amount: DEMO_QUIZ_POINTS, reason: 'quiz_passed', when: 'passed' },
          { type: 'grant_badge', badge_code: 'quiz-master', when: 'passed' },
        ],
      },
    ],
  };
}

export async function seedDemo(call: ApiCall, options: DemoSeedOptions = {}): Promise<DemoSeed> {
  await expect(call, 'POST', '/api/v1/admin/badges', { code: 'quiz-master', name: 'Quiz Master', description: 'Passed the spring quiz.' }, 201);
  await expect(call, 'POST', '/api/v1/admin/badges', { code: 'lucky-spinner', name: 'Lucky Spinner', description: 'Won the badge on the wheel.' }, 201);
  await expect(
    call,
    'POST',
    '/api/v1/admin/rewards',
    {
      id: 'spring-coupon',
      type: 'coupon',
      name: '10% off your next order',
      code_source: 'generated',
      code_prefix: 'SPRING',
      metadata: { discount_percent: 10, min_order_value: 20, currency: 'EUR' },
      valid_for_days: 30,
    },
    201,
  );
  const created = await expect(call, 'POST', '/api/v1/admin/engagements', demoEngagement(options), 201);
  const engagementId: string = created.id;
  await expect(call, 'POST', `/api/v1/admin/engagements/${engagementId}/publish`, undefined, 200);

  const now = Date.now();
  const day = 24 * 3600 * 1000;
  const challenge = await expect(
    call,
    'POST',
    '/api/v1/admin/challenges',
    {
      name: 'Spring starter',
      description: 'Complete two activities this week.',
      starts_at: new Date(now - 60_000).toISOString(),
      ends_at: new Date(now + 7 * day).toISOString(),
      engagement_id: engagementId,
      objectives: [{ id: 'play-two', name: 'Complete two activities', evaluator: 'activity_count', target: 2 }],
      milestones: [{ name: 'Halfway', threshold: 0.5 }],
      status: 'active',
      completion_points: 20,
    },
    201,
  );
  const contestId = `spring-contest-${Math.random().toString(36).slice(2, 8)}`;
  await expect(
    call,
    'POST',
    '/api/v1/admin/contests',
    {
      id: contestId,
      title: 'Spring quiz contest',
      description: 'The best quiz scores of the week win vouchers.',
      starts_at: new Date(now + 60_000).toISOString(),
      ends_at: new Date(now + 7 * day).toISOString(),
      scoring: { event_type: 'quiz_completed', score_attribute: 'score', weight: 1 },
      prize_structure: [
        { rank_from: 1, rank_to: 1, label: 'First place', reward: { type: 'voucher', value: 50, name: '50 EUR voucher' } },
        { rank_from: 2, rank_to: 5, label: 'Runners-up', reward: { type: 'coupon', value: 10, name: '10 EUR coupon' } },
      ],
      max_reward_liability: 100,
    },
    201,
  );
  await expect(call, 'POST', `/api/v1/admin/contests/${contestId}/publish`, undefined, 200);
  const leaderboardCode = 'spring-top';
  await expect(
    call,
    'POST',
    '/api/v1/admin/leaderboards',
    { leaderboard_code: leaderboardCode, name: 'Spring top players', metric: 'lifetime_points', engagement_id: engagementId },
    201,
  );
  return { engagementId, siteSlug: created.site_slug, challengeId: challenge.id, contestId, leaderboardCode };
}
