import mailchecker from 'mailchecker';
import type { Database, Tx } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { forbidden, notFound, ruleViolation } from '../../platform/errors.js';
import { prefixedId } from '../../platform/ids.js';
import { ensureParticipant } from '../participants/index.js';
import * as store from './store.js';
import type { ContestRow } from './store.js';
import type { EnterBody, ServerEnterBody, FraudRules } from './schemas.js';
import { entryView, iso, rankOf } from './views.js';
import { visibleContest } from './participant-reads.js';

/**
 * Entries: a participant or the tenant's server enters a contest, past the
 * entry-time fraud controls; the entry as its participant and as
 * administrators see it, and the participant state's `contests` part.
 */

export const STATUS_HISTORY_MAX = 200;
export const STATE_PART_ENTRIES_MAX = 50;

interface EntryInput {
  participantId: string;
  displayName: string | null;
  email: string | null;
  paymentMethod: string | null;
  deviceFingerprint: string | null;
  publishConsent: boolean | null;
  actor: string;
}

export function isDisposableEmail(email: string): boolean {
  const domain = email.split('@').pop()?.toLowerCase() ?? '';
  const blacklist = mailchecker.blacklist();
  const labels = domain.split('.');
  for (let i = 0; i < labels.length - 1; i++) {
    if (blacklist.has(labels.slice(i).join('.'))) return true;
  }
  return false;
}

/** The entry-time fraud controls: each configured block refuses the entry with a 422 that names it. */
async function checkEntrySignals(tx: Tx, tenantId: string, contest: ContestRow, input: EntryInput): Promise<void> {
  const rules = contest.fraud_rules as FraudRules;
  if (rules.block_disposable_emails && input.email && isDisposableEmail(input.email)) {
    throw ruleViolation('the email address belongs to a disposable email provider, which this contest does not accept', 'CONTEST_DISPOSABLE_EMAIL');
  }
  if (rules.block_repeat_payment_methods && input.paymentMethod) {
    const shared = await store.countSharedSignal(tx, tenantId, contest.id, input.participantId, 'payment_method', input.paymentMethod);
    if (shared > 0) throw ruleViolation('this payment method is already used by another entry of the contest', 'CONTEST_REPEAT_PAYMENT_METHOD');
  }
  if (rules.block_repeat_devices && input.deviceFingerprint) {
    const shared = await store.countSharedSignal(tx, tenantId, contest.id, input.participantId, 'device_fingerprint', input.deviceFingerprint);
    if (shared > 0) throw ruleViolation('this device is already used by another entry of the contest', 'CONTEST_REPEAT_DEVICE');
  }
}

async function enterInTx(tx: Tx, tenantId: string, contestId: string, input: EntryInput) {
  const contest = await visibleContest(tx, tenantId, contestId);
  const existing = await store.readEntry(tx, tenantId, contestId, input.participantId);
  if (!existing && contest.status !== 'scheduled' && contest.status !== 'active') {
    throw ruleViolation(`the contest is ${contest.status}; entries are accepted while it is scheduled or active`, 'CONTEST_NOT_OPEN');
  }
  // The lifecycle job closes a contest within a tick of ends_at; the window itself decides at once.
  if (!existing && clock.nowMs(tenantId) >= new Date(contest.ends_at).getTime()) {
    throw ruleViolation(`the contest ended at ${iso(contest.ends_at)}; entries are no longer accepted`, 'CONTEST_NOT_OPEN');
  }
  if (existing && contest.status !== 'scheduled' && contest.status !== 'active') {
    return { entry: entryView(existing, await rankOf(tx, tenantId, contest, existing)), created: false };
  }
  await checkEntrySignals(tx, tenantId, contest, input);
  await ensureParticipant(tx, tenantId, input.participantId, input.displayName);
  const { entry, created } = await store.insertEntry(tx, tenantId, {
    contestId,
    participantId: input.participantId,
    entryId: prefixedId('ent', 12),
    displayName: input.displayName,
    email: input.email,
    paymentMethod: input.paymentMethod,
    deviceFingerprint: input.deviceFingerprint,
    publishConsent: input.publishConsent,
    now: clock.now(tenantId),
    actor: input.actor,
  });
  return { entry: entryView(entry, await rankOf(tx, tenantId, contest, entry)), created };
}

