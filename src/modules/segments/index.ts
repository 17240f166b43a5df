import type { ServiceModule } from '../../platform/module.js';
import { registerSegmentMembersSql } from '../../platform/segments.js';
import routes from './routes.js';
import { Segment, SegmentCondition, SegmentFilter, SegmentIdSchema } from './schemas.js';
import { REFRESH_TASK, refreshSegmentsJob } from './jobs.js';
import { membersSqlInTx } from './service.js';

/**
 * Segments: saved, named filters over participants (issue 36), evaluated on
 * the server by one SQL compiler (compile.ts), optionally kept materialized
 * with segment.entered.v1 / segment.left.v1.
 *
 * Other modules use only these:
 * - `membershipsInTx(tx, tenantId, participantId, segmentIds)`: which of the
 *   ids the participant is in now (materialized: one indexed look-up; others:
 *   the filter evaluated for that one participant). Unknown ids are absent.
 * - `membersSqlInTx(tx, tenantId, segmentId, firstParam, path?)`: the members
 *   as SQL selecting `participant_id`, its placeholders from `$firstParam`;
 *   a 404 SEGMENT_NOT_FOUND (errors[].path = path) when there is no such segment.
 * - `assertSegmentsExistInTx(tx, tenantId, segmentIds, path)`: a 422
 *   SEGMENT_NOT_FOUND naming each missing id (`path`, or `path/<index>` for a
 *   list of several or a path ending in `/value`).
 *   The participants module (which segments depend on) reaches it through
 *   src/platform/segments.ts `segmentMembersSqlInTx` instead: no import circle.
 * - `assertMemberInTx(tx, tenantId, participantId, [{ segmentId, what }])`: the
 *   one 403 NOT_IN_SEGMENT of every place that is for a segment's members
 *   (engagements, activities, challenges), naming the segment by its name.
 * - `segmentForReviewInTx` / `publishSegmentDraftInTx`: the review queue's
 *   (modules/publishing) view of a segment's draft, and its approval: a change
 *   of a segment used by a live program waits there for a publisher.
 * - `SegmentId`: the schema of a segment id for request schemas.
 * - `compileSegmentFilter` / `countSql` / `membersSql` and `readFactContextInTx`:
 *   the compiler itself, for benchmarks (bench/segments.ts).
 */
export { membershipsInTx, membersSqlInTx, assertSegmentsExistInTx, assertMemberInTx, segmentForReviewInTx, publishSegmentDraftInTx, type SegmentTarget } from './service.js';
export { compileSegmentFilter, countSql, membersSql, type CompiledFilter, type CompileOptions } from './compile.js';
export { factContext as readFactContextInTx } from './store.js';
export type { FactContext } from './facts.js';
export type { SegmentFilter } from './schemas.js';
/** A segment id's pattern (`^seg_[0-9a-f]{32}$`) and its test, for schemas and checks that name segments inside other values. */
export { SEGMENT_ID_PATTERN, isSegmentId } from './schemas.js';

/** The JSON schema of a segment id (`^seg_[0-9a-f]{32}$`) for other modules' request schemas. */
export const SegmentId = SegmentIdSchema;

registerSegmentMembersSql(membersSqlInTx);

const segmentsModule: ServiceModule = {
  name: 'segments',
  routes,
  schemas: [SegmentCondition, SegmentFilter, Segment],
  tasks: { [REFRESH_TASK]: refreshSegmentsJob },
  crontab: [`* * * * * ${REFRESH_TASK}`],
};
export default segmentsModule;
