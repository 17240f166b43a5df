import type {
  ActivityEligibility,
  CompleteResponse,
  EngagementSession,
  EngagementSessionOptions,
  GateCheckResponse,
  PublicEngagement,
  QuizAnswer,
  SessionBalance,
  SessionInfo,
  ValidateResponse,
} from './types.js';

/**
 * The smallest client of the public and session routes that the runtime
 * needs, with the exact contract of `@loyalty/sdk`'s `createEngagementSession`.
 * It stands in until the SDK package is on main; the runtime imports only this
 * file, so switching to the SDK is a one-line change here.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly body: Record<string, unknown> = {},
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(detail);
    this.name = 'ApiError';
  }
}

export function createEngagementSession(options: EngagementSessionOptions): EngagementSession {
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  const base = options.baseUrl.replace(/\/+$/, '');
  const site = `${encodeURIComponent(options.tenantSlug)}/${encodeURIComponent(options.siteSlug)}`;
  let engagement: PublicEngagement | null = null;
  let session: SessionInfo | null = options.sessionId ? { session_id: options.sessionId, participant_id: '', expires_at: '' } : null;

  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await doFetch(`${base}/api/v1${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: Record<string, unknown> = {};
    try {
      parsed = text ? JSON.parse(text) : {};
    } catch {
      // A proxy's HTML error page: keep the status, say what came back.
      parsed = { detail: `the service answered ${response.status} with a body that is not JSON` };
    }
    if (!response.ok) {
      const retryAfter = Number(response.headers.get('retry-after'));
      throw new ApiError(
        response.status,
        typeof parsed.code === 'string' ? parsed.code : `HTTP_${response.status}`,
        typeof parsed.detail === 'string' ? parsed.detail : `the service answered ${response.status}`,
        parsed,
        Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
      );
    }
    return parsed as T;
  }

  async function loaded(): Promise<PublicEngagement> {
    engagement ??= await call<PublicEngagement>('GET', `/sites/${site}`);
    return engagement;
  }

  async function sessionFields(): Promise<{ session_id: string; engagement_id: string }> {
    const { session_id } = await api.ensureSession();
    return { session_id, engagement_id: (await loaded()).engagement_id };
  }

  const query = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

  const api: EngagementSession = {
    load: loaded,
    async ensureSession() {
      if (session) return session;
      const created = await call<SessionInfo>('POST', `/sites/${site}/sessions`, options.displayName ? { display_name: options.displayName } : {});
      session = { session_id: created.session_id, participant_id: created.participant_id, expires_at: created.expires_at };
      return session;
    },
    async eligibility(activityId) {
      return call<ActivityEligibility>('GET', `/activities/${encodeURIComponent(activityId)}/eligibility?${query(await sessionFields())}`);
    },
    async spin(activityId) {
      const fields = await sessionFields();
      const path = `/activities/${encodeURIComponent(activityId)}`;
      const draw = await call<ValidateResponse>('POST', `${path}/validate`, { ...fields, activity_type: 'spin_wheel' });
      const completion = await call<CompleteResponse>('POST', `${path}/complete-with-actions`, {
        ...fields,
        activity_type: 'spin_wheel',
        ...(draw.attempt_id ? { attempt_id: draw.attempt_id } : {}),
      });
      return { draw, completion };
    },
    async submitQuiz(activityId, answers: QuizAnswer[]) {
      return call<CompleteResponse>('POST', `/activities/${encodeURIComponent(activityId)}/complete-with-actions`, {
        ...(await sessionFields()),
        activity_type: 'quiz',
        payload: { answers },
      });
    },
    async checkGates(body) {
      return call<GateCheckResponse>('POST', '/runtime/gates/check', { ...(await sessionFields()), ...body });
    },
    async recordScreenVisit(body) {
      return call<unknown>('POST', '/runtime/screens/visits', { ...(await sessionFields()), ...body });
    },
    async balance() {
      return call<SessionBalance>('POST', '/points/balance', await sessionFields());
    },
  };
  return api;
}
