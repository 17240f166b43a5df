import type { Tx } from './db.js';
import { conflict } from './errors.js';

/**
 * The experiments module (issue 36) decides which variant of a rule, a
 * multiplier or an engagement a participant gets. The engines that apply
 * those subjects (rules, points, sessions) ask here rather than import the
 * experiments module, which itself reaches the rules, points, engagements and
 * publishing modules (to check subjects and roll a variant out): importing it
 * from them would close an import circle. The experiments module registers
 * its answer when it loads; until one does, no subject is in an experiment.
 */
export type ExperimentSubjectType = 'rule' | 'multiplier' | 'engagement';

export interface ExperimentVariantAnswer {
  experimentId: string;
  /** The participant's variant (`holdout` for the holdout). */
  variantKey: string;
  /** Whether the subject asked about serves this participant: it is their variant's subject. */
  applies: boolean;
  /** Their variant's subject (null for the holdout), e.g. the engagement they are served instead. */
  variantSubjectId: string | null;
  /** False for a participant outside the experiment's segment: they get the control, unrecorded (not in the experiment). */
  recorded: boolean;
}

export type ExperimentVariantLookup = (
  tx: Tx,
  tenantId: string,
  subjectType: ExperimentSubjectType,
  subjectId: string,
  participantId: string,
) => Promise<ExperimentVariantAnswer | null>;

export type ExperimentSubjectsLookup = (tx: Tx, tenantId: string, subjectType: ExperimentSubjectType) => Promise<ReadonlySet<string>>;

/** The running experiments whose variants name the subject: [{ id, name }]. */
export type ExperimentUsesLookup = (tx: Tx, tenantId: string, subjectType: ExperimentSubjectType, subjectId: string) => Promise<Array<{ id: string; name: string }>>;

let registered: { variant: ExperimentVariantLookup; subjects: ExperimentSubjectsLookup; uses: ExperimentUsesLookup } | null = null;

export function registerExperiments(answers: { variant: ExperimentVariantLookup; subjects: ExperimentSubjectsLookup; uses: ExperimentUsesLookup }): void {
  registered = answers;
}

/**
 * Whether `subjectId` serves the participant, when it is a subject of a running
 * experiment: records the participant's assignment at this first exposure (an
 * existing one always wins). Null when the subject is in no running
 * experiment. A participant outside the experiment's segment gets the control
 * and is not recorded (`recorded: false`). Costs no query when
 * the tenant runs no experiment on the subject (a short per-process cache).
 */
export async function experimentVariantInTx(
  tx: Tx,
  tenantId: string,
  subjectType: ExperimentSubjectType,
  subjectId: string,
  participantId: string,
): Promise<ExperimentVariantAnswer | null> {
  return registered ? registered.variant(tx, tenantId, subjectType, subjectId, participantId) : null;
}

/** The subjects of the type in the tenant's running experiments (drafts among them serve their variant's participants). */
export async function runningExperimentSubjectsInTx(tx: Tx, tenantId: string, subjectType: ExperimentSubjectType): Promise<ReadonlySet<string>> {
  return registered ? registered.subjects(tx, tenantId, subjectType) : new Set();
}

/**
 * Refuses (409 SUBJECT_IN_EXPERIMENT) deleting a rule or multiplier that is a
 * variant of a running experiment: its participants' results would lose their
 * cause mid-run. The detail names the experiment and how to end it first.
 */
export async function assertNotInRunningExperimentInTx(tx: Tx, tenantId: string, subjectType: ExperimentSubjectType, subjectId: string): Promise<void> {
  const uses = registered ? await registered.uses(tx, tenantId, subjectType, subjectId) : [];
  if (uses.length === 0) return;
  const [first] = uses;
  throw conflict(
    `the ${subjectType} ${subjectId} is a variant of the running experiment ${JSON.stringify(first.name)} (${first.id}); stop it (POST /api/v1/admin/experiments/${first.id}/stop) or roll a variant out first`,
    'SUBJECT_IN_EXPERIMENT',
    { experiment_id: first.id },
  );
}
