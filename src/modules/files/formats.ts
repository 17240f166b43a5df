import { Transform, type Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { AppError, invalid } from '../../platform/errors.js';
import { isStorableText, storableText, unstorableReason, unstorableTextIn } from '../../platform/body-check.js';
import type { FileFormat } from './store.js';

/**
 * Reading and writing the two file formats, one record at a time: CSV (RFC
 * 4180, a header row first, through csv-parse) and JSON lines (one object per
 * line). Nothing here holds more than one record and one stream buffer.
 */

/**
 * The longest record accepted: a CSV record in characters, a JSON line in
 * bytes (before its LF). A bound on what one row may hold in memory.
 */
export const RECORD_LENGTH_MAX = 64 * 1024;
/** The most columns a file may have. */
export const COLUMNS_MAX = 200;

export interface ParsedRecord {
  /** 1 for the first data row (the CSV header is not counted; in JSON lines, blank lines are skipped but counted). */
  rowNumber: number;
  data: Record<string, unknown> | null;
  parseError: string | null;
}

/**
 * Counts the bytes of an upload and fails the stream with a 413 once they pass
 * `limit`, so that an oversized body is refused while it arrives, not after.
 */
export function byteLimit(limit: number, onBytes: (bytes: number, chunk: Buffer) => void): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      onBytes(seen, chunk);
      if (seen > limit) callback(new AppError('payload_too_large', 'PAYLOAD_TOO_LARGE', `the file is larger than ${limit} bytes`));
      else callback(null, chunk);
    },
  });
}

/**
 * The records of an upload. The CSV header (or, for JSON lines, the keys of
 * the first record) is handed to `checkColumns` before any row is yielded,
 * which throws to refuse the file. A CSV whose structure is broken (an
 * unclosed quote) is refused whole (400 naming the line); a row with the
 * wrong number of cells, or a JSON line that is not an object, becomes that
 * row's error and the rest go on.
 */
export async function* readRecords(input: Readable, format: FileFormat, checkColumns: (columns: string[]) => void): AsyncGenerator<ParsedRecord> {
  if (format === 'csv') yield* readCsv(input, checkColumns);
  else yield* readJsonLines(input, checkColumns);
}

async function* readCsv(input: Readable, checkColumns: (columns: string[]) => void): AsyncGenerator<ParsedRecord> {
  const parser = input.pipe(
    parse({ bom: true, relax_column_count: true, skip_empty_lines: true, max_record_size: RECORD_LENGTH_MAX, info: true }),
  );
  // An error of the input (the byte limit) reaches the parser's consumer.
  input.on('error', (error) => parser.destroy(error));
  let columns: string[] | null = null;
  let rowNumber = 0;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      if (!columns) {
        columns = record.map((name) => name.trim());
        if (columns.length > COLUMNS_MAX) throw invalid(`the file has ${columns.length} columns; at most ${COLUMNS_MAX}`, 'FILE_TOO_MANY_COLUMNS');
        checkColumns(columns);
        continue;
      }
      rowNumber += 1;
      if (record.length !== columns.length) {
        yield { rowNumber, data: null, parseError: `line ${info.lines} has ${record.length} cells; the header has ${columns.length}` };
        continue;
      }
      // A cell PostgreSQL cannot store (a NUL byte) is the row's error, named by row and column, not a failed upload.
      const bad = record.findIndex((cell) => !isStorableText(cell));
      if (bad >= 0) {
        yield { rowNumber, data: null, parseError: `row ${rowNumber} (line ${info.lines}), column ${storableText(columns[bad])} ${unstorableReason(record[bad])}` };
        continue;
      }
      const data: Record<string, unknown> = {};
      columns.forEach((column, i) => {
        data[column] = record[i];
      });
      yield { rowNumber, data, parseError: null };
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    const code = (error as { code?: string }).code;
    if (typeof code === 'string' && code.startsWith('CSV_')) throw invalid(`the CSV cannot be read: ${(error as Error).message}`, 'FILE_INVALID_CSV');
    throw error;
  }
  if (!columns) throw invalid('the file is empty: a CSV import needs a header row naming its columns', 'FILE_EMPTY');
}

/** A JSON lines line longer than RECORD_LENGTH_MAX: the file is refused whole, as a broken CSV is. */
export const lineTooLong = (lineNumber: number, lengthMax = RECORD_LENGTH_MAX) =>
  invalid(
    `line ${lineNumber} of the file is longer than ${lengthMax} bytes (${lengthMax / 1024} KiB), the longest line a JSON lines import takes`,
    'FILE_LINE_TOO_LONG',
    { line: lineNumber, line_bytes_max: lengthMax },
  );

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const BOM = '\uFEFF';

