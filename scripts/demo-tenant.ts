import { hash as argonHash } from '@node-rs/argon2';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../src/platform/db.js';
import { randomToken } from '../src/platform/ids.js';
import { createTenant } from '../src/modules/access/index.js';
import { seedDemo, type ApiCall } from './demo-seed.js';
import { seedConsoleDemo } from './demo-console-seed.js';

/**
 * The demo tenant: created on the first run, refreshed on the next ones.
 * Refreshing gives the owner a new password (the old one was printed once and
 * is not stored in plaintext) and adds whatever part of the demo content is
 * missing; nothing is created twice. The content goes through the service's own
 * routes in-process (`app.inject`) with the owner's console sign-in, so it
 * passes the same validation and role checks as anyone's. It is a sandbox
 * tenant: its webhook destination may point at this machine, and its test
 * controls (short webhook backoff) work.
 */
export const DEMO_SLUG = 'demo';
const ENGAGEMENT_NAME = 'Spring Rewards';

export interface DemoTenant {
  tenantId: string;
  slug: string;
  name: string;
  created: boolean;
  ownerEmail: string;
  ownerPassword: string;
  engagementId: string;
  siteSlug: string;
}

async function ensureOwner(db: Database, slug: string): Promise<{ tenantId: string; name: string; created: boolean; email: string; password: string }> {
  const { rows } = await db.system.query<{ id: string; name: string }>('SELECT id, name FROM tenants WHERE slug = $1', [slug]);
  if (!rows[0]) {
    const tenant = await createTenant(db, { name: 'Demo Shop', slug, plan: 'enterprise', adminEmail: `owner@${slug}.example`, timezone: 'Europe/Paris', requestsPerMinute: null, environment: 'sandbox' });
    return { tenantId: tenant.tenant_id, name: tenant.name, created: true, email: tenant.admin_email, password: tenant.admin_password };
  }
  const password = randomToken(18);
  const owner = await db.system.query<{ email: string }>(
    `UPDATE admin_users SET password_hash = $2, status = 'active', role = 'owner'
      WHERE id = (SELECT id FROM admin_users WHERE tenant_id = $1 ORDER BY (role = 'owner') DESC, created_at, id LIMIT 1)
      RETURNING email`,
    [rows[0].id, await argonHash(password)],
  );
  if (!owner.rows[0]) throw new Error(`the tenant "${slug}" has no admin user to sign in as`);
  return { tenantId: rows[0].id, name: rows[0].name, created: false, email: owner.rows[0].email, password };
}

/** Creates or refreshes the demo tenant `slug` and its content. */
export async function ensureDemoTenant(db: Database, app: FastifyInstance, slug = DEMO_SLUG): Promise<DemoTenant> {
  const owner = await ensureOwner(db, slug);
  const signIn = await app.inject({ method: 'POST', url: '/api/v1/console/session', payload: { email: owner.email, password: owner.password } });
  if (signIn.statusCode !== 200) throw new Error(`the demo owner could not sign in: ${signIn.statusCode} ${signIn.body}`);
  const cookie = signIn.cookies.find((c) => c.name === 'lk_console');
  if (!cookie) throw new Error('the console sign-in set no cookie');
  const csrf = (signIn.json() as { csrf_token: string }).csrf_token;
  const call: ApiCall = async (method, url, body) => {
    const response = await app.inject({
      method: method as 'GET',
      url,
      headers: { cookie: `lk_console=${cookie.value}`, 'x-csrf-token': csrf, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    return { status: response.statusCode, body: response.body ? JSON.parse(response.body) : null, text: response.body };
  };
  try {
    const engagements = await call('GET', '/api/v1/admin/engagements?limit=100');
    if (engagements.status !== 200) throw new Error(`GET /admin/engagements answered ${engagements.status}: ${engagements.text}`);
    let engagement = (engagements.body.engagements as Array<{ id: string; name: string; site_slug: string }>).find((e) => e.name === ENGAGEMENT_NAME);
    if (!engagement) {
      const seed = await seedDemo(call);
      engagement = { id: seed.engagementId, name: ENGAGEMENT_NAME, site_slug: seed.siteSlug };
    }
    await seedConsoleDemo(call);
    return {
      tenantId: owner.tenantId,
      slug,
      name: owner.name,
      created: owner.created,
      ownerEmail: owner.email,
      ownerPassword: owner.password,
      engagementId: engagement.id,
      siteSlug: engagement.site_slug,
    };
  } finally {
    await call('DELETE', '/api/v1/console/session');
  }
}
