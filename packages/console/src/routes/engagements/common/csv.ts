/** One code read from the file, with the line it came from (for error messages). */
export interface CodeRow {
  line: number;
  code: string;
}

const ROWS_MAX = 1_000_000;

/**
 * The codes of a CSV file: the first field of each line (RFC 4180 quoting,
 * commas or semicolons between fields), blank lines skipped, a first line
 * whose first field is `code` or `codes` taken as a header. Whether a code is
 * acceptable is the server's rule, not this parser's.
 */
export function parseCodes(text: string): CodeRow[] {
  const rows: CodeRow[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\n|\r/);
  for (let index = 0; index < lines.length && rows.length < ROWS_MAX; index += 1) {
    const code = firstField(lines[index]).trim();
    if (code === '') continue;
    if (rows.length === 0 && index === firstContentLine(lines) && /^codes?$/i.test(code)) continue;
    rows.push({ line: index + 1, code });
  }
  return rows;
}

function firstContentLine(lines: string[]): number {
  return lines.findIndex((line) => line.trim() !== '');
}

function firstField(line: string): string {
  if (!line.startsWith('"')) return line.split(/[,;]/, 1)[0];
  let value = '';
  for (let i = 1; i < line.length; i += 1) {
    if (line[i] !== '"') {
      value += line[i];
      continue;
    }
    if (line[i + 1] === '"') {
      value += '"';
      i += 1;
      continue;
    }
    return value;
  }
  return value;
}

export function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
