/**
 * The shapes the runtime reads, as the service's OpenAPI document declares
 * them (`GET /api/v1/sites/{tenantSlug}/{siteSlug}`, the activity, gate,
 * balance, badge and reward routes). Only the fields the runtime uses are
 * listed; the service may add more.
 */
export interface PublicSegment {
  index: number;
  label: string;
  prize_type: string;
  color?: string;
}

export interface PublicQuestion {
  id: string;
  text: string;
  options: string[];
}

export interface PublicActivity {
  id: string;
  type: string;
  name?: string;
  max_attempts: number;
  cooldown_seconds: number;
  segments?: PublicSegment[];
  questions?: PublicQuestion[];
  pass_percent?: number;
}

export interface PublicScreen {
  id: string;
  name?: string;
  components: Array<Record<string, unknown>>;
  gated: boolean;
}

export interface PublicEngagement {
  engagement_id: string;
  tenant_slug: string;
  site_slug: string;
  name: string;
  description?: string;
  version: number;
  published_at: string;
  screens: PublicScreen[];
  components: Array<Record<string, unknown>>;
  canvas: Record<string, unknown>;
  activities: PublicActivity[];
  allow_anonymous_sessions: boolean;
}

export interface SessionInfo {
  session_id: string;
  participant_id: string;
  expires_at: string;
}

export interface ActivityResult {
  segment_index?: number;
  prize_label?: string;
  prize_type?: string;
  score?: number;
  passed?: boolean;
  correct_answers?: number;
  total_questions?: number;
  answered?: number;
}

export interface ValidateResponse {
  valid: boolean;
  result: ActivityResult;
  attempt_id: string | null;
}

export interface ExecutedAction {
  type: 'award_points' | 'award_reward' | 'grant_badge';
  points_awarded?: number;
  new_balance?: number;
  reward_claimed?: { reward_id: string; claim_id: string; code: string | null; display_type: string; title: string; type: string; expires_at: string | null };
  badge_code?: string;
  awarded?: boolean;
  source: 'on_completion' | 'prize';
}

export interface CompleteResponse {
  success: boolean;
  actions_executed: ExecutedAction[];
  fact_id: string;
  attempt_id: string;
  activity_type: 'spin_wheel' | 'quiz';
  result: ActivityResult;
  duplicate: boolean;
}

export interface ActivityEligibility {
  eligible: boolean;
  attempts_used: number;
  max_attempts: number;
  cooldown_remaining_seconds: number;
  open_attempt_id: string | null;
}

export interface GateResult {
  locked: boolean;
  conditions_met: string[];
  conditions_remaining?: string[];
  unlock_hint?: string;
}

export interface GateCheckResponse {
  gates: Record<string, GateResult>;
}

export interface SessionBalance {
  available_points: number;
  total_points: number;
  currency_name: string;
  last_earned_at: string | null;
}

export interface QuizAnswer {
  question_id: string;
  selected_option: number;
}

/** The headless engagement session of `@loyalty/sdk` (`createEngagementSession`), as far as the runtime uses it. */
export interface EngagementSession {
  load(): Promise<PublicEngagement>;
  ensureSession(): Promise<SessionInfo>;
  eligibility(activityId: string): Promise<ActivityEligibility>;
  spin(activityId: string): Promise<{ draw: ValidateResponse; completion: CompleteResponse }>;
  submitQuiz(activityId: string, answers: QuizAnswer[]): Promise<CompleteResponse>;
  checkGates(body: { targets: string[] }): Promise<GateCheckResponse>;
  recordScreenVisit(body: { screen_id: string }): Promise<unknown>;
  balance(): Promise<SessionBalance>;
}

export interface EngagementSessionOptions {
  baseUrl: string;
  tenantSlug: string;
  siteSlug: string;
  sessionId?: string;
  displayName?: string;
  fetch?: typeof fetch;
}
