import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { migratedDatabase } from './helper.js';

/**
 * The schema stays distributable by tenant_id with Citus (docs/operations/scaling.md).
 * Citus is not installed here, so this reads the migrated schema's catalogue and checks
 * the rules Citus applies when the tables are distributed, not a run on Citus itself.
 *
 * Every table of the schema is one of three kinds:
 * - a tenant table: it has a tenant_id column, and is distributed by it
 *   (`create_distributed_table(table, 'tenant_id', colocate_with => …)`);
 * - a reference table: copied whole to every node, named below with the reason;
 * - a local table: kept on the coordinator only, named below with the reason.
 */
export interface DistributionPlan {
  /** Tables copied to every node (`create_reference_table`), with the reason each is one. */
  reference: Readonly<Record<string, string>>;
  /** Tables that stay on the coordinator, with the reason each does. */
  local: Readonly<Record<string, string>>;
}

export const DISTRIBUTION_PLAN: DistributionPlan = {
  reference: {
    tenants:
      'tenant tables have foreign keys to it (all but the hottest rows, migration 1465), and a credential resolves its tenant by id or slug before any tenant is known (auth_find_tenant, auth_find_tenant_by_slug); one row per tenant',
    api_keys:
      'every API request looks its key up by hash before the tenant is known (auth_find_api_key), and a key hash is unique across tenants; a few rows per tenant, written rarely (create, rotate, revoke; last_used_at at most once per key and cache period)',
    admin_users:
      'signing in looks a console user up by email across tenants (auth_find_admin_user), and an email belongs to one tenant (unique lower(email)); a few rows per tenant',
  },
  local: {
    schema_migrations: 'the migration history: migrations run on the coordinator only',
    service_secrets: "the service's own secrets (the generated JWT key), read by the owner; no tenant",
    worker_heartbeats: "the job workers' check-ins, read together with graphile-worker's tables, which stay on the coordinator",
  },
};

type Kind = 'tenant' | 'reference' | 'local';
type Queryable = Pick<pg.ClientBase, 'query'>;

interface TableRow {
  name: string;
  tenant_id_type: string | null;
  tenant_id_not_null: boolean | null;
  has_primary_key: boolean;
}

interface UniqueIndexRow {
  table_name: string;
  index_name: string;
  constraint_type: string | null;
  key_includes_tenant_id: boolean;
  definition: string;
}

interface ForeignKeyRow {
  table_name: string;
  constraint_name: string;
  referenced_schema: string;
  referenced_table: string;
  columns: string[];
  referenced_columns: string[];
  on_delete: string;
  on_update: string;
}

interface SequenceColumnRow {
  table_name: string;
  column_name: string;
  type: string;
}

const CONSTRAINT_KINDS: Readonly<Record<string, string>> = { p: 'primary key', u: 'unique constraint', x: 'exclusion constraint' };
const ACTIONS: Readonly<Record<string, string>> = { n: 'SET NULL', d: 'SET DEFAULT', c: 'CASCADE' };
const WHERE_TO_CLASSIFY = 'DISTRIBUTION_PLAN in test/citus-distribution.test.ts';

/**
 * What would stop Citus from distributing the tables of `schema` by tenant_id
 * as `plan` says, one sentence per problem (empty when nothing would).
 */