/** A participant enters through its own session; it cannot name another participant. */
export async function enterAsParticipant(db: Database, tenantId: string, sessionParticipantId: string, sessionId: string, contestId: string, body: EnterBody) {
  if (body.participant_id !== undefined && body.participant_id !== sessionParticipantId) {
    throw forbidden('participant_id must be the session\'s own participant; a session cannot enter someone else');
  }
  return db.tenant(tenantId, (tx) =>
    enterInTx(tx, tenantId, contestId, {
      participantId: sessionParticipantId,
      displayName: body.display_name ?? null,
      email: null,
      paymentMethod: null,
      deviceFingerprint: body.device_fingerprint ?? null,
      publishConsent: body.publish_consent ?? null,
      actor: `session:${sessionId}`,
    }),
  );
}

/** The tenant's server enters a participant (API key), and may attach the verification signals it knows. */
export async function enterByServer(db: Database, tenantId: string, actorId: string, contestId: string, body: ServerEnterBody) {
  return db.tenant(tenantId, (tx) =>
    enterInTx(tx, tenantId, contestId, {
      participantId: body.participant_id,
      displayName: body.display_name ?? null,
      email: body.email ?? null,
      paymentMethod: body.payment_method ?? null,
      deviceFingerprint: body.device_fingerprint ?? null,
      publishConsent: body.publish_consent ?? null,
      actor: `key:${actorId}`,
    }),
  );
}

export async function me(db: Database, tenantId: string, contestId: string, participantId: string) {
  return db.tenant(tenantId, async (tx) => {
    const contest = await visibleContest(tx, tenantId, contestId);
    const entry = await store.readEntry(tx, tenantId, contestId, participantId);
    if (!entry) throw notFound(`an entry of this participant in contest "${contestId}"`);
    return entryView(entry, await rankOf(tx, tenantId, contest, entry));
  });
}

export async function entryAdminView(db: Database, tenantId: string, contestId: string, participantId: string) {
  return db.tenant(tenantId, async (tx) => {
    const contest = await store.readContest(tx, tenantId, contestId);
    if (!contest) throw notFound(`contest "${contestId}"`);
    const entry = await store.readEntry(tx, tenantId, contestId, participantId);
    if (!entry) throw notFound(`an entry of participant "${participantId}" in contest "${contestId}"`);
    const history = await store.statusHistory(tx, tenantId, contestId, participantId, STATUS_HISTORY_MAX);
    const prize = await store.readAllocation(tx, tenantId, contestId, participantId);
    return {
      entry: entryView(entry, await rankOf(tx, tenantId, contest, entry)),
      signals: { email: entry.email, payment_method: entry.payment_method, device_fingerprint: entry.device_fingerprint, publish_consent: entry.publish_consent },
      status_history: history.map((h) => ({ ...h, from_status: h.from_status as never, to_status: h.to_status as never, changed_at: iso(h.changed_at)! })),
      prize: prize
        ? {
            rank: prize.rank,
            reward_type: prize.reward_type as never,
            reward_value: Number(prize.reward_value),
            reward_name: prize.reward_name,
            status: prize.status,
            prize_code: prize.prize_code,
            issued_at: iso(prize.issued_at),
          }
        : null,
    };
  });
}

/** The `contests` part of the participant state read: the participant's latest entries. */
export async function statePart(tx: Tx, tenantId: string, participantId: string) {
  const entries = await store.entriesOfParticipant(tx, tenantId, participantId, STATE_PART_ENTRIES_MAX);
  return { entries: entries.map((e) => entryView(e, e.status === 'disqualified' ? null : (e.final_rank ?? e.rank))) };
}
