import type { ApiCall } from './demo-seed.js';

/**
 * What the console shows for the demo tenant: participants with profiles and
 * points, tiers, badges, earn rules, ingested events (one of which fails on
 * purpose, to show a failure's reason and its retry) and a webhook destination
 * with deliveries. Each part is created only when it is missing (looked up by
 * its code, name or participant id first), so running it again adds nothing.
 */
const DAY_MS = 24 * 3600 * 1000;

interface DemoParticipant {
  id: string;
  profile: Record<string, string>;
  welcome_points: number;
  /** Orders placed, days ago, with their totals. */
  orders: Array<{ days_ago: number; total: number }>;
}

export const DEMO_PARTICIPANTS: DemoParticipant[] = [
  { id: 'demo-alice', profile: { email: 'alice@demo.example', first_name: 'Alice', last_name: 'Martin', display_name: 'Alice', country_code: 'FR', external_id: 'crm-1001' }, welcome_points: 500, orders: [{ days_ago: 12, total: 80 }, { days_ago: 6, total: 140 }, { days_ago: 1, total: 35 }] },
  { id: 'demo-bruno', profile: { email: 'bruno@demo.example', first_name: 'Bruno', last_name: 'Costa', display_name: 'Bruno', country_code: 'PT', external_id: 'crm-1002' }, welcome_points: 100, orders: [{ days_ago: 9, total: 45 }, { days_ago: 2, total: 60 }] },
  { id: 'demo-chloe', profile: { email: 'chloe@demo.example', first_name: 'Chloé', last_name: 'Durand', display_name: 'Chloé', country_code: 'FR', external_id: 'crm-1003' }, welcome_points: 1900, orders: [{ days_ago: 15, total: 220 }, { days_ago: 3, total: 18 }] },
  { id: 'demo-dev', profile: { email: 'dev@demo.example', first_name: 'Dev', last_name: 'Patel', display_name: 'Dev', country_code: 'GB', external_id: 'crm-1004' }, welcome_points: 50, orders: [{ days_ago: 4, total: 25 }] },
  { id: 'demo-emma', profile: { email: 'emma@demo.example', first_name: 'Emma', last_name: 'Schmidt', display_name: 'Emma', country_code: 'DE', external_id: 'crm-1005' }, welcome_points: 0, orders: [{ days_ago: 20, total: 99 }, { days_ago: 11, total: 120 }, { days_ago: 5, total: 75 }, { days_ago: 0, total: 42 }] },
  { id: 'demo-farid', profile: { email: 'farid@demo.example', first_name: 'Farid', last_name: 'Haddad', display_name: 'Farid', country_code: 'ES', external_id: 'crm-1006' }, welcome_points: 250, orders: [] },
];

const TIERS = [
  { code: 'silver', name: 'Silver', min_lifetime_points: 200 },
  { code: 'gold', name: 'Gold', min_lifetime_points: 800 },
  { code: 'platinum', name: 'Platinum', min_lifetime_points: 2000 },
];

const BADGES = [
  { code: 'first-order', name: 'First order', description: 'Placed a first order.' },
  { code: 'big-spender', name: 'Big spender', description: 'An order of 100 or more.' },
];

/** Awards a badge that is deleted right after: its events fail in processing, so the console has a failure to show. */
const RETIRED_BADGE = { code: 'retired-review-star', name: 'Review star (retired)', description: 'Retired: the rule still awarding it fails.' };

const RULES = [
  { name: 'Points per order', trigger: 'event', event_name: 'order_placed', effects: [{ type: 'award_points', points: 25 }], status: 'active' },
  { name: 'Big order badge', trigger: 'event', event_name: 'big_order', effects: [{ type: 'award_badge', badge_code: 'big-spender' }, { type: 'award_points', points: 50 }], status: 'active' },
  { name: 'Review star (fails: its badge was retired)', trigger: 'event', event_name: 'review_posted', effects: [{ type: 'award_badge', badge_code: RETIRED_BADGE.code }], status: 'active' },
];

/**
 * A receiver that is not there (the discard port of this machine): every delivery fails, quickly exhausts its retries
 * under the sandbox's short backoff, and can be replayed from the console. Nothing leaves the machine.
 */
export const DEMO_DESTINATION = { name: 'Demo CRM', url: 'http://127.0.0.1:9/loyalty-webhooks', events: ['points.awarded.v1', 'badge.earned.v1'], allow_private_network: true };
/** Retries a thousand times sooner than a live tenant's, so the demo's deliveries end (EXHAUSTED) within minutes. */
const DEMO_BACKOFF_SCALE = 0.001;

