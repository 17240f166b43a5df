import type { Statement, Tx } from '../../platform/db.js';
import { notFound, ruleViolation } from '../../platform/errors.js';
import { isTestParticipantInTx } from '../participants/index.js';
import type { Activity, EngagementDefinition } from './schemas.js';
import * as store from './store.js';
import { assertMemberInTx } from '../segments/index.js';
import { assertSessionVariantInTx } from './experiment-sessions.js';

/**
 * What a participant session runs, for the runtime modules (activities,
 * gates): the published snapshot of the session's engagement, or, for a
 * preview session (preview.ts), the draft. An activity of another engagement
 * or tenant is simply not found here, because every lookup is keyed by the
 * session's tenant and engagement.
 */

export interface PublishedActivity {
  engagementId: string;
  activityId: string;
  type: 'spin_wheel' | 'quiz';
  config: Activity;
  /** True for a preview of the draft: the completion awards nothing real. */
  preview: boolean;
}

/** Every test participant of an engagement's previews has an id that starts with this. */
export function previewPrefix(engagementId: string): string {
  return `preview_${engagementId.replace(/-/g, '')}_`;
}

/**
 * Whether a session's participant previews the session's engagement: its id names the engagement and it
 * is flagged `test`. Real traffic pays one string comparison (a tenant may name a participant
 * `preview_…`, but cannot flag it `test`).
 */
export async function isPreviewInTx(tx: Tx, tenantId: string, engagementId: string, participantId: string | undefined): Promise<boolean> {
  if (!participantId?.startsWith(previewPrefix(engagementId))) return false;
  return isTestParticipantInTx(tx, tenantId, participantId);
}

const draftRefusal = () => ruleViolation('the engagement is a draft; its activities run only once it is published', 'ENGAGEMENT_NOT_PUBLISHED');

/**
 * The statement that reads a published activity, for a caller that sends it
 * with its transaction's BEGIN (`db.tenantFramedBy`) and hands its rows to
 * `findPublishedActivityInTx` (`lookupRows`): one round trip fewer.
 */
export function publishedActivityStatement(tenantId: string, engagementId: string, activityId: string): Statement {
  return store.findActivityStatement(tenantId, engagementId, activityId);
}

/** The activity a session runs (published, or the draft's for a preview session); `lookupRows`: what `publishedActivityStatement` answered in this transaction. */
export async function findPublishedActivityInTx(
  tx: Tx,
  tenantId: string,
  engagementId: string,
  activityId: string,
  participantId?: string,
  lookupRows?: readonly unknown[],
): Promise<PublishedActivity> {
  if (await isPreviewInTx(tx, tenantId, engagementId, participantId)) {
    const row = await store.findEngagement(tx, tenantId, engagementId);
    if (!row) throw notFound('engagement', 'ENGAGEMENT_NOT_FOUND');
    const activity = row.definition.activities.find((a) => a.id === activityId);
    if (!activity) throw notFound(`activity ${JSON.stringify(activityId)} in this engagement`, 'ACTIVITY_NOT_FOUND');
    return { engagementId, activityId: activity.id, type: activity.type, config: activity, preview: true };
  }
  const found = lookupRows ? store.activityLookupOf(lookupRows) : await store.findActivity(tx, tenantId, engagementId, activityId);
  if (!found.engagementFound) throw notFound('engagement', 'ENGAGEMENT_NOT_FOUND');
  if (!found.published) throw draftRefusal();
  if (!found.activity) throw notFound(`activity ${JSON.stringify(activityId)} in this engagement`, 'ACTIVITY_NOT_FOUND');
  const activitySegmentId = (found.activity.config as { segment_id?: string | null }).segment_id ?? null;
  // Segments (targeting.ts): checked at every attempt, so a participant who left the segment since the session was issued is refused.
  if (participantId !== undefined) {
    await assertMemberInTx(tx, tenantId, participantId, [
      { segmentId: found.segmentId, what: 'this engagement' },
      { segmentId: activitySegmentId, what: `the activity ${JSON.stringify(activityId)}` },
    ]);
  }
  const activity: PublishedActivity = {
    engagementId,
    activityId: found.activity.activity_id,
    type: found.activity.activity_type as PublishedActivity['type'],
    config: found.activity.config as unknown as Activity,
    preview: false,
  };
  // Only an activity for everyone: knowing it lets a batch skip nothing but the read (no membership to check).
  if (lookupRows && found.segmentId === null && activitySegmentId === null) rememberActivity(tenantId, engagementId, activityId, lookupRows[0], activity);
  return activity;
}

