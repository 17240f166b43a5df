import type { CompleteResponse } from './types.js';

/**
 * Messages to the host page (`window.parent.postMessage`). Every message is
 * an object with `source: 'loyalty-runtime'`, `version: 1` and a `type`:
 *
 * - `runtime:ready`: the engagement is shown (`engagement_id`, `participant_id`).
 * - `activity:completed`: the server completed an activity (one per completion).
 * - `runtime:error`: the page shows an error message (`code`, `detail`).
 * - `runtime:resize`: the content height changed (`height` in CSS pixels), so a host can size the iframe.
 *
 * `engagement:completed` is never sent (the spec declares it but never emits
 * it): hosts derive completion from `activity:completed`.
 */
export const MESSAGE_SOURCE = 'loyalty-runtime';
export const MESSAGE_VERSION = 1;

export interface ActivityCompletedMessage {
  source: typeof MESSAGE_SOURCE;
  version: typeof MESSAGE_VERSION;
  type: 'activity:completed';
  engagement_id: string;
  activity_id: string;
  activity_type: 'spin_wheel' | 'quiz';
  fact_id: string;
  attempt_id: string;
  result: CompleteResponse['result'];
  points_awarded: number;
  actions_executed: CompleteResponse['actions_executed'];
  duplicate: boolean;
  completed_at: string;
}

/** Every message the runtime sends, as it is posted (with `source` and `version`). */
export type HostMessage = { source: typeof MESSAGE_SOURCE; version: typeof MESSAGE_VERSION } & (Omit<ActivityCompletedMessage, 'source' | 'version'> | OtherMessage);

type OtherMessage =
  | { type: 'runtime:ready'; engagement_id: string; participant_id: string | null }
  | { type: 'runtime:error'; code: string; detail: string }
  | { type: 'runtime:resize'; height: number };

/**
 * The host's origin, which every message is addressed to: the host may name
 * it with `host_origin` in the embed URL; otherwise the browser tells it
 * (`location.ancestorOrigins`, then the referrer of the iframe load). When
 * none is known, messages go to `*`: they carry nothing a framing page could
 * not see on screen, and who may frame the page at all is the
 * Content-Security-Policy `frame-ancestors` of the engagement.
 */
export function hostOrigin(location: Location, referrer: string): string {
  const named = new URLSearchParams(location.search).get('host_origin');
  if (named) {
    try {
      return new URL(named).origin;
    } catch {
      // An unusable value falls through to what the browser knows.
    }
  }
  const ancestors = (location as Location & { ancestorOrigins?: DOMStringList }).ancestorOrigins;
  if (ancestors && ancestors.length > 0 && ancestors[0] !== 'null') return ancestors[0];
  if (referrer) {
    try {
      return new URL(referrer).origin;
    } catch {
      // No usable referrer.
    }
  }
  return '*';
}

export class HostMessenger {
  private readonly listeners: Array<(message: HostMessage) => void> = [];

  constructor(
    private readonly target: Window | null,
    private readonly origin: string,
  ) {}

  get embedded(): boolean {
    return this.target !== null;
  }

  /** Hears every message as well (a page that mounts the runtime itself has no parent window to post to). */
  listen(listener: (message: HostMessage) => void): void {
    this.listeners.push(listener);
  }

  private post(message: Record<string, unknown>): void {
    const full = { source: MESSAGE_SOURCE, version: MESSAGE_VERSION, ...message } as HostMessage;
    for (const listener of this.listeners) {
      try {
        listener(full);
      } catch (error) {
        console.error('[loyalty-runtime] onMessage failed', error);
      }
    }
    if (!this.target) return;
    this.target.postMessage(full, this.origin);
  }

  send(message: OtherMessage): void {
    this.post(message);
  }

  activityCompleted(engagementId: string, activityId: string, completion: CompleteResponse): ActivityCompletedMessage {
    const message: ActivityCompletedMessage = {
      source: MESSAGE_SOURCE,
      version: MESSAGE_VERSION,
      type: 'activity:completed',
      engagement_id: engagementId,
      activity_id: activityId,
      activity_type: completion.activity_type,
      fact_id: completion.fact_id,
      attempt_id: completion.attempt_id,
      result: completion.result,
      points_awarded: completion.actions_executed.reduce((sum, action) => sum + (action.points_awarded ?? 0), 0),
      actions_executed: completion.actions_executed,
      duplicate: completion.duplicate,
      completed_at: new Date().toISOString(),
    };
    this.post({ ...message });
    return message;
  }
}
