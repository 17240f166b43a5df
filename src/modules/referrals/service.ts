import { randomInt } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import type { Database, Tx } from '../../platform/db.js';
import type { Authenticator } from '../../platform/auth.js';
import { clock } from '../../platform/clock.js';
import { emit } from '../../platform/outbox.js';
import { runFactHandlers } from '../../platform/facts.js';
import { AppError, conflict, invalid, notFound, ruleViolation } from '../../platform/errors.js';
import { sha256Hex, uuid } from '../../platform/ids.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { ensureParticipant, participantExists } from '../participants/index.js';
import { awardBadgeInTx, checkBadgesExistInTx, grantPointsInTx } from '../challenges/index.js';
import * as store from './store.js';
import {
  CODE_ALPHABET,
  CODE_LENGTH,
  CODE_PATTERN,
  DEFAULT_VELOCITY_PER_DAY,
  DEFAULT_VELOCITY_PER_HOUR,
  type ConvertBody,
  type GenerateBody,
  type SettingsBody,
} from './schemas.js';

/**
 * Referrals: a code per participant and campaign, public validation and
 * conversion with self-referral, repeat and fraud checks, an admin review
 * of held conversions, and milestones for referrers.
 */
const CODE_ATTEMPTS_MAX = 5;
const HOUR_MS = 3600_000;

const DEFAULT_SETTINGS: store.SettingsRow = {
  velocity_per_hour: DEFAULT_VELOCITY_PER_HOUR,
  velocity_per_day: DEFAULT_VELOCITY_PER_DAY,
  review_same_device: true,
  review_same_ip: true,
  milestones: [],
};

const hashEmail = (email: string | undefined) => (email ? sha256Hex(`email:${email.trim().toLowerCase()}`) : null);
const hashDevice = (device: string | undefined) => (device ? sha256Hex(`device:${device}`) : null);
/** One spelling per address (IPv6 has many), as PostgreSQL's host() prints it. */
const normaliseIp = (ip: string | undefined) => (ip ? ipaddr.process(ip).toString() : null);

