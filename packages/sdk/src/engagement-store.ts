import { createEngagementSession, type EngagementSession, type EngagementSessionOptions } from './headless.js';
import type { BadgeStatus, PointsBalance, PublicEngagement } from './types.js';

/**
 * The state behind `useEngagementData`, without React: the engagement, the
 * balance and the badges, loaded together and re-read when the live stream
 * reports a change. A React hook subscribes to it with useSyncExternalStore;
 * any other UI library can do the same with subscribe/getSnapshot.
 */
export interface EngagementData {
  engagement: PublicEngagement;
  balance: PointsBalance;
  badges: BadgeStatus;
}

export interface EngagementSnapshot {
  data: EngagementData | null;
  /** The first load is under way (no data yet). */
  loading: boolean;
  /** A re-read is under way while the previous data stays shown. */
  refreshing: boolean;
  error: unknown;
}

/** Events arriving together (a completion awards points and a badge) cause one re-read. */
export const LIVE_REFRESH_DEBOUNCE_MS = 50;

export class EngagementDataStore {
  readonly session: EngagementSession;
  private snapshot: EngagementSnapshot = { data: null, loading: false, refreshing: false, error: null };
  private readonly listeners = new Set<() => void>();
  private unsubscribeStream: (() => void) | null = null;
  private refreshTimer: ReturnType<typeof setTimeout> | null = null;
  private inFlight: Promise<void> | null = null;
  private again = false;
  private reloadEngagement = false;

  constructor(session: EngagementSession | EngagementSessionOptions) {
    this.session = 'load' in session && typeof session.load === 'function' ? (session as EngagementSession) : createEngagementSession(session as EngagementSessionOptions);
  }

  getSnapshot = (): EngagementSnapshot => this.snapshot;

  /** Adds a listener; the first one loads the data and opens the live stream, the last one to leave closes it. */
  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    if (this.listeners.size === 1) this.start();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  };

  /** Re-reads everything (the engagement too); concurrent calls share one read, and one more follows if asked for meanwhile. */
  refresh = (): Promise<void> => this.reload(true);

  private reload(withEngagement: boolean): Promise<void> {
    this.reloadEngagement ||= withEngagement;
    if (this.inFlight) {
      this.again = true;
      return this.inFlight;
    }
    this.set({ ...this.snapshot, loading: this.snapshot.data === null, refreshing: this.snapshot.data !== null });
    const run = (async () => {
      try {
        do {
          this.again = false;
          const known = this.reloadEngagement ? null : this.snapshot.data?.engagement;
          this.reloadEngagement = false;
          const [engagement, balance, badges] = await Promise.all([known ?? this.session.load(), this.session.balance(), this.session.badges()]);
          this.set({ data: { engagement, balance, badges }, loading: false, refreshing: this.again, error: null });
        } while (this.again);
      } catch (error) {
        this.set({ ...this.snapshot, loading: false, refreshing: false, error });
      } finally {
        this.inFlight = null;
      }
    })();
    this.inFlight = run;
    return run;
  }

  /** Loads the data and follows the live stream (called by the first subscriber). */
  start(): void {
    if (this.unsubscribeStream) return;
    void this.refresh();
    // Re-read on every (re)connection too: a change between the first load and the stream's opening is not delivered.
    this.unsubscribeStream = this.session.subscribe(
      () => this.scheduleReload(),
      (error) => this.set({ ...this.snapshot, error }),
      () => this.scheduleReload(),
      () => this.scheduleReload(),
    );
  }

  stop(): void {
    this.unsubscribeStream?.();
    this.unsubscribeStream = null;
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.refreshTimer = null;
  }

  /** After a live event or a stream reset. */
  private scheduleReload(): void {
    // Envelopes are triggers (data may be empty on replays): re-read the
    // participant's state; the engagement definition does not change with them.
    if (this.refreshTimer) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = null;
      void this.reload(false);
    }, LIVE_REFRESH_DEBOUNCE_MS);
  }

  private set(next: EngagementSnapshot): void {
    this.snapshot = next;
    for (const listener of [...this.listeners]) listener();
  }
}
