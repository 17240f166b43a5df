#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { LoyaltyError } from './errors.js';
import { createLoyaltyClient } from './client.js';
import type { WebhookEnvelope } from './types.js';
import { forwardEnvelope, newSigningSecret, type ForwardResult } from './cli-forward.js';

/**
 * `loyalty listen --forward-to <url>`: relays a sandbox tenant's events from
 * the service's tenant event stream (GET /api/v1/gamify/webhooks/stream) to a
 * receiver on the developer's machine, each one signed exactly as a webhook
 * delivery is, with a signing secret printed at start, so that the receiver's
 * `verifyWebhook(rawBody, headers, secret)` accepts it. Plain Node (20+): fetch,
 * the SDK's SSE reader (reconnects with Last-Event-ID) and node:crypto.
 */
const USAGE = `Usage: loyalty listen --forward-to <url> [options]

Relays the events of a SANDBOX tenant to a local receiver, signed like webhook deliveries.

Options:
  --forward-to <url>   where to POST each event (required), e.g. http://localhost:4000/hooks
  --events <patterns>  event names or patterns, comma-separated or repeated (default "*"), e.g. points.*
  --api-key <key>      a sandbox key (lk_test_…) with the admin or gamify:admin scope; default $LOYALTY_API_KEY
  --base-url <url>     the service (default $LOYALTY_BASE_URL or http://localhost:3000)
  --secret <whsec_…>   the signing secret to use (default $LOYALTY_WEBHOOK_SECRET, or a new one per run)
  --timeout <seconds>  how long the receiver may take to answer (default 10)
  -h, --help           this text
`;
const LIVE_KEY_PREFIX = 'lk_live_';
const USER_AGENT = 'loyalty-sdk-listen/1';
const STREAM_PATH = '/api/v1/gamify/webhooks/stream';
const DEFAULT_BASE_URL = 'http://localhost:3000';
const DEFAULT_TIMEOUT_SECONDS = 10;
const TIMEOUT_SECONDS_MAX = 60;

interface ListenOptions {
  forwardTo: URL;
  events: string[] | null;
  apiKey: string;
  baseUrl: string;
  secret: string;
  timeoutMs: number;
}

class UsageError extends Error {}

function readOptions(argv: string[], env: NodeJS.ProcessEnv): ListenOptions | 'help' {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'forward-to': { type: 'string' },
      events: { type: 'string', multiple: true },
      'api-key': { type: 'string' },
      'base-url': { type: 'string' },
      secret: { type: 'string' },
      timeout: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  if (positionals[0] !== 'listen' || positionals.length > 1) throw new UsageError(positionals.length === 0 ? 'name a command: listen' : `unknown command "${positionals.join(' ')}"; the command is listen`);
  const forwardText = values['forward-to'];
  if (!forwardText) throw new UsageError('--forward-to <url> is required (where your app receives webhooks, e.g. http://localhost:4000/hooks)');
  let forwardTo: URL;
  try {
    forwardTo = new URL(forwardText);
  } catch {
    throw new UsageError(`--forward-to "${forwardText}" is not a URL`);
  }
  if (forwardTo.protocol !== 'http:' && forwardTo.protocol !== 'https:') throw new UsageError(`--forward-to must be an http or https URL (got ${forwardTo.protocol})`);
  const apiKey = values['api-key'] ?? env.LOYALTY_API_KEY ?? '';
  if (apiKey === '') throw new UsageError('no API key: set LOYALTY_API_KEY or pass --api-key (a sandbox key, lk_test_…)');
  if (apiKey.startsWith(LIVE_KEY_PREFIX)) {
    throw new UsageError(
      'refusing a live key (lk_live_…): listen forwards the events of a sandbox tenant only. Use a sandbox tenant\'s key (lk_test_…); ' +
        'a live tenant\'s events reach your receivers through webhook destinations',
    );
  }
  const secret = values.secret ?? env.LOYALTY_WEBHOOK_SECRET ?? newSigningSecret();
  if (!secret.startsWith('whsec_') || secret.length < 16) throw new UsageError('--secret must be a signing secret of the form whsec_… (at least 10 characters after the prefix)');
  const timeoutSeconds = values.timeout === undefined ? DEFAULT_TIMEOUT_SECONDS : Number(values.timeout);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0 || timeoutSeconds > TIMEOUT_SECONDS_MAX) throw new UsageError(`--timeout must be a number of seconds from 0 to ${TIMEOUT_SECONDS_MAX}`);
  const events = values.events?.flatMap((value) => value.split(',')).map((value) => value.trim()).filter((value) => value !== '') ?? [];
  const baseUrl = (values['base-url'] ?? env.LOYALTY_BASE_URL ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  return { forwardTo, events: events.length > 0 ? events : null, apiKey, baseUrl, secret, timeoutMs: timeoutSeconds * 1000 };
}

