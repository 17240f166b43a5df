import { isIP } from 'node:net';
import type { Tx } from '../../platform/db.js';
import type { AuthContext } from '../../platform/auth.js';
import { clock } from '../../platform/clock.js';
import { uuid } from '../../platform/ids.js';
import * as store from './store.js';
import type { StoredProfile } from './store.js';
import { canReadPii, personalFieldsOf, viewProfile, type ProfileView } from './masking.js';

/**
 * The access log: one row for every full read of personal data, and the step
 * that masks profiles for a caller and logs the read when it sees them in full.
 */

export interface PiiAccess {
  actorType: 'admin' | 'system' | 'webhook';
  /** Admin user or API key (`admin_user:<id>`, `api_key:<id>`), system component, or webhook destination id. */
  actorId: string;
  /** Whose data was read; null for a bulk read of several (then give `participantIds`). */
  participantId: string | null;
  participantIds?: string[];
  fieldsAccessed: string[];
  rowCount: number;
  exportFormat?: 'json' | 'csv' | null;
  ipAddress?: string | null;
  /** Why a person revealed a field (POST /admin/participants/{id}/reveal). */
  reason?: string | null;
}

/** Writes one `pii_access_log` row for one full read of personal data, in the caller's transaction. */
export async function recordPiiAccessInTx(tx: Tx, tenantId: string, access: PiiAccess): Promise<string> {
  if (!Number.isInteger(access.rowCount) || access.rowCount < 1) throw new Error(`rowCount must be a positive integer, got ${access.rowCount}`);
  if (!['admin', 'system', 'webhook'].includes(access.actorType)) throw new Error(`unknown actorType ${access.actorType}`);
  const participantIds = access.participantIds ?? (access.participantId !== null ? [access.participantId] : []);
  const ip = access.ipAddress && isIP(access.ipAddress) ? access.ipAddress : null;
  const id = uuid();
  await store.insertAccessLog(tx, tenantId, {
    id,
    reason: access.reason ?? null,
    actorType: access.actorType,
    actorId: access.actorId,
    participantId: access.participantId ?? (participantIds.length === 1 ? participantIds[0] : null),
    participantIds,
    fieldsAccessed: [...new Set(access.fieldsAccessed)].sort(),
    rowCount: access.rowCount,
    exportFormat: access.exportFormat ?? null,
    ipAddress: ip,
    occurredAt: clock.now(),
  });
  return id;
}

export function actorOf(auth: AuthContext): { actorType: 'admin' | 'system'; actorId: string } {
  if (auth.kind === 'jwt' || auth.kind === 'console') return { actorType: 'admin', actorId: `admin_user:${auth.actorId}` };
  if (auth.kind === 'key') return { actorType: 'admin', actorId: `api_key:${auth.actorId}` };
  return { actorType: 'system', actorId: `session:${auth.actorId}` };
}

/**
 * Masks profiles for the caller and, when the caller sees personal values in
 * full, logs the read: one row, with row_count the number of participants
 * whose personal values it disclosed.
 */
export async function presentProfilesInTx(
  tx: Tx,
  tenantId: string,
  profiles: StoredProfile[],
  auth: AuthContext | null | undefined,
  options: { exportFormat: 'json' | 'csv' | null },
): Promise<ProfileView[]> {
  const views = profiles.map((profile) => viewProfile(profile, auth));
  if (auth && canReadPii(auth)) {
    const disclosed = profiles.map((profile) => ({ id: profile.participantId, fields: personalFieldsOf(profile) })).filter((d) => d.fields.length > 0);
    if (disclosed.length > 0) {
      await recordPiiAccessInTx(tx, tenantId, {
        ...actorOf(auth),
        participantId: disclosed.length === 1 ? disclosed[0].id : null,
        participantIds: disclosed.map((d) => d.id),
        fieldsAccessed: disclosed.flatMap((d) => d.fields),
        rowCount: disclosed.length,
        exportFormat: options.exportFormat,
        ipAddress: auth.ipAddress ?? null,
      });
    }
  }
  return views;
}