/**
 * The lines of a byte stream, with their numbers (1 for the first, blank
 * lines counted), split on LF (a CRLF's CR is dropped). The bytes since the
 * last line end are counted as they arrive, and the stream fails with
 * `lineTooLong` as soon as they pass `lengthMax`, before the line ends: it
 * never holds more than `lengthMax` bytes of a line plus the chunk being read.
 * Splitting bytes on LF is safe in UTF-8, where 0x0A is never part of another
 * character; each line is decoded on its own.
 */
export async function* splitLines(input: AsyncIterable<Buffer>, lengthMax = RECORD_LENGTH_MAX): AsyncGenerator<{ lineNumber: number; line: string }> {
  let held: Buffer[] = [];
  let heldBytes = 0;
  let lineNumber = 1;
  const lineOf = (tail: Buffer): string => {
    let bytes = held.length === 0 ? tail : Buffer.concat([...held, tail], heldBytes + tail.length);
    if (bytes.length > 0 && bytes[bytes.length - 1] === CARRIAGE_RETURN) bytes = bytes.subarray(0, bytes.length - 1);
    held = [];
    heldBytes = 0;
    const line = bytes.toString('utf8');
    return lineNumber === 1 && line.startsWith(BOM) ? line.slice(1) : line;
  };
  for await (const chunk of input) {
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE, start); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      if (heldBytes + (end - start) > lengthMax) throw lineTooLong(lineNumber, lengthMax);
      yield { lineNumber, line: lineOf(chunk.subarray(start, end)) };
      lineNumber += 1;
      start = end + 1;
    }
    if (start < chunk.length) {
      heldBytes += chunk.length - start;
      if (heldBytes > lengthMax) throw lineTooLong(lineNumber, lengthMax);
      // A copy: the rest of the chunk is not kept alive through the view.
      held.push(Buffer.from(chunk.subarray(start)));
    }
  }
  if (heldBytes > 0) yield { lineNumber, line: lineOf(Buffer.alloc(0)) };
}

async function* readJsonLines(input: Readable, checkColumns: (columns: string[]) => void): AsyncGenerator<ParsedRecord> {
  let checked = false;
  let rowNumber = 0;
  for await (const { lineNumber, line } of splitLines(input)) {
    if (line.trim() === '') continue;
    rowNumber += 1;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      // V8's message quotes the line, which may hold what the database cannot store.
      yield { rowNumber, data: null, parseError: `line ${lineNumber} is not valid JSON: ${storableText((error as Error).message)}` };
      continue;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      yield { rowNumber, data: null, parseError: `line ${lineNumber} must be a JSON object` };
      continue;
    }
    if (!checked) {
      checkColumns(Object.keys(value));
      checked = true;
    }
    const text = unstorableTextIn(value, 'row');
    if (text) {
      // "row.first_name contains U+0000 …" as "row 3 (line 4), column first_name contains U+0000 …".
      yield { rowNumber, data: null, parseError: text.replace(/^row(\.)?/, (_all, dot) => `row ${rowNumber} (line ${lineNumber})${dot ? ', column ' : ''}`) };
      continue;
    }
    yield { rowNumber, data: value as Record<string, unknown>, parseError: null };
  }
  if (!checked && rowNumber === 0) throw invalid('the file is empty: a JSON lines import needs at least one object', 'FILE_EMPTY');
}

// ---- writing ----------------------------------------------------------------

const NEEDS_QUOTES = /[",\r\n]/;
/** Cells a spreadsheet would run as a formula (OWASP "CSV injection"), unless they are plain numbers. */
const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^[+-]?\d+(\.\d+)?$/;

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text = typeof value === 'string' ? value : value instanceof Date ? value.toISOString() : typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (typeof value === 'string' && FORMULA_START.test(text) && !PLAIN_NUMBER.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One CSV line (CRLF-terminated, RFC 4180) of the values of `columns`. */
export function csvLine(columns: string[], record: Record<string, unknown>): string {
  return `${columns.map((column) => csvCell(record[column])).join(',')}\r\n`;
}

export function csvHeader(columns: string[]): string {
  return `${columns.map(csvCell).join(',')}\r\n`;
}

export function jsonLine(record: Record<string, unknown>): string {
  return `${JSON.stringify(record)}\n`;
}

export const CONTENT_TYPES: Record<FileFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  jsonl: 'application/x-ndjson; charset=utf-8',
};

/** Media types an upload of each format may be sent as. */
export const UPLOAD_MEDIA_TYPES: Record<FileFormat, string[]> = {
  csv: ['text/csv'],
  jsonl: ['application/x-ndjson', 'application/jsonl', 'application/jsonlines'],
};
