import pino from 'pino';

export type Logger = pino.Logger;

/** Logs go to stderr, so that command-line tools keep stdout for their result. */
export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'loyalty' } }, pino.destination({ dest: 2, sync: false }));
}
