import type { Database } from '../../platform/db.js';
import { runFactHandlers, type Fact } from '../../platform/facts.js';
import { clock } from '../../platform/clock.js';
import { prefixedId } from '../../platform/ids.js';
import { ensureParticipant } from '../participants/index.js';

/**
 * Test-only helpers: record a fact the way the ingestion and activities
 * modules do (runFactHandlers inside the recording transaction).
 */
export async function recordFact(
  db: Database,
  tenantId: string,
  fact: Partial<Fact> & { participantId: string; name: string },
): Promise<Fact> {
  const full: Fact = {
    id: fact.id ?? prefixedId('fct'),
    name: fact.name,
    participantId: fact.participantId,
    engagementId: fact.engagementId ?? null,
    properties: fact.properties ?? {},
    occurredAt: fact.occurredAt ?? clock.now(),
    source: fact.source ?? 'event',
    activityId: fact.activityId ?? null,
    evaluateChallenges: fact.evaluateChallenges ?? true,
  };
  await db.tenant(tenantId, async (tx) => {
    await ensureParticipant(tx, tenantId, full.participantId);
    await runFactHandlers(tx, tenantId, full);
  });
  return full;
}
