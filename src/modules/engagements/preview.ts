import type { Database } from '../../platform/db.js';
import { AppError, notFound } from '../../platform/errors.js';
import { randomToken } from '../../platform/ids.js';
import { announceCredentialChange } from '../../platform/auth.js';
import { createTestParticipantInTx, deleteTestParticipantsInTx } from '../participants/index.js';
import * as store from './store.js';
import { redact } from './service.js';
import { isPreviewInTx, previewPrefix } from './session-definition.js';

/**
 * Previews of a draft (docs/decisions.md, "Engagement previews"): the console
 * runs any version of an engagement, published or not, without publishing it,
 * for a test participant. The participant is flagged `test` (lists and exports
 * leave it out), its id names the engagement (`preview_<engagement>_<random>`),
 * and its session is the preview token: scoped to this engagement of this
 * tenant like every session. For such a session the activities and gates run
 * the draft, and a completion awards nothing real (src/modules/activities).
 */

/** A preview session lives two hours: long enough to try a draft, short enough to leave nothing lying about. */
export const PREVIEW_TTL_SECONDS = 2 * 3600;

type CreateSession = (
  db: Database,
  tenantId: string,
  input: { participant_id: string; engagement_id: string; display_name?: string; ttl_seconds?: number },
  ttl: number,
) => Promise<{ session_id: string; participant_id: string; engagement_id: string; expires_at: string }>;

/** Starts a preview: the engagement's earlier test participants go (a preview starts clean), a new one gets a session. */
export async function startPreview(db: Database, tenantId: string, engagementId: string, createSession: CreateSession) {
  const participantId = `${previewPrefix(engagementId)}${randomToken(9)}`;
  const found = await db.tenant(tenantId, async (tx) => {
    const row = await store.findEngagement(tx, tenantId, engagementId);
    if (!row) return null;
    // Sessions are cached for a few seconds: the notice makes every process forget the deleted ones.
    if ((await deleteTestParticipantsInTx(tx, tenantId, previewPrefix(engagementId))) > 0) await announceCredentialChange(tx, `preview reset:${engagementId}`);
    await createTestParticipantInTx(tx, tenantId, participantId, 'Test participant');
    return { row, tenantSlug: await store.tenantSlug(tx, tenantId) };
  });
  if (!found) throw notFound('engagement', 'ENGAGEMENT_NOT_FOUND');
  const session = await createSession(db, tenantId, { participant_id: participantId, engagement_id: engagementId, ttl_seconds: PREVIEW_TTL_SECONDS }, PREVIEW_TTL_SECONDS);
  const siteSlug = found.row.definition.site_slug;
  const site = `${encodeURIComponent(found.tenantSlug)}/${encodeURIComponent(siteSlug)}`;
  return {
    engagement_id: engagementId,
    version: found.row.version,
    participant_id: participantId,
    session_id: session.session_id,
    expires_at: session.expires_at,
    tenant_slug: found.tenantSlug,
    site_slug: siteSlug,
    preview_url: `/embed/${site}?engagement_id=${engagementId}&preview=1`,
  };
}

/** Deletes the engagement's test participants with their attempts, facts and sessions (ending any preview of it). */
export async function resetPreview(db: Database, tenantId: string, engagementId: string) {
  const deleted = await db.tenant(tenantId, async (tx) => {
    if (!(await store.findEngagement(tx, tenantId, engagementId))) throw notFound('engagement', 'ENGAGEMENT_NOT_FOUND');
    const count = await deleteTestParticipantsInTx(tx, tenantId, previewPrefix(engagementId));
    if (count > 0) await announceCredentialChange(tx, `preview reset:${engagementId}`);
    return count;
  });
  return { engagement_id: engagementId, deleted_test_participants: deleted };
}

const previewOnly = () =>
  new AppError('forbidden', 'PREVIEW_SESSION_REQUIRED', 'only a preview session (POST /admin/engagements/{id}/preview) reads the draft of an engagement');

/**
 * The draft as the runtime sees it, for a preview session of this tenant and site. The session's
 * engagement was checked against `engagement_id` when it was read; a session of another tenant, or of
 * a real participant, is refused.
 */
export async function readPreview(db: Database, session: { tenantId: string; engagementId: string; participantId: string }, tenantSlug: string, siteSlug: string) {
  return db.tenant(session.tenantId, async (tx) => {
    if ((await store.tenantSlug(tx, session.tenantId)) !== tenantSlug) {
      throw new AppError('forbidden', 'SESSION_TENANT_MISMATCH', 'the session belongs to another tenant');
    }
    if (!(await isPreviewInTx(tx, session.tenantId, session.engagementId, session.participantId))) throw previewOnly();
    const row = await store.findEngagement(tx, session.tenantId, session.engagementId);
    if (!row || row.definition.site_slug !== siteSlug) throw notFound('draft engagement for this site', 'SITE_NOT_FOUND');
    return {
      engagement_id: row.id,
      tenant_slug: tenantSlug,
      site_slug: siteSlug,
      version: row.version,
      preview: true as const,
      updated_at: row.updated_at.toISOString(),
      ...redact(row.definition),
    };
  });
}
