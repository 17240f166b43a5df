import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { MIGRATIONS_ADDED_OUT_OF_ORDER, migrationFiles, migrationsBelowApplied } from '../src/platform/migrate.js';
import { repositoryRoot } from './repository.js';

/**
 * Migrations are append-only: a new one is numbered above every migration
 * added before it, so that the order of the file names is the order in which
 * every database applied them. The order they were added in is read from git
 * (the first-parent history of what is checked out, oldest first: the order in
 * which they reached the branch, and so its databases); files not yet committed
 * come last. The ones added out of order before this rule are listed in
 * MIGRATIONS_ADDED_OUT_OF_ORDER, with the reason.
 */
const root = repositoryRoot;

function git(args: string[]): { ok: boolean; out: string } {
  const result = spawnSync('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { ok: !result.error && result.status === 0, out: result.stdout ?? '' };
}

const MIGRATION_PATH = /^migrations\/(\d{4}_[a-z0-9_]+\.sql)$/;

/** The migration files in the order they were added (or renamed to), oldest first; null where git or the history is not there. */
function migrationsInOrderAdded(): { order: string[]; uncommitted: string[] } | { missing: string } {
  if (!git(['--version']).ok) return { missing: 'git is not installed' };
  const inside = git(['rev-parse', '--is-inside-work-tree']);
  if (!inside.ok || inside.out.trim() !== 'true') return { missing: 'the repository is not a git checkout' };
  const shallow = git(['rev-parse', '--is-shallow-repository']);
  if (!shallow.ok || shallow.out.trim() !== 'false') return { missing: 'the clone is shallow (its history is cut)' };
  const log = git(['log', '--first-parent', '--diff-merges=first-parent', '--reverse', '-M', '--diff-filter=AR', '--name-status', '--format=', '--', 'migrations/']);
  assert.ok(log.ok, 'git log of migrations/ failed');
  const order: string[] = [];
  for (const line of log.out.split('\n')) {
    // `A<TAB>path` or `R100<TAB>old path<TAB>new path`: the path last on the line is the one added.
    const added = line.split('\t').at(-1) ?? '';
    const match = MIGRATION_PATH.exec(added);
    if (match && !order.includes(match[1])) order.push(match[1]);
  }
  const committed = new Set(git(['ls-files', '--', 'migrations/']).out.split('\n').map((file) => MIGRATION_PATH.exec(file)?.[1]));
  const uncommitted = migrationFiles().filter((name) => !committed.has(name));
  return { order, uncommitted };
}

test('each migration was added with a number above every migration added before it (but for the listed ones)', (t) => {
  const history = migrationsInOrderAdded();
  if ('missing' in history) {
    t.skip(`migration order not checked: ${history.missing}`);
    return;
  }
  assert.ok(history.order.length > 0, 'git log found no migration added: is migrations/ tracked?');
  const refused: string[] = [];
  let highest = '';
  for (const name of [...history.order, ...history.uncommitted]) {
    if (name <= highest && !MIGRATIONS_ADDED_OUT_OF_ORDER.has(name)) refused.push(`${name} (added after ${highest})`);
    if (name > highest) highest = name;
  }
  assert.deepEqual(
    refused,
    [],
    'a new migration takes a number above every existing one, or databases migrated before it apply it in another order than a fresh one: renumber it',
  );
  // The list holds no name it does not need: each listed migration was added out of order.
  const notOutOfOrder = [...MIGRATIONS_ADDED_OUT_OF_ORDER.keys()].filter((name) => {
    const index = history.order.indexOf(name);
    return index < 0 || history.order.slice(0, index).every((earlier) => earlier < name);
  });
  assert.deepEqual(notOutOfOrder, [], 'listed as added out of order, but added above every earlier migration (or never added)');
});

test('every migration file of the tree is named NNNN_words.sql, with a number of its own', () => {
  const files = migrationFiles();
  const numbers = files.map((name) => name.slice(0, 4));
  assert.equal(new Set(numbers).size, numbers.length, `two migrations share a number: ${numbers.join(' ')}`);
});

test('the migrator refuses a pending migration below one the database applied, but for the listed ones', () => {
  const applied = new Set(['0001_foundation.sql', '0100_points.sql', '1340_four_eyes_publishing.sql']);
  assert.deepEqual(migrationsBelowApplied(['0001_foundation.sql', '0100_points.sql', '1340_four_eyes_publishing.sql'], applied), []);
  assert.deepEqual(migrationsBelowApplied(['0001_foundation.sql', '1350_new.sql'], applied), []);
  assert.deepEqual(migrationsBelowApplied(['0001_foundation.sql', '1335_late.sql', '1330_admin_token_version.sql'], applied), [
    '1335_late.sql (below 1340_four_eyes_publishing.sql)',
  ]);
  assert.deepEqual(migrationsBelowApplied(['0001_foundation.sql'], new Set()), []);
});
