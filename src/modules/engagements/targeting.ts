import type { Tx } from '../../platform/db.js';
import { fieldError, invalid } from '../../platform/errors.js';
import { assertSegmentsExistInTx, membershipsInTx } from '../segments/index.js';
import { parseCondition } from './conditions.js';
import type { EngagementDefinition } from './schemas.js';

/**
 * Segments as targets of an engagement (issue 36; docs/decisions.md, "Segments as targets in
 * engagements, segment grants and exports"): an engagement's `segment_id` decides who gets a
 * session, an activity's who may attempt it, and a gate condition `in_segment:<id>` who sees a
 * screen. Membership is asked of the segments module (`membershipsInTx`) at the moment it matters,
 * so a participant who leaves the segment is refused from then on. A preview's test participant is
 * never a member of any segment, so previews are not held to the targets: the preview shows the
 * draft as a member would see it.
 */

/** Every segment a definition names, with the JSON pointer of where it is named (for the 422 of an unknown one). */
function namedSegments(definition: EngagementDefinition): Array<{ segmentId: string; path: string }> {
  const named: Array<{ segmentId: string; path: string }> = [];
  if (definition.segment_id) named.push({ segmentId: definition.segment_id, path: '/segment_id' });
  definition.activities.forEach((activity, index) => {
    if (activity.segment_id) named.push({ segmentId: activity.segment_id, path: `/activities/${index}/segment_id` });
  });
  definition.screens.forEach((screen, index) => {
    (screen.gate?.conditions ?? []).forEach((text, at) => {
      const condition = parseCondition(text);
      if (condition?.kind === 'in_segment') named.push({ segmentId: condition.segmentId, path: `/screens/${index}/gate/conditions/${at}` });
    });
  });
  return named;
}

/** The targeting rules of a definition: its segments exist in the tenant (422 SEGMENT_NOT_FOUND on the field), and a segment's engagement gives no anonymous sessions. */
export async function checkTargetingInTx(tx: Tx, tenantId: string, definition: EngagementDefinition): Promise<void> {
  if (definition.segment_id && definition.allow_anonymous_sessions) {
    const message = 'an engagement for a segment gives no anonymous sessions: a new anonymous visitor is in no segment';
    throw invalid(`segment_id: ${message}; set allow_anonymous_sessions to false or segment_id to null`, 'SEGMENT_WITH_ANONYMOUS_SESSIONS', {
      errors: [fieldError('/segment_id', 'conflict', message), fieldError('/allow_anonymous_sessions', 'conflict', message)],
    });
  }
  // One statement per place, each with its own pointer; a definition names few segments.
  for (const { segmentId, path } of namedSegments(definition)) await assertSegmentsExistInTx(tx, tenantId, [segmentId], path);
}

/** The `segment` outcome of the eligibility read, for an engagement that has a segment. */
export async function segmentOutcomeInTx(tx: Tx, tenantId: string, segmentId: string, participantId: string | undefined) {
  if (participantId === undefined) return { rule: 'segment' as const, passed: false, detail: `participant_id is needed to check membership of the segment ${segmentId}` };
  const member = (await membershipsInTx(tx, tenantId, participantId, [segmentId])).has(segmentId);
  return { rule: 'segment' as const, passed: member, detail: member ? `a member of the segment ${segmentId}` : `not a member of the segment ${segmentId}` };
}
