import { createRequire } from 'node:module';

/**
 * Parameter values written into SQL text as literals, for messages of several
 * statements sent in one round trip (db.ts): each reads exactly as the same
 * value sent as a parameter.
 */

// node-postgres's own conversion of parameter values to text.
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue(value: unknown): string | Buffer | null };

/** A value as an escaped literal, converted to text as node-postgres converts a parameter. */
export function inlineLiteral(value: unknown): string {
  if (typeof value === 'string') return escapeLiteral(value);
  if (typeof value === 'number' && Number.isFinite(value)) return `'${value}'`;
  const text = prepareValue(value);
  if (text === null) return 'NULL';
  if (Buffer.isBuffer(text)) throw new Error('an inlined statement does not take binary parameters');
  return escapeLiteral(text);
}

/**
 * `pg.escapeLiteral`'s result (quotes doubled; with a backslash, backslashes
 * doubled in an E'' string), without its character-by-character
 * concatenation, whose garbage cost a hot message more than its database work.
 */
export function escapeLiteral(text: string): string {
  const quoted = `'${text.includes("'") ? text.replaceAll("'", "''") : text}'`;
  return text.includes('\\') ? ` E${quoted.replaceAll('\\', '\\\\')}` : quoted;
}

/** `$n` replaced by the n-th value as an escaped literal (the statement must not contain `$n` inside its own string literals). */
export function inlineStatement(text: string, values: readonly unknown[]): string {
  return text.replace(/\$(\d+)/g, (_, n: string) => {
    const index = Number(n) - 1;
    if (index < 0 || index >= values.length) throw new Error(`inlined statement: $${n} has no value`);
    return inlineLiteral(values[index]);
  });
}