export async function distributionProblems(client: Queryable, plan: DistributionPlan, schema = 'public'): Promise<string[]> {
  const problems: string[] = [];
  const tables = await readTables(client, schema);
  const kinds = new Map<string, Kind>();

  for (const name of Object.keys(plan.reference).filter((listed) => listed in plan.local)) {
    problems.push(`${name} is named both a reference and a local table in ${WHERE_TO_CLASSIFY}: keep one`);
  }
  const existing = new Set(tables.map((table) => table.name));
  for (const [list, names] of [['reference', Object.keys(plan.reference)], ['local', Object.keys(plan.local)]] as const) {
    for (const name of names.filter((listed) => !existing.has(listed))) {
      problems.push(`${name} is named a ${list} table in ${WHERE_TO_CLASSIFY} but is no table of schema ${schema}: remove it from the list`);
    }
  }

  for (const table of tables) {
    if (table.name in plan.reference) kinds.set(table.name, 'reference');
    else if (table.name in plan.local) kinds.set(table.name, 'local');
    else if (table.tenant_id_type !== null) {
      kinds.set(table.name, 'tenant');
      if (table.tenant_id_type !== 'uuid') problems.push(`${table.name}: tenant_id is ${table.tenant_id_type}; every tenant table's tenant_id is uuid, so that all of them are colocated`);
      if (!table.tenant_id_not_null) problems.push(`${table.name}: tenant_id may be NULL; Citus refuses a row without its distribution column: make it NOT NULL`);
      if (!table.has_primary_key) {
        problems.push(`${table.name}: no primary key; moving its shards between nodes replicates updates and deletes by it: add one that starts with tenant_id`);
      }
    } else {
      problems.push(
        `${table.name} is not classified: it has no tenant_id column, and ${WHERE_TO_CLASSIFY} names it neither a reference nor a local table. ` +
          'Add tenant_id uuid NOT NULL (first in its primary key) to distribute it by tenant, or name it a reference table ' +
          '(small, read across tenants, copied to every node) or a local table (stays on the coordinator), with the reason',
      );
    }
  }

  for (const index of await readUniqueIndexes(client, schema)) {
    if (kinds.get(index.table_name) !== 'tenant' || index.key_includes_tenant_id) continue;
    const what = CONSTRAINT_KINDS[index.constraint_type ?? ''] ?? 'unique index';
    const columns = index.definition.replace(/^.* USING \w+ /, '');
    problems.push(
      `${index.table_name}: ${what} ${index.index_name} ${columns} does not include tenant_id among its key columns; ` +
        'Citus enforces uniqueness within a shard only: add tenant_id to it',
    );
  }

  for (const key of await readForeignKeys(client, schema)) {
    const from = kinds.get(key.table_name);
    if (from === undefined) continue;
    const to = key.referenced_schema === schema ? kinds.get(key.referenced_table) : undefined;
    const target = key.referenced_schema === schema ? key.referenced_table : `${key.referenced_schema}.${key.referenced_table}`;
    const label = `${key.table_name}: foreign key ${key.constraint_name} to ${target}`;
    if (from === 'tenant') {
      if (to === 'tenant' && !key.columns.some((column, i) => column === 'tenant_id' && key.referenced_columns[i] === 'tenant_id')) {
        problems.push(`${label} does not pair tenant_id with tenant_id; Citus enforces a foreign key between distributed tables within a shard only: make it (tenant_id, …) REFERENCES ${target} (tenant_id, …)`);
      }
      if (to !== 'tenant' && to !== 'reference') {
        problems.push(`${label}: a distributed table may reference only distributed and reference tables, and ${target} is ${to === 'local' ? 'a local table' : 'neither'}`);
      }
      if (key.columns.includes('tenant_id')) {
        const actions = [ACTIONS[key.on_delete] && key.on_delete !== 'c' ? `ON DELETE ${ACTIONS[key.on_delete]}` : null, ACTIONS[key.on_update] ? `ON UPDATE ${ACTIONS[key.on_update]}` : null];
        for (const action of actions.filter((found): found is string => found !== null)) {
          problems.push(`${label}: Citus refuses ${action} on a foreign key that includes the distribution column: use ON DELETE CASCADE, RESTRICT or NO ACTION and never change tenant_id`);
        }
      }
    }
    if (from === 'reference' && to !== 'reference') {
      problems.push(`${label}: a reference table (copied to every node) may reference only reference tables, and ${target} is ${to === undefined ? 'neither' : `a ${to} table`}`);
    }
    if (from === 'local' && to === 'tenant') {
      problems.push(`${label}: a table that stays on the coordinator cannot reference a distributed table`);
    }
  }

  for (const column of await readSequenceColumns(client, schema)) {
    const kind = kinds.get(column.table_name);
    if ((kind === 'tenant' || kind === 'reference') && column.type !== 'bigint') {
      problems.push(
        `${column.table_name}: column ${column.column_name} takes its values from a sequence but is ${column.type}; ` +
          'Citus gives each node its own range of a bigint sequence and refuses smaller identity columns: make it bigint',
      );
    }
  }
  return problems;
}

async function readTables(client: Queryable, schema: string): Promise<TableRow[]> {
  const { rows } = await client.query<TableRow>(
    `SELECT c.relname::text AS name,
            format_type(a.atttypid, a.atttypmod) AS tenant_id_type,
            a.attnotnull AS tenant_id_not_null,
            EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conrelid = c.oid AND k.contype = 'p') AS has_primary_key
     FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
     ORDER BY c.relname`,
    [schema],
  );
  return rows;
}