async function must(call: ApiCall, method: string, path: string, body: unknown, ...ok: number[]) {
  const response = await call(method, path, body);
  if (!ok.includes(response.status)) throw new Error(`${method} ${path} answered ${response.status}: ${response.text ?? JSON.stringify(response.body)}`);
  return response;
}

async function exists(call: ApiCall, path: string): Promise<boolean> {
  return (await must(call, 'GET', path, undefined, 200, 404)).status === 200;
}

async function listAll<T>(call: ApiCall, path: string, field: string): Promise<T[]> {
  return (await must(call, 'GET', path, undefined, 200)).body[field] as T[];
}

async function seedParticipant(call: ApiCall, participant: DemoParticipant, now: number): Promise<void> {
  const key = (what: string) => `demo-${participant.id}-${what}`;
  await must(call, 'PATCH', `/api/v1/gamify/admin/participants/${participant.id}/profile`, participant.profile, 200);
  if (participant.welcome_points > 0) {
    await must(call, 'POST', '/api/v1/gamify/points/grant', { participant_id: participant.id, amount: participant.welcome_points, reason: 'welcome', idempotency_key: key('welcome') }, 200, 201);
  }
  const events = participant.orders.flatMap((order, index) => {
    const timestamp = new Date(now - order.days_ago * DAY_MS - index * 3_600_000).toISOString();
    const placed = { event_name: 'order_placed', participant_id: participant.id, timestamp, properties: { total: order.total, currency: 'EUR' }, idempotency_key: key(`order-${index}`) };
    return order.total >= 100 ? [placed, { ...placed, event_name: 'big_order', idempotency_key: key(`big-${index}`) }] : [placed];
  });
  if (participant.id === 'demo-bruno') {
    events.push({ event_name: 'review_posted', participant_id: participant.id, timestamp: new Date(now - DAY_MS).toISOString(), properties: { total: 0, currency: 'EUR' }, idempotency_key: key('review') });
  }
  if (events.length > 0) await must(call, 'POST', '/api/v1/ingest/events/batch', { events }, 200, 202);
}

export interface ConsoleDemoSeed {
  participants: number;
  destinationId: string;
}

export async function seedConsoleDemo(call: ApiCall, now = Date.now()): Promise<ConsoleDemoSeed> {
  for (const badge of BADGES) {
    if (!(await exists(call, `/api/v1/admin/badges/${badge.code}`))) await must(call, 'POST', '/api/v1/admin/badges', badge, 201);
  }
  for (const tier of TIERS) {
    if (!(await exists(call, `/api/v1/admin/points/tiers/${tier.code}`))) await must(call, 'POST', '/api/v1/admin/points/tiers', tier, 201);
  }
  const rules = await listAll<{ name: string }>(call, '/api/v1/admin/rules?limit=100', 'rules');
  for (const rule of RULES) {
    if (rules.some((r) => r.name === rule.name)) continue;
    const retiring = rule.effects.some((effect) => effect.badge_code === RETIRED_BADGE.code);
    if (retiring) await must(call, 'POST', '/api/v1/admin/badges', RETIRED_BADGE, 201, 409);
    await must(call, 'POST', '/api/v1/admin/rules', rule, 201);
    if (retiring) await must(call, 'DELETE', `/api/v1/admin/badges/${RETIRED_BADGE.code}`, undefined, 200, 204);
  }
  let created = 0;
  for (const participant of DEMO_PARTICIPANTS) {
    if (await exists(call, `/api/v1/gamify/admin/participants/${participant.id}`)) continue;
    await seedParticipant(call, participant, now);
    created += 1;
  }
  const destinations = await listAll<{ id: string; name: string }>(call, '/api/v1/gamify/webhooks?limit=100', 'destinations');
  let destination = destinations.find((d) => d.name === DEMO_DESTINATION.name);
  if (!destination) {
    await must(call, 'PATCH', '/api/v1/gamify/webhooks/settings', { webhook_backoff_scale: DEMO_BACKOFF_SCALE }, 200);
    destination = (await must(call, 'POST', '/api/v1/gamify/webhooks', DEMO_DESTINATION, 201)).body as { id: string; name: string };
    // One delivery at once (refused: nothing listens there); the points and badges of the events follow as the worker processes them.
    await must(call, 'POST', `/api/v1/gamify/webhooks/${destination.id}/test`, undefined, 200);
  }
  return { participants: created, destinationId: destination.id };
}