function newCode(): string {
  let code = '';
  for (let i = 0; i < CODE_LENGTH; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

function referralUrl(baseUrl: string | null, code: string): string {
  return `${(baseUrl ?? '').replace(/\/$/, '')}/api/v1/referrals/validate/${code}`;
}

/** Codes are case-insensitive for people typing them; stored upper-case. */
function normaliseCode(raw: string): string {
  const code = raw.trim().toUpperCase();
  if (!CODE_PATTERN.test(code)) {
    throw new AppError('invalid', 'REFERRAL_CODE_MALFORMED', `"${raw}" is not a referral code (${CODE_LENGTH} letters and digits)`, { valid: false });
  }
  return code;
}

export async function generate(db: Database, tenantId: string, body: GenerateBody, baseUrl: string | null) {
  const emailHash = hashEmail(body.email);
  const deviceHash = hashDevice(body.device_id);
  const ip = normaliseIp(body.ip_address);
  for (let attempt = 1; attempt <= CODE_ATTEMPTS_MAX; attempt++) {
    const code = newCode();
    // A code must name one tenant only, because the public routes find the tenant from it.
    if ((await store.codeTenants(db.app, code)).length > 0) continue;
    const result = await db.tenant(tenantId, async (tx) => {
      await ensureParticipant(tx, tenantId, body.participant_id);
      const found = await store.insertOrFindCode(tx, tenantId, { code, participantId: body.participant_id, campaignId: body.campaign_id, emailHash, deviceHash, ip, now: clock.now() });
      if (found.row && !found.created) await store.fillCodeSignals(tx, tenantId, found.row.code, emailHash, deviceHash, ip);
      return found;
    });
    if (!result.row) continue; // the random code collided within the tenant: draw again
    return {
      code: result.row.code,
      referral_url: referralUrl(baseUrl, result.row.code),
      participant_id: result.row.participant_id,
      campaign_id: result.row.campaign_id,
      created_at: result.row.created_at.toISOString(),
      created: result.created,
    };
  }
  throw new AppError('unavailable', 'REFERRAL_CODE_EXHAUSTED', 'no free referral code was found; try again');
}

async function tenantOfCode(db: Database, code: string): Promise<string> {
  const tenants = await store.codeTenants(db.app, code);
  if (tenants.length !== 1) throw new AppError('not_found', 'REFERRAL_CODE_NOT_FOUND', `the referral code ${code} does not exist`, { valid: false });
  return tenants[0];
}

export async function validate(db: Database, rawCode: string) {
  const code = normaliseCode(rawCode);
  const tenantId = await tenantOfCode(db, code);
  return db.tenant(tenantId, async (tx) => {
    const row = await store.findCode(tx, tenantId, code);
    if (!row) throw new AppError('not_found', 'REFERRAL_CODE_NOT_FOUND', `the referral code ${code} does not exist`, { valid: false });
    return { valid: true as const, code, referrer_id: row.participant_id, campaign_id: row.campaign_id };
  });
}

type Signal = { signal: string; observed: unknown; threshold: unknown };

function reviewSignals(
  settings: store.SettingsRow,
  referrer: store.CodeRow,
  referred: { deviceHash: string | null; ip: string | null },
  recent: { last_hour: number; last_day: number },
): Signal[] {
  const signals: Signal[] = [];
  if (settings.review_same_device && referred.deviceHash && referrer.device_hash === referred.deviceHash) {
    signals.push({ signal: 'same_device', observed: true, threshold: true });
  }
  if (settings.review_same_ip && referred.ip && referrer.ip_address === referred.ip) signals.push({ signal: 'same_ip', observed: referred.ip, threshold: true });
  if (recent.last_hour + 1 > settings.velocity_per_hour) {
    signals.push({ signal: 'velocity_per_hour', observed: recent.last_hour + 1, threshold: settings.velocity_per_hour });
  }
  if (recent.last_day + 1 > settings.velocity_per_day) {
    signals.push({ signal: 'velocity_per_day', observed: recent.last_day + 1, threshold: settings.velocity_per_day });
  }
  return signals;
}

/** The referred participant: named by a session of the tenant, or passed by the caller (both must agree). */
async function referredParticipant(authenticator: Authenticator, tenantId: string, body: ConvertBody): Promise<string | null> {
  if (!body.referred_session_id.startsWith('ses_')) return body.referred_participant_id ?? null;
  const auth = await authenticator.fromSession(body.referred_session_id, undefined).catch(() => null);
  if (!auth || auth.tenantId !== tenantId) return body.referred_participant_id ?? null;
  if (body.referred_participant_id !== undefined && body.referred_participant_id !== auth.participantId) {
    throw invalid('referred_participant_id names another participant than referred_session_id');
  }
  return auth.participantId ?? null;
}

export async function convert(db: Database, authenticator: Authenticator, body: ConvertBody) {
  const code = normaliseCode(body.code);
  const tenantId = await tenantOfCode(db, code);
  const participantId = await referredParticipant(authenticator, tenantId, body);
  const emailHash = hashEmail(body.email);
  const deviceHash = hashDevice(body.device_id);
  const ip = normaliseIp(body.ip_address);
  try {
    return await db.tenant(tenantId, async (tx) => {
      const now = clock.now();
      // Locking the code serialises one referrer's conversions, so the velocity count is exact.
      const referrer = await store.findCode(tx, tenantId, code, true);
      if (!referrer) throw new AppError('not_found', 'REFERRAL_CODE_NOT_FOUND', `the referral code ${code} does not exist`, { valid: false });
      if (participantId !== null && participantId === referrer.participant_id) {
        throw ruleViolation('a participant cannot convert their own referral code', 'SELF_REFERRAL');
      }
      if (emailHash && referrer.email_hash === emailHash) throw ruleViolation('the referred email is the referrer\'s own email', 'SELF_REFERRAL');
      const earlier = await store.earlierConversion(tx, tenantId, body.referred_session_id, participantId, emailHash);
      if (earlier) {
        const what = { session: 'this referred session', participant: 'this referred participant', email: 'this referred email' }[earlier];
        throw conflict(`${what} has already converted a referral; one conversion per referred person`, 'REFERRAL_ALREADY_CONVERTED');
      }
      const settings = (await store.readSettings(tx, tenantId)) ?? DEFAULT_SETTINGS;
      const recent = await store.recentConversions(tx, tenantId, referrer.participant_id, new Date(now.getTime() - HOUR_MS), new Date(now.getTime() - 24 * HOUR_MS));
      const signals = reviewSignals(settings, referrer, { deviceHash, ip }, recent);
      const status = signals.length > 0 ? 'pending_review' : 'converted';
      const conversionId = uuid();
      if (participantId !== null) await ensureParticipant(tx, tenantId, participantId);
      await store.insertConversion(tx, tenantId, {
        id: conversionId,
        code,
        referrerId: referrer.participant_id,
        campaignId: referrer.campaign_id,
        sessionId: body.referred_session_id,
        participantId,
        emailHash,
        deviceHash,
        ip,
        status,
        signals,
        now,
      });
      if (status === 'converted') {
        await countConversionInTx(tx, tenantId, settings, { conversionId, code, referrerId: referrer.participant_id, campaignId: referrer.campaign_id, sessionId: body.referred_session_id });
      }
      return { converted: status === 'converted', status, referrer_id: referrer.participant_id, conversion_id: conversionId } as const;
    });
  } catch (error) {
    // Two conversions of one referred session (or person) racing: the unique indexes keep one.
    if ((error as { code?: string }).code === '23505') {
      throw conflict('this referred session or person has already converted a referral; one conversion per referred person', 'REFERRAL_ALREADY_CONVERTED');
    }
    throw error;
  }
}

/**
 * What a counted conversion causes, in its transaction: the event, the
 * referrer's milestones (badges, points), and a `referral_converted` fact
 * for the referrer so challenges and contests can count conversions.
 */
async function countConversionInTx(
  tx: Tx,
  tenantId: string,
  settings: store.SettingsRow,
  c: { conversionId: string; code: string; referrerId: string; campaignId: string; sessionId: string },
): Promise<void> {
  const now = clock.now();
  await emit(tx, tenantId, {
    event: 'referral.converted.v1',
    participantId: c.referrerId,
    data: { participant_id: c.referrerId, referrer_id: c.referrerId, conversion_id: c.conversionId, code: c.code, referred_session_id: c.sessionId, campaign_id: c.campaignId },
  });
  const converted = await store.countConverted(tx, tenantId, c.referrerId);
  const due = settings.milestones.filter((m) => m.conversions <= converted);
  const granted = await store.claimMilestones(tx, tenantId, c.referrerId, [...new Set(due.map((m) => m.conversions))], c.conversionId, now);
  for (const milestone of due.filter((m) => granted.has(m.conversions))) {
    const source = { kind: 'referral' as const, id: c.conversionId };
    if (milestone.points) {
      await grantPointsInTx(tx, tenantId, { participantId: c.referrerId, amount: milestone.points, reason: `referral milestone: ${milestone.conversions} conversions`, type: 'bonus', source });
    }
    if (milestone.badge_code) await awardBadgeInTx(tx, tenantId, { participantId: c.referrerId, badgeCode: milestone.badge_code, source });
  }
  await runFactHandlers(tx, tenantId, {
    id: `ref_${c.conversionId}`,
    name: 'referral_converted',
    participantId: c.referrerId,
    engagementId: null,
    properties: { code: c.code, campaign_id: c.campaignId, conversion_id: c.conversionId, conversions: converted },
    occurredAt: now,
    source: 'custom',
    evaluateChallenges: true,
  });
}

function presentConversion(row: Record<string, any>) {
  return {
    ...row,
    created_at: row.created_at.toISOString(),
    decided_at: row.decided_at?.toISOString() ?? null,
  } as never;
}

export async function decide(db: Database, tenantId: string, id: string, decision: 'approve' | 'reject', actor: string, note: string | null) {
  return db.tenant(tenantId, async (tx) => {
    const row = await store.findConversion(tx, tenantId, id, true);
    if (!row) throw notFound('conversion');
    if (row.status !== 'pending_review') throw ruleViolation(`only a conversion pending review can be decided; this one is ${row.status}`, 'CONVERSION_NOT_PENDING');
    const status = decision === 'approve' ? 'converted' : 'rejected';
    await store.decideConversion(tx, tenantId, id, status, `admin:${actor}`, note, clock.now());
    if (status === 'converted') {
      const settings = (await store.readSettings(tx, tenantId)) ?? DEFAULT_SETTINGS;
      await countConversionInTx(tx, tenantId, settings, { conversionId: id, code: row.code, referrerId: row.referrer_id, campaignId: row.campaign_id, sessionId: row.referred_session_id });
    }
    return presentConversion(await store.findConversion(tx, tenantId, id));
  });
}

export async function listConversions(db: Database, tenantId: string, query: { status?: string; limit: number; cursor?: string }) {
  const after = decodeCursor(query.cursor, { created_at: 'timestamp', id: 'uuid' });
  return db.tenant(tenantId, async (tx) => {
    const rows = await store.listConversions(tx, tenantId, { status: query.status, after, limit: query.limit + 1 });
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    return {
      conversions: page.map(presentConversion),
      next_cursor: rows.length > query.limit && last ? encodeCursor({ created_at: last.created_at.toISOString(), id: last.conversion_id }) : null,
    };
  });
}

export async function readSettings(db: Database, tenantId: string) {
  return db.tenant(tenantId, async (tx) => (await store.readSettings(tx, tenantId)) ?? DEFAULT_SETTINGS);
}

export async function writeSettings(db: Database, tenantId: string, body: SettingsBody) {
  for (const m of body.milestones ?? []) {
    if (!m.badge_code && !m.points) throw invalid(`the milestone at ${m.conversions} conversions gives nothing: set badge_code, points or both`);
  }
  return db.tenant(tenantId, async (tx) => {
    await checkBadgesExistInTx(tx, tenantId, (body.milestones ?? []).map((m) => m.badge_code));
    const current = (await store.readSettings(tx, tenantId)) ?? DEFAULT_SETTINGS;
    const next: store.SettingsRow = {
      velocity_per_hour: body.velocity_per_hour ?? current.velocity_per_hour,
      velocity_per_day: body.velocity_per_day ?? current.velocity_per_day,
      review_same_device: body.review_same_device ?? current.review_same_device,
      review_same_ip: body.review_same_ip ?? current.review_same_ip,
      milestones: body.milestones ?? current.milestones,
    };
    await store.writeSettings(tx, tenantId, next, clock.now());
    return next;
  });
}

export async function statsInTx(tx: Tx, tenantId: string, participantId: string, baseUrl: string | null) {
  const { counts, codes } = await store.stats(tx, tenantId, participantId);
  return {
    participant_id: participantId,
    total_referrals: counts.total,
    conversions: counts.converted,
    pending: counts.pending,
    rejected: counts.rejected,
    referral_code: codes[0]?.code ?? null,
    codes: codes.map((c) => ({ code: c.code, campaign_id: c.campaign_id, referral_url: referralUrl(baseUrl, c.code), created_at: c.created_at.toISOString() })),
  };
}

export async function stats(db: Database, tenantId: string, participantId: string, baseUrl: string | null) {
  return db.tenant(tenantId, async (tx) => {
    if (!(await participantExists(tx, tenantId, participantId))) throw notFound('participant');
    return statsInTx(tx, tenantId, participantId, baseUrl);
  });
}