function time(): string {
  return new Date().toISOString().slice(11, 19);
}

function line(envelope: WebhookEnvelope, target: URL, result: ForwardResult): string {
  const outcome = result.status !== null ? `[${result.status}]` : `[failed: ${result.error}]`;
  return `${time()}  ${envelope.event}  ${envelope.id}  -> POST ${target.href} ${outcome} ${result.durationMs} ms`;
}

/** The text for a failed connection: which URL, and plainly when nothing answers there. */
function unreachable(error: unknown, baseUrl: string, everConnected: boolean): string {
  const cause = (error as { cause?: { code?: string } }).cause?.code;
  if (cause === 'ECONNREFUSED' || cause === 'ENOTFOUND' || cause === 'EAI_AGAIN' || cause === 'EHOSTUNREACH' || cause === 'ECONNRESET') {
    return everConnected
      ? `the service at ${baseUrl} stopped answering (${cause})`
      : `nothing answers at ${baseUrl} (${cause}): is the service running there? Start it (npm start) or name it with --base-url`;
  }
  return `the stream from ${baseUrl} was interrupted (${error instanceof Error ? error.message : String(error)})`;
}

/** Runs `listen` until interrupted; resolves with the exit code. */
function listen(options: ListenOptions, out: NodeJS.WritableStream = process.stdout, err: NodeJS.WritableStream = process.stderr): Promise<number> {
  out.write(`Your webhook signing secret is ${options.secret} (pass it to verifyWebhook in your app; --secret keeps it across runs)\n`);
  const streamUrl = `${options.baseUrl}${STREAM_PATH}`;
  out.write(`Connecting to ${streamUrl} …\n`);
  return new Promise((resolve) => {
    let connected = false;
    let everConnected = false;
    // Events are forwarded one after another, in the order the stream sends them.
    let queue: Promise<void> = Promise.resolve();
    const client = createLoyaltyClient({ baseUrl: options.baseUrl, apiKey: options.apiKey, headers: { 'user-agent': USER_AGENT } });
    const stop = client.streamTenantEvents({
      events: options.events ?? undefined,
      onOpen: () => {
        if (connected) return;
        connected = true;
        everConnected = true;
        out.write(`Ready. Connected to ${streamUrl}; forwarding ${options.events?.join(',') ?? 'all'} events of the sandbox tenant to ${options.forwardTo.href} (Ctrl-C to quit)\n`);
      },
      onEvent: (envelope) => {
        queue = queue.then(async () => {
          const result = await forwardEnvelope(options.forwardTo, envelope, options.secret, options.timeoutMs);
          out.write(`${line(envelope, options.forwardTo, result)}\n`);
        });
      },
      onReset: () => err.write(`${time()}  the stream could not resume where it stopped (events are kept 30 days); events may have been missed\n`),
      onError: (error) => {
        if (error instanceof LoyaltyError && error.status >= 400 && error.status < 500 && error.status !== 429) {
          err.write(`refused by ${streamUrl} (${error.status} ${error.code}): ${error.detail}\n`);
          stop();
          resolve(1);
          return;
        }
        connected = false;
        err.write(`${time()}  ${unreachable(error, options.baseUrl, everConnected)}; retrying\n`);
      },
    });
    const quit = () => {
      stop();
      void queue.finally(() => resolve(0));
    };
    process.once('SIGINT', quit);
    process.once('SIGTERM', quit);
  });
}

async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  let options: ListenOptions | 'help';
  try {
    options = readOptions(argv, env);
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`loyalty: ${(error as Error).message}\n\n${USAGE}`);
      return 2;
    }
    throw error;
  }
  if (options === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  return listen(options);
}

main(process.argv.slice(2), process.env).then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`loyalty: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