/**
 * The published activities this process has read with a transaction's BEGIN
 * (`publishedActivityStatement`), each with its row as JSON, by tenant,
 * engagement and activity; only those for everyone (no segment). Emptied when
 * full. A wheel's definition changes seldom and a crowd's batches all read it:
 * a batch starts its takes on the one known here, in the message that reads
 * it again, and goes on only if the row read is the row known
 * (`knownPublishedActivity`).
 */
const knownActivities = new Map<string, { row: string; activity: PublishedActivity }>();
const KNOWN_ACTIVITIES_MAX = 1_000;

const knownKey = (tenantId: string, engagementId: string, activityId: string) => `${tenantId}\u0000${engagementId}\u0000${activityId}`;

function rememberActivity(tenantId: string, engagementId: string, activityId: string, row: unknown, activity: PublishedActivity): void {
  const key = knownKey(tenantId, engagementId, activityId);
  const json = JSON.stringify(row);
  if (knownActivities.get(key)?.row === json) return;
  if (knownActivities.size >= KNOWN_ACTIVITIES_MAX) knownActivities.clear();
  knownActivities.set(key, { row: json, activity });
}

export interface KnownActivity {
  activity: PublishedActivity;
  /** Whether the rows of `publishedActivityStatement`, read again, are those the activity was made from; forgets it if not. */
  confirmedBy(lookupRows: readonly unknown[]): boolean;
  /** Forgets the activity (a batch started on it failed): the next batch reads it first. */
  forget(): void;
}

/**
 * The published activity, for everyone, that this process last read for
 * these participants' sessions, and the check that the row read again in the
 * caller's transaction is still the row it was made from (false: the caller
 * rolls back, and the activity is forgotten). Null when it is not known, or
 * when a participant may be a preview's (the draft runs then).
 */
export function knownPublishedActivity(
  tenantId: string,
  engagementId: string,
  activityId: string,
  participantIds: readonly string[],
): KnownActivity | null {
  const key = knownKey(tenantId, engagementId, activityId);
  const known = knownActivities.get(key);
  if (!known) return null;
  const prefix = previewPrefix(engagementId);
  if (participantIds.some((id) => id.startsWith(prefix))) return null;
  const forget = () => {
    if (knownActivities.get(key) === known) knownActivities.delete(key);
  };
  return {
    activity: known.activity,
    confirmedBy(lookupRows) {
      if (lookupRows.length === 1 && JSON.stringify(lookupRows[0]) === known.row) return true;
      forget();
      return false;
    },
    forget,
  };
}

/** The definition a session runs (screens and activities for gates): published, or the draft for a preview session. */
export async function publishedDefinitionInTx(tx: Tx, tenantId: string, engagementId: string, participantId?: string): Promise<EngagementDefinition> {
  const row = await store.findEngagement(tx, tenantId, engagementId);
  if (!row) throw notFound('engagement', 'ENGAGEMENT_NOT_FOUND');
  if (await isPreviewInTx(tx, tenantId, engagementId, participantId)) return row.definition;
  if (row.status !== 'published') throw ruleViolation('the engagement is a draft', 'ENGAGEMENT_NOT_PUBLISHED');
  return row.published_definition!;
}

/**
 * `POST /sessions` (access module, through platform/engagements.ts), after the participant exists, in
 * the session's transaction: a participant outside the engagement's segment gets no session. The
 * published snapshot's segment applies to a published engagement, the draft's to a draft (whose
 * sessions serve previews and tests); a preview's test participant is let through.
 */
export async function checkSessionInTx(tx: Tx, tenantId: string, engagementId: string, participantId: string): Promise<void> {
  // A variant of a running experiment gives sessions to its variant's participants only (issue 36).
  await assertSessionVariantInTx(tx, tenantId, engagementId, participantId, () => isPreviewInTx(tx, tenantId, engagementId, participantId));
  const segmentId = await store.sessionSegment(tx, tenantId, engagementId);
  if (!segmentId) return;
  if (await isPreviewInTx(tx, tenantId, engagementId, participantId)) return;
  await assertMemberInTx(tx, tenantId, participantId, [{ segmentId, what: 'this engagement' }]);
}
