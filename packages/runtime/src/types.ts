/**
 * The shapes the runtime reads are the SDK's, which are the OpenAPI types of
 * the public and session routes; the runtime names the parts it renders.
 */
import type { PublicEngagement, CompleteResponse, EngagementSession as SdkEngagementSession } from '@loyalty/sdk';

export type {
  PublicEngagement,
  CompleteResponse,
  ValidateResponse,
  ActivityEligibility,
  GateCheckResponse,
  QuizAnswers,
  SessionInfo,
  EngagementSessionOptions,
} from '@loyalty/sdk';

export type PublicActivity = PublicEngagement['activities'][number];
export type PublicScreen = PublicEngagement['screens'][number];
export type PublicSegment = NonNullable<PublicActivity['segments']>[number];
export type ExecutedAction = CompleteResponse['actions_executed'][number];
export type GateResult = Awaited<ReturnType<SdkEngagementSession['checkGates']>>['gates'][string];
export type QuizAnswer = import('@loyalty/sdk').QuizAnswers[number];

/** The part of the SDK's headless session the runtime uses (the page never needs more). */
export type EngagementSession = Pick<
  SdkEngagementSession,
  'load' | 'ensureSession' | 'eligibility' | 'spin' | 'submitQuiz' | 'checkGates' | 'recordScreenVisit' | 'balance' | 'badges' | 'rewards' | 'subscribe'
>;
