import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { build } from 'esbuild';
import { createElement } from 'react';
import { renderToString } from 'react-dom/server';
import { startTestService, waitFor } from '../../../test/helper.ts';
import { createEngagementSession, createLoyaltyClient, EngagementDataStore } from '@loyalty/sdk';
import { useEngagement, useEngagementData } from '@loyalty/sdk/react';
import { SITE_SLUG, publishDemoEngagement } from './fixtures.ts';
import { repositoryRoot } from '../../../test/repository.ts';

/** React bindings, the store under them, and the promise that the core entry never loads React. */
const packageRoot = path.join(repositoryRoot, 'packages/sdk');

function importedModules(entry: string): string[] {
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--import', path.join(import.meta.dirname, 'record-resolutions.mjs'), '--input-type=module', '-e', `await import(${JSON.stringify(entry)});`], {
    cwd: repositoryRoot,
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stderr);
  const line = run.stdout.split('\n').find((l) => l.startsWith('RESOLVED '));
  assert.ok(line, run.stdout);
  return JSON.parse(line.slice('RESOLVED '.length)) as string[];
}

const isReact = (url: string) => /\/node_modules\/(react|react-dom)\//.test(url);

test('the core entry loads neither React nor Node built-ins; the react entry does load React', async () => {
  const core = importedModules('@loyalty/sdk');
  assert.ok(core.some((url) => url.includes('/packages/sdk/src/index.ts')), 'the check saw the SDK load');
  assert.deepEqual(core.filter(isReact), []);
  const withReact = importedModules('@loyalty/sdk/react');
  assert.ok(withReact.some(isReact), 'the same check sees React when the react entry is loaded');

  // The browser bundle of the core entry (what packages/runtime builds with esbuild).
  const bundle = (entry: string) =>
    build({ stdin: { contents: `export * from ${JSON.stringify(entry)};`, resolveDir: repositoryRoot, loader: 'ts' }, bundle: true, write: false, platform: 'browser', format: 'esm', metafile: true, logLevel: 'silent' });
  const bundled = await bundle('@loyalty/sdk');
  const inputs = Object.keys(bundled.metafile.inputs);
  assert.ok(inputs.some((input) => input.endsWith('packages/sdk/src/client.ts')), 'the package name resolves to the sources');
  assert.deepEqual(inputs.filter((input) => input.includes('node_modules')), [], 'the core bundle has no dependency at all');
  assert.deepEqual(inputs.filter((input) => input.startsWith('node:')), []);
  const reactBundle = await bundle('@loyalty/sdk/react');
  assert.ok(Object.keys(reactBundle.metafile.inputs).some((input) => input.includes('node_modules/react/')));
});

