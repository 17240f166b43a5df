import type { Database, Tx } from '../../platform/db.js';
import type { AuthContext } from '../../platform/auth.js';
import { clock } from '../../platform/clock.js';
import { AppError, notFound } from '../../platform/errors.js';
import { isPreviewSessionInTx, publishedDefinitionInTx, parseCondition, type EngagementDefinition, type GateCondition } from '../engagements/index.js';
import { membershipsInTx } from '../segments/index.js';
import { completedActivitiesInTx } from '../activities/index.js';
import { readBalanceInTx } from '../points/index.js';
import { hasBadgeInTx } from '../badges/index.js';
import * as store from './store.js';

interface Session {
  tenantId: string;
  participantId: string;
  engagementId: string;
}

type Screen = EngagementDefinition['screens'][number];

/**
 * What the conditions of the requested screens need, read once per check and
 * only when some condition asks for it.
 */
class Facts {
  private completed: Promise<Array<{ activity_id: string; activity_type: string }>> | null = null;
  private available: Promise<number> | null = null;
  private visits: Promise<Set<string>> | null = null;
  private preview: Promise<boolean> | null = null;
  private readonly badges = new Map<string, Promise<boolean>>();

  constructor(
    private readonly tx: Tx,
    private readonly session: Session,
  ) {}

  async holds(condition: GateCondition): Promise<boolean> {
    const { tx, session } = this;
    switch (condition.kind) {
      case 'activity_completed': {
        this.completed ??= completedActivitiesInTx(tx, session.tenantId, session.engagementId, session.participantId);
        const completed = await this.completed;
        return completed.some(
          (c) => (condition.activityId === null || c.activity_id === condition.activityId) && (condition.activityType === null || c.activity_type === condition.activityType),
        );
      }
      case 'min_points':
        return (await this.availablePoints()) >= condition.points;
      case 'badge_earned': {
        let earned = this.badges.get(condition.badgeCode);
        if (!earned) {
          earned = hasBadgeInTx(tx, session.tenantId, session.participantId, condition.badgeCode);
          this.badges.set(condition.badgeCode, earned);
        }
        return earned;
      }
      case 'screen_visited':
        this.visits ??= store.visitedScreens(tx, session.tenantId, session.engagementId, session.participantId);
        return (await this.visits).has(condition.screenId);
      case 'in_segment':
        // A preview's test participant is never a member: the preview opens the screen as a member would see it.
        this.preview ??= isPreviewSessionInTx(tx, session.tenantId, session.engagementId, session.participantId);
        if (await this.preview) return true;
        return (await membershipsInTx(tx, session.tenantId, session.participantId, [condition.segmentId])).has(condition.segmentId);
    }
  }

  availablePoints(): Promise<number> {
    this.available ??= readBalanceInTx(this.tx, this.session.tenantId, this.session.participantId).then((balance) => balance.available);
    return this.available;
  }
}

async function hintFor(condition: GateCondition, facts: Facts, definition: EngagementDefinition): Promise<string> {
  switch (condition.kind) {
    case 'activity_completed': {
      if (condition.activityId) {
        const activity = definition.activities.find((a) => a.id === condition.activityId);
        return `complete ${activity?.name ?? condition.activityId}`;
      }
      return condition.activityType ? `complete a ${condition.activityType.replace('_', ' ')}` : 'complete an activity';
    }
    case 'min_points':
      return `earn ${condition.points - (await facts.availablePoints())} more points`;
    case 'badge_earned':
      return `earn the badge ${condition.badgeCode}`;
    case 'screen_visited': {
      const screen = definition.screens.find((s) => s.id === condition.screenId);
      return `visit ${screen?.name ?? condition.screenId}`;
    }
    case 'in_segment':
      // Segments are the tenant's own audiences; their names are not shown to participants.
      return 'be among the participants this screen is for';
  }
}

async function evaluate(screen: Screen, facts: Facts, definition: EngagementDefinition) {
  const conditions = (screen.gate?.conditions ?? []).map((text) => parseCondition(text)!);
  const met: string[] = [];
  const remaining: GateCondition[] = [];
  // Sequential on purpose: one transaction serves one query at a time.
  for (const condition of conditions) (await facts.holds(condition) ? met.push(condition.text) : remaining.push(condition));
  if (remaining.length === 0) return { locked: false, conditions_met: met };
  const hints: string[] = [];
  for (const condition of remaining) hints.push(await hintFor(condition, facts, definition));
  const generated = hints.join(', then ');
  return {
    locked: true,
    conditions_met: met,
    conditions_remaining: remaining.map((c) => c.text),
    unlock_hint: screen.gate?.unlock_hint ?? generated.charAt(0).toUpperCase() + generated.slice(1) + ' to unlock.',
  };
}

function findScreen(definition: EngagementDefinition, screenId: string): Screen {
  const screen = definition.screens.find((s) => s.id === screenId);
  if (!screen) throw notFound(`screen ${JSON.stringify(screenId)} in this engagement`, 'SCREEN_NOT_FOUND');
  return screen;
}

function sessionOf(auth: AuthContext): Session {
  return { tenantId: auth.tenantId, participantId: auth.participantId!, engagementId: auth.engagementId! };
}

export async function checkGates(db: Database, auth: AuthContext, targets: string[]) {
  const session = sessionOf(auth);
  return db.tenant(session.tenantId, async (tx) => {
    const definition = await publishedDefinitionInTx(tx, session.tenantId, session.engagementId, session.participantId);
    const screens = targets.map((target) => findScreen(definition, target));
    const facts = new Facts(tx, session);
    const gates: Record<string, Awaited<ReturnType<typeof evaluate>>> = {};
    for (const screen of screens) gates[screen.id] = await evaluate(screen, facts, definition);
    return { gates };
  });
}

/**
 * The runtime reports a visit when it shows a screen. A locked screen cannot
 * be visited, so `screen_visited` conditions cannot be satisfied by skipping
 * ahead of the screens' own gates.
 */
export async function recordVisit(db: Database, auth: AuthContext, screenId: string) {
  const session = sessionOf(auth);
  return db.tenant(session.tenantId, async (tx) => {
    const definition = await publishedDefinitionInTx(tx, session.tenantId, session.engagementId, session.participantId);
    const screen = findScreen(definition, screenId);
    if (screen.gate) {
      const gate = await evaluate(screen, new Facts(tx, session), definition);
      if (gate.locked) {
        throw new AppError('rule_violation', 'SCREEN_LOCKED', `the screen is locked: ${gate.unlock_hint}`, { conditions_remaining: gate.conditions_remaining });
      }
    }
    const visit = await store.recordVisit(tx, session.tenantId, { engagementId: session.engagementId, participantId: session.participantId, screenId, at: clock.now() });
    return {
      screen_id: screenId,
      first_visited_at: visit.first_visited_at.toISOString(),
      last_visited_at: visit.last_visited_at.toISOString(),
      visit_count: visit.visit_count,
    };
  });
}
