import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService, type TestTenant } from '../helper.js';
import type { Page } from 'playwright-core';
import { assertAccessible, consoleUser, launchConsoleBrowser, screenshot } from './console-kit.js';

/** A full-page screenshot from the top: taken scrolled down, the fixed header would be drawn across the middle. */
async function shot(page: Page, name: string): Promise<void> {
  await page.evaluate(() => window.scrollTo(0, 0));
  await screenshot(page, name);
}

/**
 * A marketer previews a draft without publishing it (issue 35 item 3): the
 * saved draft runs in the runtime page for a test participant, marked as a
 * preview; a spin there awards nothing real, so the overview's figures and
 * the participant list are what they were, and the draft stays a draft. The
 * preview token works for its own engagement and tenant only. The reward's
 * metadata is a key/value editor built from the service's own limits, which
 * refuses a bad value on its field (item 6).
 */
test('the console preview in Chromium: a draft wheel previewed with a test participant leaves no trace; the reward metadata editor', { timeout: 180_000 }, async (t) => {
  const svc: TestService = await startTestService(t);
  const tenant: TestTenant = await svc.createTenant();
  const other: TestTenant = await svc.createTenant();
  const call = async (method: string, path: string, body?: unknown, who: TestTenant = tenant) => {
    const response = await svc.request(method, path, { key: who.apiKey, ...(body === undefined ? {} : { body }) });
    assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${response.text}`);
    return response.body;
  };
  // Real activity for the figures, a reward the wheel hands out, and a draft wheel that was never published.
  await call('POST', '/api/v1/gamify/points/grant', { participant_id: 'p-real', amount: 120, reason: 'welcome', idempotency_key: 'seed-real' });
  await call('POST', '/api/v1/admin/rewards', { id: 'coffee', name: 'Coffee coupon', type: 'coupon', code_source: 'generated', code_prefix: 'COF-', inventory: 10, metadata: { discount_percent: 10 } });
  const draft = await call('POST', '/api/v1/admin/engagements', {
    name: 'Autumn wheel',
    site_slug: 'autumn-wheel',
    activities: [
      {
        id: 'wheel',
        type: 'spin_wheel',
        name: 'Spin the wheel',
        max_attempts: 3,
        segments: [
          { label: '50 points', prize_type: 'points', prize_value: 50, weight: 1 },
          { label: 'A coffee', prize_type: 'reward', reward_id: 'coffee', weight: 1 },
        ],
        on_completion: [{ type: 'award_points', amount: 5 }],
      },
    ],
  });
  const otherDraft = await call('POST', '/api/v1/admin/engagements', { name: 'Other', site_slug: 'other', activities: [] });
  const overviewBefore = await call('GET', '/api/v1/admin/analytics/overview');
  const participantsBefore = await call('GET', '/api/v1/gamify/admin/participants');

  const marketer = await consoleUser(svc, tenant, 'marketer');
  const { newPage, signIn, open, assertClean } = await launchConsoleBrowser(t, svc);
  const page = await newPage();
  await signIn(page, marketer.email, marketer.password);
  let sessionId = '';

  await t.test('the marketer edits the draft wheel and previews it: marked as a preview, the spin awards a placeholder', async () => {
    await open(page, 'Engagements', 'Engagements');
    await page.getByRole('link', { name: 'Autumn wheel' }).click();
    await page.getByRole('heading', { level: 1, name: 'Engagement: Autumn wheel' }).waitFor();
    // A weight below the limit is sent as typed, never clamped, and refused on its own field.
    const weight = page.getByLabel('Weight of segment 2 of Spin the wheel');
    await weight.fill('-3');
    await page.getByRole('button', { name: 'Save the draft' }).click();
    await page.locator('[aria-label="Weight of segment 2 of Spin the wheel"][aria-invalid="true"]').waitFor();
    assert.equal(await weight.inputValue(), '-3');
    assert.equal((await call('GET', `/api/v1/admin/engagements/${draft.id}`)).activities[0].segments[1].weight, 1, 'nothing saved');
    await weight.fill('1');
    await page.getByLabel('Label of segment 1 of Spin the wheel').fill('Fifty points');
    await page.getByText('The preview plays the saved draft: save your changes to see them.').waitFor();
    await page.getByRole('button', { name: 'Save the draft' }).click();
    await page.getByTestId('saved').waitFor();

    await page.getByRole('button', { name: 'Start the preview' }).click();
    const frame = page.frameLocator('[data-testid="live-preview"]');
    const marker = frame.locator('[data-role="preview-marker"]');
    await marker.waitFor({ timeout: 30_000 });
    assert.match((await marker.textContent())!, /^Preview — test data/);
    await frame.getByText('Fifty points').first().waitFor({ timeout: 30_000 });
    await frame.locator('[data-action="spin"]:not([disabled])').click();
    const prize = frame.locator('[data-role="prize"]');
    await prize.waitFor({ timeout: 30_000 });
    assert.match((await prize.textContent())!, /Fifty points|A coffee/);
    assert.match((await page.getByTestId('preview-participant').textContent())!, /^Test participant preview_/);
    sessionId = decodeURIComponent(/#session=([^&]+)/.exec((await page.getByTestId('live-preview').getAttribute('src'))!)![1]);
    await assertAccessible(page, 'engagement editor with the preview');
    await shot(page, '36-preview-draft');
  });

  await t.test('afterwards the figures and the participant list are unchanged, and the draft is still a draft', async () => {
    const [ledger] = await svc.sql<{ n: number }>('SELECT count(*)::int AS n FROM points_ledger WHERE tenant_id = $1', [tenant.tenantId]);
    assert.equal(ledger.n, 1, 'only the real grant');
    const [claims] = await svc.sql<{ n: number }>('SELECT count(*)::int AS n FROM reward_claims WHERE tenant_id = $1', [tenant.tenantId]);
    assert.equal(claims.n, 0, 'no reward claimed, no code or stock used');
    const overviewAfter = await call('GET', '/api/v1/admin/analytics/overview');
    assert.deepEqual(overviewAfter.totals, overviewBefore.totals);
    assert.deepEqual(overviewAfter.liability.outstanding_points, overviewBefore.liability.outstanding_points);
    assert.deepEqual(await call('GET', '/api/v1/gamify/admin/participants'), participantsBefore);

    await open(page, 'Overview', 'Overview');
    assert.equal(await page.getByTestId('stat-points-issued').textContent(), '120');
    assert.equal(await page.getByTestId('stat-with-balance').textContent(), '1');
    await open(page, 'Participants', 'Participants');
    const rows = page.getByTestId('participant-table').locator('tbody tr');
    await rows.first().waitFor();
    assert.equal(await rows.count(), 1);
    assert.match((await rows.first().textContent())!, /p-real/);
    // A filter shows the test participant when asked for.
    await page.getByRole('switch', { name: 'Show the test participants of draft previews' }).check();
    await page.getByTestId('participant-table').getByText(/^preview_/).waitFor();
    assert.equal(await rows.count(), 2);
    await page.getByRole('switch', { name: 'Show the test participants of draft previews' }).uncheck();
    await page.getByTestId('participant-table').getByText(/^preview_/).waitFor({ state: 'detached' });

    await open(page, 'Engagements', 'Engagements');
    await page.getByRole('link', { name: 'Autumn wheel' }).click();
    // A drafts-only marketer sees the status in the review request's controls.
    await page.getByTestId('publication-controls').getByText('Draft', { exact: true }).waitFor();
    assert.equal((await call('GET', `/api/v1/admin/engagements/${draft.id}`)).status, 'draft');
  });

  await t.test('the API refuses the preview token on another engagement and on another tenant', async () => {
    const onOtherEngagement = await svc.request('GET', `/api/v1/sites/${tenant.slug}/other/preview?session_id=${sessionId}&engagement_id=${otherDraft.id}`);
    assert.equal(onOtherEngagement.status, 403, onOtherEngagement.text);
    assert.equal(onOtherEngagement.body.code, 'SESSION_ENGAGEMENT_MISMATCH');
    const onOtherTenant = await svc.request('GET', `/api/v1/sites/${other.slug}/autumn-wheel/preview?session_id=${sessionId}&engagement_id=${draft.id}`);
    assert.equal(onOtherTenant.status, 403, onOtherTenant.text);
    assert.equal(onOtherTenant.body.code, 'SESSION_TENANT_MISMATCH');
    const spinElsewhere = await svc.request('POST', '/api/v1/activities/wheel/validate', { body: { session_id: sessionId, engagement_id: otherDraft.id, activity_type: 'spin_wheel' } });
    assert.equal(spinElsewhere.status, 403);
  });

  await t.test('ending the preview deletes the test participant', async () => {
    await page.getByRole('button', { name: 'Start the preview' }).click();
    await page.frameLocator('[data-testid="live-preview"]').locator('[data-role="preview-marker"]').waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'End the preview' }).click();
    await page.getByTestId('live-preview').waitFor({ state: 'detached' });
    const left = await call('GET', '/api/v1/gamify/admin/participants?include_test=true');
    assert.deepEqual(
      left.participants.map((p: { participant_id: string }) => p.participant_id),
      ['p-real'],
    );
  });

  await t.test('the reward metadata editor: typed values from the service\'s limits, a bad value refused on its field', async () => {
    await open(page, 'Rewards catalogue', 'Rewards catalogue');
    await page.getByRole('link', { name: 'Coffee coupon' }).click();
    await page.getByRole('heading', { level: 1, name: 'Reward: Coffee coupon' }).waitFor();
    const editor = page.getByTestId('metadata-editor');
    const discount = editor.getByRole('spinbutton', { name: /^discount_percent/ });
    assert.equal(await discount.inputValue(), '10');
    // Both limits are shown before they are broken, and a value past them is refused on the field, not clamped.
    await editor.getByText('More than 0, up to 100', { exact: true }).waitFor();
    await discount.fill('150');
    await page.getByRole('button', { name: 'Save the reward' }).click();
    await editor.getByText('Must be at most 100.').waitFor();
    assert.equal(await discount.getAttribute('aria-invalid'), 'true');
    assert.equal(await discount.inputValue(), '150');
    await assertAccessible(page, 'reward metadata refused');
    await shot(page, '38-reward-metadata-refused');

    // An optional detail from the type's list; the service gets typed values.
    await discount.fill('15');
    await editor.getByRole('combobox', { name: 'Add a detail' }).click();
    await page.getByRole('option', { name: 'min_order_value' }).click();
    await editor.getByRole('spinbutton', { name: /^min_order_value/ }).fill('25');
    await page.getByRole('button', { name: 'Save the reward' }).click();
    await page.getByText('Saved.').waitFor();
    const stored = await call('GET', '/api/v1/admin/rewards/coffee');
    assert.deepEqual(stored.metadata, { discount_percent: 15, min_order_value: 25 });
  });

  await t.test('a points multiplier with event attributes, entered as keys and typed values, and a claim end in the tenant\'s zone', async () => {
    await open(page, 'Rewards catalogue', 'Rewards catalogue');
    await page.getByLabel(/^Name/).fill('Double points weekend');
    await page.getByRole('combobox', { name: 'Type' }).click();
    await page.getByRole('option', { name: 'Points multiplier' }).click();
    const editor = page.getByTestId('metadata-editor');
    await editor.getByRole('spinbutton', { name: /^multiplier/ }).fill('2');
    await editor.getByRole('combobox', { name: 'Add a detail' }).click();
    await page.getByRole('option', { name: 'attributes' }).click();
    await editor.getByRole('button', { name: 'Add an entry to attributes' }).click();
    await editor.getByRole('textbox', { name: 'Key 1 of attributes' }).fill('channel');
    await editor.getByRole('textbox', { name: 'Value 1 of attributes' }).fill('web');
    await editor.getByRole('button', { name: 'Add an entry to attributes' }).click();
    await editor.getByRole('textbox', { name: 'Key 2 of attributes' }).fill('min_items');
    await editor.getByRole('combobox', { name: 'Type of value 2 of attributes' }).click();
    await page.getByRole('option', { name: 'Number' }).click();
    await editor.getByRole('spinbutton', { name: 'Value 2 of attributes' }).fill('3');
    await page.getByLabel('Claimable until').fill('2030-06-30T18:00');
    await page.getByTestId('zone-note').first().waitFor();
    await assertAccessible(page, 'reward create form with the metadata editor');
    await shot(page, '37-reward-metadata-editor');
    await page.getByRole('button', { name: 'Add the reward' }).click();
    await page.getByRole('heading', { level: 1, name: 'Reward: Double points weekend' }).waitFor();
    const list = await call('GET', '/api/v1/admin/rewards');
    const created = list.rewards.find((r: { name: string }) => r.name === 'Double points weekend');
    assert.deepEqual(created.metadata, { multiplier: 2, duration_hours: 24, event_type: 'order_placed', attributes: { channel: 'web', min_items: 3 } });
    const tenantInfo = await call('GET', '/api/v1/tenant');
    // 18:00 in the tenant's zone (UTC for a new tenant), not in the browser's.
    assert.equal(tenantInfo.timezone, 'UTC');
    assert.equal(created.available_until, '2030-06-30T18:00:00.000Z');
  });

  assertClean();
});
