import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestService, type TestService, type TestTenant } from '../helper.js';
import { assertAccessible, launchConsoleBrowser, PHONE, screenshot } from './console-kit.js';

/** German words are longer: every button, link, tab, label and column heading shows its whole text, and the page does not scroll sideways. */
async function assertFits(page: Page, screen: string): Promise<void> {
  const cut = await page.evaluate(() => {
    const clipped = [...document.querySelectorAll('button, a, th, label, [role="tab"], .mantine-Button-label, .mantine-NavLink-label, .mantine-Badge-label')]
      .filter((element) => element.clientWidth > 0 && element.scrollWidth > element.clientWidth + 1)
      .map((element) => (element.textContent ?? '').trim().slice(0, 60));
    const sideways = document.documentElement.scrollWidth > window.innerWidth + 1 ? [`the page is ${document.documentElement.scrollWidth}px wide in a ${window.innerWidth}px window`] : [];
    return [...clipped, ...sideways];
  });
  assert.deepEqual(cut, [], `${screen}: text cut off or overflowing`);
}

/**
 * The console in German: a tenant whose locale is de-DE gets a German console
 * without anyone choosing it (navigation, overview, a form's field error with
 * a German number, a list with German figures); a person who prefers English
 * switches and keeps English after a reload; axe finds nothing serious in
 * German.
 */
