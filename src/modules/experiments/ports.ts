import type { Tx } from '../../platform/db.js';
import { isUuid } from '../../platform/ids.js';
import { ruleForExperimentInTx } from '../rules/index.js';
import { engagementForReviewInTx } from '../engagements/index.js';
import { multiplierForExperimentInTx } from '../points/index.js';
import type { SubjectType } from './schemas.js';

/**
 * The subjects an experiment's variants name, read through their modules'
 * public surfaces: whether one exists, its name, and whether it is an
 * unpublished draft (served only through the experiment while it runs).
 */
export interface Subject {
  name: string;
  /** An unpublished draft (a rule in draft, an engagement with unpublished changes); multipliers have none. */
  draft: boolean;
  /** Serving everyone outside the experiment now: an active rule, a published engagement, a multiplier. */
  live: boolean;
  /** Why it cannot be a variant, though it exists (a scheduled rule). */
  unusable?: string;
}

const ID_PATTERNS: Record<SubjectType, (id: string) => boolean> = {
  rule: (id) => /^rul_[0-9a-f]{32}$/.test(id),
  multiplier: (id) => /^mul_[0-9a-f]{24}$/.test(id),
  engagement: isUuid,
};

export async function findSubjectInTx(tx: Tx, tenantId: string, type: SubjectType, id: string): Promise<Subject | null> {
  if (!ID_PATTERNS[type](id)) return null;
  if (type === 'rule') {
    const rule = await ruleForExperimentInTx(tx, tenantId, id);
    if (!rule) return null;
    const unusable = rule.trigger === 'event' ? undefined : `is a ${rule.trigger} rule; only event rules are variants (they apply at an event, where the participant is exposed)`;
    return { name: rule.name, draft: rule.draft, live: rule.status === 'active', ...(unusable && { unusable }) };
  }
  if (type === 'engagement') {
    const engagement = await engagementForReviewInTx(tx, tenantId, id);
    // Participants play only published engagements: a variant is published before the experiment starts (service.ts).
    return engagement ? { name: engagement.name, draft: !engagement.published, live: engagement.published } : null;
  }
  const multiplier = await multiplierForExperimentInTx(tx, tenantId, id);
  return multiplier ? { name: `×${multiplier.multiplier} on ${multiplier.event_type}`, draft: false, live: true } : null;
}
