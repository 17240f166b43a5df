import { useCallback, useMemo, useSyncExternalStore } from 'react';
import { EngagementDataStore, type EngagementData } from './engagement-store.js';
import type { EngagementSession, EngagementSessionOptions } from './headless.js';

/**
 * `@loyalty/sdk/react`: React bindings over the headless API. React is an
 * optional peer dependency of the package; only this entry imports it.
 */
export interface EngagementDataResult {
  data: EngagementData | null;
  /** True until the first data (or error) arrives. */
  loading: boolean;
  /** True while a re-read (live update or refresh) runs; `data` stays the previous one meanwhile. */
  refreshing: boolean;
  error: unknown;
  refresh: () => Promise<void>;
}

/**
 * One store per session object, and per site and session for options objects
 * (which are often written inline, a new object at every render), so that
 * components showing one engagement share one load and one stream.
 */
const storesBySession = new WeakMap<EngagementSession, EngagementDataStore>();
const storesByOptions = new Map<string, EngagementDataStore>();

function isSession(source: EngagementSession | EngagementSessionOptions): source is EngagementSession {
  return typeof (source as EngagementSession).load === 'function';
}

function storeFor(source: EngagementSession | EngagementSessionOptions | EngagementDataStore): EngagementDataStore {
  if (source instanceof EngagementDataStore) return source;
  if (isSession(source)) {
    let store = storesBySession.get(source);
    if (!store) storesBySession.set(source, (store = new EngagementDataStore(source)));
    return store;
  }
  const key = JSON.stringify([source.baseUrl, source.tenantSlug, source.siteSlug, source.sessionId ?? null, source.displayName ?? null]);
  let store = storesByOptions.get(key);
  if (!store) storesByOptions.set(key, (store = new EngagementDataStore(source)));
  return store;
}

/**
 * The engagement, the participant's balance and badges, loading and error
 * state, kept current by the live event stream. Pass a session from
 * createEngagementSession (recommended: create it once, outside render), its
 * options, or an EngagementDataStore.
 */
export function useEngagementData(source: EngagementSession | EngagementSessionOptions | EngagementDataStore): EngagementDataResult {
  const store = useMemo(() => storeFor(source), [source]);
  const snapshot = useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);
  const refresh = useCallback(() => store.refresh(), [store]);
  return { data: snapshot.data, loading: snapshot.data === null && snapshot.error === null, refreshing: snapshot.refreshing, error: snapshot.error, refresh };
}

let warnedUseEngagement = false;

/**
 * @deprecated Use useEngagementData (same arguments, same result). Warns once
 * per process; removed in 1.0.0.
 */
export function useEngagement(source: EngagementSession | EngagementSessionOptions | EngagementDataStore): EngagementDataResult {
  if (!warnedUseEngagement) {
    warnedUseEngagement = true;
    console.warn('[@loyalty/sdk] useEngagement is deprecated; use useEngagementData (same arguments, same result).');
  }
  return useEngagementData(source);
}

export { EngagementDataStore };
export type { EngagementData, EngagementSnapshot } from './engagement-store.js';