/** Unique and exclusion indexes (primary keys and unique constraints among them), with whether tenant_id is a key column (not only INCLUDEd). */
async function readUniqueIndexes(client: Queryable, schema: string): Promise<UniqueIndexRow[]> {
  const { rows } = await client.query<UniqueIndexRow>(
    `SELECT c.relname::text AS table_name, i.relname::text AS index_name, k.contype::text AS constraint_type,
            coalesce((SELECT a.attnum FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped)
                     IN (SELECT key.attnum FROM unnest(x.indkey::int2[]) WITH ORDINALITY AS key (attnum, position) WHERE key.position <= x.indnkeyatts),
                     false) AS key_includes_tenant_id,
            pg_get_indexdef(x.indexrelid) AS definition
     FROM pg_index x
     JOIN pg_class c ON c.oid = x.indrelid
     JOIN pg_class i ON i.oid = x.indexrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_constraint k ON k.conindid = x.indexrelid AND k.conrelid = c.oid AND k.contype IN ('p', 'u', 'x')
     WHERE n.nspname = $1 AND (x.indisunique OR x.indisexclusion)
     ORDER BY c.relname, i.relname`,
    [schema],
  );
  return rows;
}

async function readForeignKeys(client: Queryable, schema: string): Promise<ForeignKeyRow[]> {
  const { rows } = await client.query<ForeignKeyRow>(
    `SELECT c.relname::text AS table_name, k.conname::text AS constraint_name,
            rn.nspname::text AS referenced_schema, r.relname::text AS referenced_table,
            ARRAY(SELECT a.attname::text FROM unnest(k.conkey) WITH ORDINALITY AS key (attnum, position)
                  JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = key.attnum ORDER BY key.position) AS columns,
            ARRAY(SELECT a.attname::text FROM unnest(k.confkey) WITH ORDINALITY AS key (attnum, position)
                  JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = key.attnum ORDER BY key.position) AS referenced_columns,
            k.confdeltype::text AS on_delete, k.confupdtype::text AS on_update
     FROM pg_constraint k
     JOIN pg_class c ON c.oid = k.conrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     JOIN pg_class r ON r.oid = k.confrelid
     JOIN pg_namespace rn ON rn.oid = r.relnamespace
     WHERE n.nspname = $1 AND k.contype = 'f'
     ORDER BY c.relname, k.conname`,
    [schema],
  );
  return rows;
}

/** Identity columns and columns whose default draws from a sequence (serial). */
async function readSequenceColumns(client: Queryable, schema: string): Promise<SequenceColumnRow[]> {
  const { rows } = await client.query<SequenceColumnRow>(
    `SELECT c.relname::text AS table_name, a.attname::text AS column_name, format_type(a.atttypid, a.atttypmod) AS type
     FROM pg_attribute a
     JOIN pg_class c ON c.oid = a.attrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
       AND (a.attidentity <> '' OR pg_get_expr(d.adbin, d.adrelid) LIKE 'nextval(%')
     ORDER BY c.relname, a.attnum`,
    [schema],
  );
  return rows;
}

test('the migrated schema is distributable by tenant_id with Citus: every table classified, every key of a tenant table includes tenant_id', async (t) => {
  const { client } = await migratedDatabase(t, 'test_citus');
  assert.deepEqual(await distributionProblems(client, DISTRIBUTION_PLAN), []);
});

test('distributionProblems names each thing that would stop Citus, and only those', async (t) => {
  const { client } = await migratedDatabase(t, 'test_citus');
  const scratch = 'citus_check_scratch';
  await client.query(`CREATE SCHEMA ${scratch}`);
  try {
    await expectProblemsFound(client, scratch);
  } finally {
    await client.query(`DROP SCHEMA ${scratch} CASCADE`);
  }
});

