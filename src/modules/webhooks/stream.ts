import pg from 'pg';
import type { Database } from '../../platform/db.js';
import type { Logger } from '../../platform/logger.js';
import { DISPATCHED_CHANNEL, participantEventsByIds, tenantEventsByIds, type StreamEventRow } from './store.js';
import type { Envelope } from './delivery.js';

/**
 * The live event streams (server-sent events): the participant's, and the
 * tenant-level one a sandbox tenant's forwarder reads. One LISTEN
 * connection per process hears the dispatcher's notifications (sent in the
 * dispatch transaction, so only committed events are announced) and hands
 * them to the open streams of that participant. Each stream writes the same
 * envelope, with the same id, that webhook receivers get.
 */
export const STREAMS_PER_PROCESS_MAX = 2_000;
export const STREAMS_PER_PARTICIPANT_MAX = 5;
/** Tenant-level streams (forwarders of a sandbox tenant) open at once per tenant. */
export const STREAMS_PER_TENANT_MAX = 5;

export interface StreamSubscriber {
  tenantId: string;
  participantId: string;
  engagementId: string;
  /** Writes envelopes the stream has not sent yet. */
  push(rows: StreamEventRow[]): void;
}

/** A tenant-level stream: every event of the tenant, whoever it is about. */
export interface TenantStreamSubscriber {
  tenantId: string;
  push(rows: StreamEventRow[]): void;
}

export function toEnvelope(tenantId: string, row: StreamEventRow, livemode: boolean): Envelope {
  return {
    id: row.id,
    event: row.event,
    timestamp: new Date(row.created_at).toISOString(),
    tenant_id: tenantId,
    engagement_id: row.engagement_id,
    participant_id: row.participant_id,
    livemode,
    data: row.data,
  };
}

export class LiveStreamHub {
  private readonly subscribers = new Map<string, Set<StreamSubscriber>>();
  private readonly tenantSubscribers = new Map<string, Set<TenantStreamSubscriber>>();
  private count = 0;
  private listener: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly db: Database,
    private readonly systemUrl: string,
    private readonly log: Logger,
  ) {}

  private key(tenantId: string, participantId: string): string {
    return `${tenantId}\u0000${participantId}`;
  }

  /** Adds a stream; throws a message when a limit is reached. */
  async subscribe(subscriber: StreamSubscriber): Promise<() => void> {
    const key = this.key(subscriber.tenantId, subscriber.participantId);
    const set = this.subscribers.get(key) ?? new Set();
    if (this.count >= STREAMS_PER_PROCESS_MAX) throw new Error('this server has too many open live streams; retry shortly');
    if (set.size >= STREAMS_PER_PARTICIPANT_MAX) throw new Error(`a participant may hold at most ${STREAMS_PER_PARTICIPANT_MAX} live streams`);
    await this.ensureListening();
    set.add(subscriber);
    this.subscribers.set(key, set);
    this.count += 1;
    return () => {
      if (set.delete(subscriber)) this.count -= 1;
      if (set.size === 0) this.subscribers.delete(key);
    };
  }

  /** Adds a tenant-level stream; throws a message when a limit is reached. */
  async subscribeTenant(subscriber: TenantStreamSubscriber): Promise<() => void> {
    const set = this.tenantSubscribers.get(subscriber.tenantId) ?? new Set();
    if (this.count >= STREAMS_PER_PROCESS_MAX) throw new Error('this server has too many open live streams; retry shortly');
    if (set.size >= STREAMS_PER_TENANT_MAX) throw new Error(`a tenant may hold at most ${STREAMS_PER_TENANT_MAX} tenant-level event streams`);
    await this.ensureListening();
    set.add(subscriber);
    this.tenantSubscribers.set(subscriber.tenantId, set);
    this.count += 1;
    return () => {
      if (set.delete(subscriber)) this.count -= 1;
      if (set.size === 0) this.tenantSubscribers.delete(subscriber.tenantId);
    };
  }

  private async ensureListening(): Promise<void> {
    if (this.listener || this.closed) return;
    this.connecting ??= (async () => {
      const client = new pg.Client({ connectionString: this.systemUrl, application_name: 'loyalty-live-stream' });
      client.on('error', (error) => {
        this.log.warn({ err: error }, 'live stream listener lost its connection; reconnecting on the next stream');
        this.listener = null;
      });
      await client.connect();
      client.on('notification', (message) => void this.onNotification(message.payload));
      await client.query(`LISTEN ${DISPATCHED_CHANNEL}`);
      this.listener = client;
    })().finally(() => {
      this.connecting = null;
    });
    await this.connecting;
  }

  private async onNotification(payload: string | undefined): Promise<void> {
    if (!payload) return;
    let parsed: { tenant_id?: string; participant_id?: string; event_ids?: string[] };
    try {
      parsed = JSON.parse(payload);
    } catch {
      return;
    }
    if (!parsed.tenant_id || !Array.isArray(parsed.event_ids)) return;
    await this.notifyTenantStreams(parsed.tenant_id, parsed.event_ids);
    if (!parsed.participant_id) return;
    const set = this.subscribers.get(this.key(parsed.tenant_id, parsed.participant_id));
    if (!set || set.size === 0) return;
    // One read per engagement among the open streams, not one per stream.
    const byEngagement = new Map<string, StreamSubscriber[]>();
    for (const subscriber of set) {
      const list = byEngagement.get(subscriber.engagementId) ?? [];
      list.push(subscriber);
      byEngagement.set(subscriber.engagementId, list);
    }
    for (const [engagementId, subscribers] of byEngagement) {
      try {
        const rows = await this.db.tenant(parsed.tenant_id, (tx) =>
          participantEventsByIds(tx, parsed.tenant_id!, parsed.participant_id!, engagementId, parsed.event_ids!),
        );
        for (const subscriber of subscribers) subscriber.push(rows);
      } catch (error) {
        this.log.warn({ err: error }, 'live stream could not read dispatched events');
      }
    }
  }

  private async notifyTenantStreams(tenantId: string, eventIds: string[]): Promise<void> {
    const set = this.tenantSubscribers.get(tenantId);
    if (!set || set.size === 0) return;
    try {
      const rows = await this.db.tenant(tenantId, (tx) => tenantEventsByIds(tx, tenantId, eventIds));
      for (const subscriber of set) subscriber.push(rows);
    } catch (error) {
      this.log.warn({ err: error }, 'tenant event stream could not read dispatched events');
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.connecting?.catch(() => undefined);
    await this.listener?.end().catch(() => undefined);
    this.listener = null;
  }
}
