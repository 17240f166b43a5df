import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { FastifyPluginAsync } from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import type { JobHandler } from './jobs.js';
import type { Database, Tx } from './db.js';
import type { Config } from '../config.js';
import type { AuthContext } from './auth.js';
import type { RetentionRule } from './retention.js';
import type { Pump } from './pump.js';
import { registerEventScan, type EventScan } from './event-store.js';
import { registerFactHandler, type FactHandler } from './facts.js';
import { registerErasureHandler, type ErasureHandler } from './erasure.js';
import { registerOutboxFollower, type OutboxFollower } from './outbox.js';
import { registerBatchQuestion, type BatchQuestion } from './batch.js';
import { registerExportSource, type ExportSource } from './export-sources.js';
import { registerEngagementCheck, registerSessionCheck, type EngagementCheck, type SessionCheck } from './engagements.js';

/**
 * What a module of `src/modules/<area>/` offers the service. Each module's
 * `index.ts` default-exports one of these; the app finds them by listing the
 * folder, so adding a module touches no shared file.
 */
export interface ServiceModule {
  name: string;
  /** Routes under `/api/v1`. */
  routes?: FastifyPluginAsync;
  /** Routes outside `/api/v1` (for example `/.well-known/events.json`). */
  rootRoutes?: FastifyPluginAsync;
  /** Shared schemas referenced with `Type.Ref` (each has an `$id`). */
  schemas?: TSchema[];
  /** Background jobs by task name (`points.expire`, …). */
  tasks?: Record<string, JobHandler>;
  /** graphile-worker crontab lines for recurring jobs. */
  crontab?: string[];
  /** Loops that move the module's pending markers into queue jobs in batches (run by every worker process; platform/pump.ts). */
  pumps?: Pump[];
  /** What the module deletes once it has served its purpose (run by the platform's retention job). */
  retention?: RetentionRule[];
  /** Reactions to facts (processed events, activity completions, custom facts); see platform/facts.ts. */
  factHandler?: FactHandler;
  /** A reaction to a participant's erasure, in the erasure's transaction (platform/erasure.ts). */
  erasureHandler?: ErasureHandler;
  /** Questions processing asks of every batch, read up front by a batch that knows its tenant (platform/batch.ts). */
  batchQuestions?: Array<BatchQuestion<unknown>>;
  /** What the module writes in the transaction of events it follows (platform/outbox.ts). */
  outboxFollower?: OutboxFollower;
  /** The exports of the module's data, by export kind (platform/export-sources.ts). */
  exportSources?: Record<string, ExportSource>;
  /**
   * Parts of the canonical participant state read (`GET /gamify/state/{participant_id}?include=…`),
   * by include name. Each returns the part's JSON for one participant, already masked for the caller.
   */
  stateParts?: Record<string, StatePart>;
  /**
   * The module that owns custom field definitions names the keys a tenant
   * declared personal, for the one masking step (platform/privacy.ts).
   */
  personalCustomKeys?: (db: Database, tenantId: string) => Promise<ReadonlySet<string>>;
  /**
   * The module that owns engagements answers whether one exists, so that
   * `POST /sessions` refuses sessions for unknown engagements (404).
   */
  engagementExists?: EngagementCheck;
  /** The same module refuses a session a participant may not have (an engagement for a segment; platform/engagements.ts). */
  sessionCheck?: SessionCheck;
  /** The module that stores events lets others read them (platform/event-store.ts). */
  eventScan?: EventScan;
  /**
   * Runs now the tenant's scheduled work that is due on the tenant's clock
   * (`clock.now(tenantId)`): lifecycle steps, expiry. The test clock calls it
   * after advancing a sandbox tenant. Returns what it did, as counts by name
   * (`contests_advanced`, …).
   */
  runDueWork?: (context: { db: Database; config: Config }, tenantId: string) => Promise<Record<string, number>>;
}

export type StatePart = ((tx: Tx, tenantId: string, participantId: string, auth: AuthContext) => Promise<unknown>) | StatementStatePart;

/**
 * A state part that is one read-only statement (`$1` the tenant id, `$2` the
 * participant id, no `$n` inside its string literals) and a function that
 * shapes its rows. When every part a state read asks for has this form, the
 * whole read travels in one round trip (`db.tenantReadAll`). `shape` must not
 * change the rows: identical concurrent reads share them.
 */
export interface StatementStatePart {
  statement: string;
  shape(rows: Array<Record<string, any>>): unknown;
}

export function isStatementPart(part: StatePart): part is StatementStatePart {
  return typeof part !== 'function';
}

/** Reads one state part inside the caller's transaction, whichever its form. */
export async function readStatePart(part: StatePart, tx: Tx, tenantId: string, participantId: string, auth: AuthContext): Promise<unknown> {
  if (isStatementPart(part)) return part.shape((await tx.query(part.statement, [tenantId, participantId])).rows);
  return part(tx, tenantId, participantId, auth);
}

const modulesDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../modules');
// `npm start` runs the compiled JavaScript under dist/; tests and tsx run the TypeScript sources.
const MODULE_ENTRY = import.meta.url.endsWith('.ts') ? 'index.ts' : 'index.js';

export async function loadModules(): Promise<ServiceModule[]> {
  const names = fs
    .readdirSync(modulesDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .filter((name) => fs.existsSync(path.join(modulesDir, name, MODULE_ENTRY)))
    .sort();
  const modules: ServiceModule[] = [];
  for (const name of names) {
    const imported = (await import(pathToFileURL(path.join(modulesDir, name, MODULE_ENTRY)).href)) as { default?: ServiceModule };
    if (!imported.default) throw new Error(`src/modules/${name}/index.ts must default-export a ServiceModule`);
    modules.push(imported.default);
    if (imported.default.factHandler) registerFactHandler(imported.default.name, imported.default.factHandler);
    if (imported.default.erasureHandler) registerErasureHandler(imported.default.name, imported.default.erasureHandler);
    for (const question of imported.default.batchQuestions ?? []) registerBatchQuestion(question);
    if (imported.default.outboxFollower) registerOutboxFollower(imported.default.name, imported.default.outboxFollower);
    for (const [kind, source] of Object.entries(imported.default.exportSources ?? {})) registerExportSource(imported.default.name, kind, source);
    if (imported.default.engagementExists) registerEngagementCheck(imported.default.name, imported.default.engagementExists);
    if (imported.default.sessionCheck) registerSessionCheck(imported.default.sessionCheck);
    if (imported.default.eventScan) registerEventScan(imported.default.name, imported.default.eventScan);
  }
  return modules;
}