async function expectProblemsFound(client: pg.Client, scratch: string): Promise<void> {
  await client.query(`
    SET search_path TO ${scratch};
    CREATE TABLE tenants (id uuid PRIMARY KEY);
    CREATE TABLE settings (name text PRIMARY KEY);
    -- Fine: a tenant table whose keys include tenant_id, referencing the reference table.
    CREATE TABLE orders (
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      id text NOT NULL,
      code text,
      PRIMARY KEY (tenant_id, id),
      UNIQUE (code) INCLUDE (tenant_id)
    );
    CREATE UNIQUE INDEX orders_lower_code ON orders (lower(code));
    CREATE UNIQUE INDEX orders_open_code ON orders (tenant_id, code) WHERE code IS NOT NULL;
    CREATE TABLE order_lines (
      tenant_id uuid NOT NULL,
      order_tenant_id uuid NOT NULL,
      order_id text,
      line bigint GENERATED ALWAYS AS IDENTITY,
      PRIMARY KEY (tenant_id, line),
      FOREIGN KEY (order_tenant_id, order_id) REFERENCES orders (tenant_id, id),
      FOREIGN KEY (tenant_id, order_id) REFERENCES orders (tenant_id, id) ON DELETE SET NULL (order_id)
    );
    CREATE TABLE counters (
      tenant_id uuid NOT NULL,
      id integer GENERATED ALWAYS AS IDENTITY,
      setting text REFERENCES settings (name),
      PRIMARY KEY (tenant_id, id)
    );
    CREATE TABLE notes (tenant_id text, id serial PRIMARY KEY);
    CREATE TABLE heaps (tenant_id uuid NOT NULL, body text);
    CREATE TABLE lookups (name text PRIMARY KEY);
    CREATE TABLE plans (id text PRIMARY KEY, tenant_id uuid, order_id text, FOREIGN KEY (tenant_id, order_id) REFERENCES orders (tenant_id, id));
    CREATE TABLE local_log (id bigint PRIMARY KEY, tenant_id uuid, order_id text, FOREIGN KEY (tenant_id, order_id) REFERENCES orders (tenant_id, id));
    RESET search_path;
  `);
  const plan: DistributionPlan = {
    reference: { tenants: 'the tenants', plans: 'plans', vanished: 'a table dropped since' },
    local: { settings: 'settings', local_log: 'a log', plans: 'named twice' },
  };

  const problems = await distributionProblems(client, plan, scratch);
  const lists = 'DISTRIBUTION_PLAN in test/citus-distribution.test.ts';
  const expected = [
    `plans is named both a reference and a local table in ${lists}: keep one`,
    `vanished is named a reference table in ${lists} but is no table of schema ${scratch}: remove it from the list`,
    // A table without tenant_id that no list names.
    `lookups is not classified: it has no tenant_id column, and ${lists} names it neither a reference nor a local table. ` +
      'Add tenant_id uuid NOT NULL (first in its primary key) to distribute it by tenant, or name it a reference table ' +
      '(small, read across tenants, copied to every node) or a local table (stays on the coordinator), with the reason',
    // tenant_id of the wrong type, nullable; a table without a primary key.
    'notes: tenant_id is text; every tenant table\'s tenant_id is uuid, so that all of them are colocated',
    'notes: tenant_id may be NULL; Citus refuses a row without its distribution column: make it NOT NULL',
    'heaps: no primary key; moving its shards between nodes replicates updates and deletes by it: add one that starts with tenant_id',
    // Unique keys without tenant_id: a primary key, an expression index, and tenant_id only INCLUDEd.
    'notes: primary key notes_pkey (id) does not include tenant_id among its key columns; Citus enforces uniqueness within a shard only: add tenant_id to it',
    'orders: unique constraint orders_code_tenant_id_key (code) INCLUDE (tenant_id) does not include tenant_id among its key columns; Citus enforces uniqueness within a shard only: add tenant_id to it',
    'orders: unique index orders_lower_code (lower(code)) does not include tenant_id among its key columns; Citus enforces uniqueness within a shard only: add tenant_id to it',
    // A foreign key between tenant tables that carries the referenced tenant_id in another column, and one that sets part of it NULL.
    'order_lines: foreign key order_lines_order_tenant_id_order_id_fkey to orders does not pair tenant_id with tenant_id; Citus enforces a foreign key between distributed tables within a shard only: make it (tenant_id, …) REFERENCES orders (tenant_id, …)',
    'order_lines: foreign key order_lines_tenant_id_order_id_fkey to orders: Citus refuses ON DELETE SET NULL on a foreign key that includes the distribution column: use ON DELETE CASCADE, RESTRICT or NO ACTION and never change tenant_id',
    // A tenant table referencing a local table; a reference table and a local table referencing a tenant table.
    'counters: foreign key counters_setting_fkey to settings: a distributed table may reference only distributed and reference tables, and settings is a local table',
    'plans: foreign key plans_tenant_id_order_id_fkey to orders: a reference table (copied to every node) may reference only reference tables, and orders is a tenant table',
    'local_log: foreign key local_log_tenant_id_order_id_fkey to orders: a table that stays on the coordinator cannot reference a distributed table',
    // Sequence-backed columns narrower than bigint.
    'counters: column id takes its values from a sequence but is integer; Citus gives each node its own range of a bigint sequence and refuses smaller identity columns: make it bigint',
    'notes: column id takes its values from a sequence but is integer; Citus gives each node its own range of a bigint sequence and refuses smaller identity columns: make it bigint',
  ];
  assert.deepEqual([...problems].sort(), [...expected].sort());
}