test('useEngagementData and its store: engagement, balance and badges, live-updated from the stream', async (t) => {
  const svc = await startTestService(t, { jobs: true });
  const tenant = await svc.createTenant();
  await publishDemoEngagement(svc, tenant);
  const server = createLoyaltyClient({ baseUrl: svc.baseUrl, apiKey: tenant.apiKey });
  const session = createEngagementSession({ baseUrl: svc.baseUrl, tenantSlug: tenant.slug, siteSlug: SITE_SLUG });

  await t.test('server rendering before the data arrives shows the loading state', () => {
    function Before() {
      const { loading, data } = useEngagementData(createEngagementSession({ baseUrl: svc.baseUrl, tenantSlug: tenant.slug, siteSlug: SITE_SLUG }));
      return createElement('p', null, loading && data === null ? 'loading' : 'ready');
    }
    assert.equal(renderToString(createElement(Before)), '<p>loading</p>');
  });

  const store = new EngagementDataStore(session);
  const notifications: number[] = [];
  const unsubscribe = store.subscribe(() => notifications.push(Date.now()));
  t.after(() => unsubscribe());

  await t.test('the first subscriber loads engagement, balance and badges', async () => {
    assert.equal(store.getSnapshot().loading, true, 'the first load is under way');
    const snapshot = await waitFor('the first load', () => store.getSnapshot().data && store.getSnapshot());
    assert.equal(snapshot.loading, false);
    assert.equal(snapshot.error, null);
    assert.equal(snapshot.data!.engagement.site_slug, SITE_SLUG);
    assert.equal(snapshot.data!.balance.available_points, 0);
    assert.equal(snapshot.data!.badges.badges.find((badge) => badge.code === 'quizzer')?.earned, false);
    assert.ok(notifications.length >= 2, 'loading, then loaded');
  });

  await t.test('a grant made elsewhere reaches the store through the live stream', async () => {
    const { participant_id } = await session.ensureSession();
    await server.grantPoints({ body: { participant_id, amount: 30, reason: 'bonus' } });
    const snapshot = await waitFor('the live update', () => store.getSnapshot().data?.balance.available_points === 30 && store.getSnapshot());
    assert.equal(snapshot.data!.balance.total_points, 30);
    await session.submitQuiz('quiz1', [
      { question_id: 'q1', selected_option: 1 },
      { question_id: 'q2', selected_option: 1 },
    ]);
    await waitFor('the badge', () => store.getSnapshot().data?.badges.badges.find((badge) => badge.code === 'quizzer')?.earned === true);
    assert.equal(store.getSnapshot().data!.balance.available_points, 80);
  });

  await t.test('the hook renders the store\'s data (react-dom/server)', () => {
    function Points() {
      const { data, loading, error } = useEngagementData(store);
      if (loading) return createElement('p', null, 'loading');
      if (error) return createElement('p', null, 'error');
      const earned = data!.badges.badges.filter((badge) => badge.earned).map((badge) => badge.code);
      return createElement('p', null, `${data!.engagement.name}: ${data!.balance.available_points} points, badges ${earned.join(',')}`);
    }
    assert.equal(renderToString(createElement(Points)), '<p>Summer campaign: 80 points, badges quizzer</p>');
  });

  await t.test('useEngagement is the same hook and warns once per process', (tt) => {
    const warn = tt.mock.method(console, 'warn', () => undefined);
    function Legacy() {
      const { data } = useEngagement(store);
      return createElement('p', null, String(data?.balance.available_points));
    }
    assert.equal(renderToString(createElement(Legacy)), '<p>80</p>');
    assert.equal(renderToString(createElement(Legacy)), '<p>80</p>');
    assert.equal(warn.mock.callCount(), 1);
    assert.match(String(warn.mock.calls[0].arguments[0]), /useEngagement is deprecated; use useEngagementData/);
  });

  await t.test('refresh re-reads (refreshing while the data stays), and errors land in the snapshot', async () => {
    const seen: boolean[] = [];
    const stop = store.subscribe(() => seen.push(store.getSnapshot().refreshing && store.getSnapshot().data !== null));
    await store.refresh();
    stop();
    assert.ok(seen.includes(true), 'refreshing was reported with the data still present');
    assert.equal(store.getSnapshot().refreshing, false);
    assert.equal(store.getSnapshot().data!.balance.available_points, 80);
    const broken = new EngagementDataStore({ baseUrl: svc.baseUrl, tenantSlug: tenant.slug, siteSlug: 'no-such-site' });
    await broken.refresh();
    assert.equal(broken.getSnapshot().data, null);
    assert.equal((broken.getSnapshot().error as { status: number }).status, 404);
  });
});

test('the store re-reads when its stream opens: a change between the first load and the opening is not lost', async () => {
  // A session whose stream opens only when told to, and whose balance changes before that: the stream will
  // never deliver that change, so only a read at the opening can show it.
  let points = 0;
  let open: (() => void) | undefined;
  const session = {
    load: async () => ({ site_slug: SITE_SLUG }),
    balance: async () => ({ available_points: points, total_points: points }),
    badges: async () => ({ badges: [] }),
    subscribe: (_onEvent: unknown, _onError: unknown, _onReset: unknown, onOpen?: () => void) => {
      open = onOpen;
      return () => undefined;
    },
  } as unknown as ConstructorParameters<typeof EngagementDataStore>[0];
  const store = new EngagementDataStore(session);
  const stop = store.subscribe(() => undefined);
  try {
    await waitFor('the first load', () => store.getSnapshot().data);
    points = 30;
    assert.ok(open, 'the store asks to be told when the stream opens');
    open();
    const snapshot = await waitFor('the read at the opening', () => store.getSnapshot().data?.balance.available_points === 30 && store.getSnapshot(), 2_000);
    assert.equal(snapshot.data!.balance.total_points, 30);
  } finally {
    stop();
  }
});
