import type { Database } from '../../platform/db.js';
import type { AuthContext } from '../../platform/auth.js';
import { isStatementPart, loadModules, readStatePart, type StatePart } from '../../platform/module.js';
import { invalid, notFound } from '../../platform/errors.js';
import { PARTICIPANT_EXISTS_STATEMENT } from '../participants/index.js';
import { STATE_PARTS } from './schemas.js';

/**
 * The canonical participant state read. Every loaded module may contribute
 * parts (`stateParts` of its ServiceModule); the parts named in the spec
 * whose module is not built yet answer an empty collection of a fixed shape,
 * so clients can code against the whole response today.
 */
export type StatePartName = (typeof STATE_PARTS)[number];

const EMPTY_PARTS: Record<StatePartName, () => unknown> = {
  points: () => ({ available: 0, lifetime: 0, currency_name: 'points', last_earned_at: null }),
  tier: () => ({ current: null, next: null, points_to_next: null, lifetime: 0 }),
  badges: () => [],
  streaks: () => [],
  rewards: () => [],
  challenges: () => [],
  contests: () => ({ entries: [] }),
  referrals: () => ({ total_referrals: 0, conversions: 0, pending: 0, referral_code: null, codes: [] }),
  profile: () => ({}),
};

let registry: Promise<Map<string, StatePart>> | null = null;

/** The parts offered by the loaded modules, by name; two modules offering one part is a programming error. */
function registeredParts(): Promise<Map<string, StatePart>> {
  registry ??= loadModules().then((modules) => {
    const parts = new Map<string, StatePart>();
    for (const module of modules) {
      for (const [name, part] of Object.entries(module.stateParts ?? {})) {
        if (parts.has(name)) throw new Error(`two modules offer the state part "${name}"`);
        parts.set(name, part);
      }
    }
    return parts;
  });
  return registry;
}

export async function parseInclude(include: string | undefined): Promise<StatePartName[]> {
  if (include === undefined || include.trim() === '') return [...STATE_PARTS];
  const names = [...new Set(include.split(',').map((s) => s.trim()).filter((s) => s !== ''))];
  const unknown = names.filter((n) => !(STATE_PARTS as readonly string[]).includes(n));
  if (unknown.length > 0) {
    throw invalid(`include has unknown parts ${unknown.map((n) => JSON.stringify(n)).join(', ')}; accepted: ${STATE_PARTS.join(', ')}`);
  }
  return names as StatePartName[];
}

export async function readState(db: Database, auth: AuthContext, participantId: string, include: StatePartName[]): Promise<{ participant_id: string } & Record<string, any>> {
  const parts = await registeredParts();
  const tenantId = auth.tenantId;
  const chosen = include.map((name) => ({ name, part: parts.get(name) }));
  const state: { participant_id: string } & Record<string, unknown> = { participant_id: participantId };

  // Every part one statement: the check and all the parts in one round trip, one snapshot; parts
  // that share a statement (points and tier) share its rows.
  if (chosen.every(({ part }) => !part || isStatementPart(part))) {
    const statements = [...new Set(chosen.flatMap(({ part }) => (part && isStatementPart(part) ? [part.statement] : [])))];
    const [found, ...results] = await db.tenantReadAll(tenantId, [PARTICIPANT_EXISTS_STATEMENT, ...statements], [tenantId, participantId]);
    if (found.length === 0) throw notFound('participant');
    for (const { name, part } of chosen) {
      state[name] = part && isStatementPart(part) ? part.shape(results[statements.indexOf(part.statement)] as Array<Record<string, unknown>>) : EMPTY_PARTS[name]();
    }
    return state;
  }

  // The participant check travels with BEGIN: one round trip fewer.
  return db.tenantStartingWith(tenantId, PARTICIPANT_EXISTS_STATEMENT, [tenantId, participantId], async (tx, found) => {
    if (found.length === 0) throw notFound('participant');
    // One transaction, so the parts are read sequentially on its connection.
    for (const { name, part } of chosen) state[name] = part ? await readStatePart(part, tx, tenantId, participantId, auth) : EMPTY_PARTS[name]();
    return state;
  });
}
