/**
 * Compile-time checks of the generated method types (tsc --noEmit covers this
 * file; it is not a test file and never runs).
 */
import { createEngagementSession, createLoyaltyClient, type PointsBalance, type PublicEngagement, type GrantPointsResponse } from '../src/index.ts';

export async function typeChecks(): Promise<void> {
  const client = createLoyaltyClient({ baseUrl: 'http://localhost', apiKey: 'lk_test_x' });
  const granted: GrantPointsResponse = await client.grantPoints({ body: { participant_id: 'p', amount: 5, reason: 'r' } });
  const duplicate: boolean = granted.duplicate;
  // @ts-expect-error amount is required
  await client.grantPoints({ body: { participant_id: 'p', reason: 'r' } });
  // @ts-expect-error amount is a number
  await client.grantPoints({ body: { participant_id: 'p', amount: '5', reason: 'r' } });
  // @ts-expect-error a path parameter is required
  await client.getWebhook({});
  const webhook = await client.getWebhook({ path: { destination_id: 'x' } });
  const url: string = webhook.url;
  const site: PublicEngagement = await client.getSite({ path: { tenantSlug: 't', siteSlug: 's' } });
  const engagementId: string = site.engagement_id;
  const balance: PointsBalance = await client.getPointsBalance({ session: { sessionId: 's', engagementId: 'e' } });
  const available: number = balance.available_points;
  await client.ingestEvent({ body: { event_name: 'purchase', participant_id: 'p' } });
  await client.postEventBatch({ body: { events: [{ event_name: 'purchase', participant_id: 'p' }] } });
  await client.listWebhooks();
  // @ts-expect-error no such operation
  await client.noSuchOperation();
  // The README's examples.
  await client.getParticipantState({ path: { participant_id: 'p-123' }, query: { include: 'points,badges' } });
  await client.deductPoints({ body: { participant_id: 'p-123', amount: 20, reason: 'coffee', idempotency_key: 'order-981' } });
  const { session_id } = await client.createSession({ body: { participant_id: 'p-123', engagement_id: engagementId } });
  const participant = client.withSession({ sessionId: session_id, engagementId });
  await participant.getPointsBalance();
  await participant.listClaimedRewards();
  const headless = createEngagementSession({ baseUrl: 'http://localhost', tenantSlug: 'acme', siteSlug: 'summer' });
  const { draw, completion } = await headless.spin('wheel1');
  const label: string | undefined = draw.result.prize_label;
  const succeeded: boolean = completion.success;
  const { gates } = await headless.checkGates({ targets: ['vip'] });
  const locked: boolean = gates.vip.locked;
  const stop: () => void = headless.subscribe((event) => event.event);
  void [duplicate, url, engagementId, available, label, succeeded, locked, stop];
}