test('the German console: a de-DE tenant reads German, field errors and figures in German; switching to English persists', { timeout: 240_000 }, async (t) => {
  const svc: TestService = await startTestService(t);
  const tenant: TestTenant = await svc.createTenant();
  const call = async (method: string, p: string, body?: unknown) => {
    const response = await svc.request(method, p, { key: tenant.apiKey, ...(body === undefined ? {} : { body }) });
    assert.ok(response.status < 300, `${method} ${p}: ${response.status} ${response.text}`);
    return response.body;
  };
  await call('PATCH', '/api/v1/tenant', { locale: 'de-DE', timezone: 'Europe/Berlin', currency: 'EUR' });
  await call('PATCH', '/api/v1/gamify/admin/participants/p-anna/profile', { email: 'anna@example.com', first_name: 'Anna', last_name: 'Schmidt', display_name: 'Anna S.', country_code: 'DE', external_id: 'crm-4711' });
  await call('POST', '/api/v1/gamify/points/grant', { participant_id: 'p-anna', amount: 12_500, reason: 'Willkommensbonus', idempotency_key: 'seed-anna' });

  const { newPage, assertClean } = await launchConsoleBrowser(t, svc);
  const page = await newPage();
  const nav = () => page.getByRole('navigation', { name: 'Bereiche der Konsole' });

  /** Sign-in as the tenant's owner; the page starts in English (no tenant yet) and turns German with the tenant's locale. */
  async function signInGerman(target: Page): Promise<void> {
    await target.goto(`${svc.baseUrl}/console/`);
    await target.getByLabel('Email').fill(tenant.adminEmail);
    await target.getByLabel(/^Password/).fill(tenant.adminPassword);
    await target.getByRole('button', { name: 'Sign in' }).click();
    await target.getByRole('button', { name: 'Abmelden' }).waitFor();
  }

  await t.test('an owner of a de-DE tenant signs in and the console is German: navigation, overview, <html lang="de">', async () => {
    await signInGerman(page);
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'de');
    for (const link of ['Übersicht', 'Teilnehmer', 'Punkteregeln', 'Stufen', 'Abzeichen', 'Ranglisten', 'Einstellungen']) {
      await nav().getByRole('link', { name: link, exact: true }).waitFor();
    }
    await page.getByRole('heading', { level: 1, name: 'Übersicht' }).waitFor();
    // The points granted, written the German way.
    await page.getByText('12.500', { exact: true }).first().waitFor();
    assert.equal(await page.getByLabel('Sprache').inputValue(), 'de');
    assert.equal(await page.title(), 'Loyalty-Konsole');
    await assertAccessible(page, 'overview (de)');
    await assertFits(page, 'overview (de)');
    // The pointer rests where the sign-in button was, over a chart: move it away, or the shot holds a chart's tooltip.
    await page.mouse.move(0, 0);
    await screenshot(page, '95-de-overview');
  });

  await t.test('a participant in German: figures with German separators, times in the tenant zone', async () => {
    await nav().getByRole('link', { name: 'Teilnehmer', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Teilnehmer' }).waitFor();
    await assertAccessible(page, 'participants (de)');
    await page.goto(`${svc.baseUrl}/console/participants/p-anna`);
    await page.getByText('Willkommensbonus').first().waitFor();
    await page.getByText('12.500').first().waitFor();
    const body = await page.innerText('body');
    assert.match(body, /Willkommensbonus/, 'the ledger entry');
    assert.match(body, /\d{4}-\d{2}-\d{2} \d{2}:\d{2}/, 'a time written 2026-11-27 14:05');
    assert.doesNotMatch(body, /\b12,500\b/, 'no English thousands separator');
    await assertAccessible(page, 'participant (de)');
    await assertFits(page, 'participant (de)');
    await screenshot(page, '95-de-participant');
  });

  await t.test('a form refuses a value on its field in German, with the limit in German numbers', async () => {
    await nav().getByRole('link', { name: 'Ranglisten', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Ranglisten' }).waitFor();
    await page.getByLabel(/^Code/).fill('beste-woche');
    await page.getByLabel(/^Name/).fill('Beste der Woche');
    const refresh = page.getByLabel(/^Aktualisieren alle \(Sekunden\)/);
    await refresh.fill('5000');
    await page.getByRole('button', { name: 'Hinzufügen', exact: true }).click();
    await page.getByText('Darf höchstens 3.600 sein.').waitFor();
    assert.equal(await refresh.getAttribute('aria-invalid'), 'true', 'the field is marked');
    await assertAccessible(page, 'leaderboard form error (de)');
    await assertFits(page, 'leaderboard form (de)');
    await screenshot(page, '95-de-form-error');
    await refresh.fill('60');
    await page.getByRole('button', { name: 'Hinzufügen', exact: true }).click();
    await page.getByRole('link', { name: 'Beste der Woche' }).waitFor();
  });

  await t.test('earn rules and settings in German fit their columns and buttons', async () => {
    await call('POST', '/api/v1/admin/rules', { name: 'Punkte pro Bestellung', trigger: 'event', event_name: 'order_placed', effects: [{ type: 'award_points', points: 25 }], status: 'active' });
    await nav().getByRole('link', { name: 'Punkteregeln', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Punkteregeln' }).waitFor();
    await page.getByRole('link', { name: 'Punkte pro Bestellung' }).waitFor();
    await page.getByRole('link', { name: 'Neue Regel' }).waitFor();
    await assertAccessible(page, 'rules (de)');
    await assertFits(page, 'rules (de)');
    await screenshot(page, '95-de-rules');
    await nav().getByRole('link', { name: 'Einstellungen', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Einstellungen' }).waitFor();
    await assertAccessible(page, 'settings (de)');
    await assertFits(page, 'settings (de)');
    await screenshot(page, '95-de-settings');
  });

  await t.test('on a phone the German navigation opens from its button', async () => {
    const phone = await newPage(PHONE);
    await signInGerman(phone);
    await phone.getByRole('button', { name: 'Navigation ein- oder ausblenden' }).click();
    await phone.getByRole('navigation', { name: 'Bereiche der Konsole' }).getByRole('link', { name: 'Herausforderungen', exact: true }).waitFor();
    await assertAccessible(phone, 'navigation on a phone (de)');
    await assertFits(phone, 'navigation on a phone (de)');
    await screenshot(phone, '95-de-phone-navigation');
    // The participant's sections are tabs: the German names (Herausforderungen …) must not push the page sideways.
    await phone.goto(`${svc.baseUrl}/console/participants/p-anna`);
    await phone.getByText('Willkommensbonus').first().waitFor();
    await assertAccessible(phone, 'participant on a phone (de)');
    await assertFits(phone, 'participant on a phone (de)');
    await screenshot(phone, '95-de-phone-participant');
  });

  await t.test('switching to English applies at once and survives a reload; the tenant default does not override it', async () => {
    await page.getByLabel('Sprache').selectOption('en');
    await page.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name: 'Earn rules', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'en');
    await page.reload();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    await page.getByText('Europe/Berlin').first().waitFor();
    // The tenant (de-DE) has loaded by now and left the person's choice alone.
    await page.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name: 'Overview', exact: true }).waitFor();
    assert.equal(await page.getByLabel('Language').inputValue(), 'en');
    await page.getByLabel('Language').selectOption('de');
    await page.getByRole('button', { name: 'Abmelden' }).waitFor();
    assert.equal(await page.evaluate(() => localStorage.getItem('console.language')), 'de');
  });

  assertClean();
});
