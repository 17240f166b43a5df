import { Transform, type Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import { parse } from 'csv-parse';
import { AppError, invalid } from '../../platform/errors.js';
import type { FileFormat } from './store.js';

/**
 * Reading and writing the two file formats, one record at a time: CSV (RFC
 * 4180, a header row first, through csv-parse) and JSON lines (one object per
 * line). Nothing here holds more than one record and one stream buffer.
 */

/** The longest record (CSV) or line (JSON lines) accepted, in characters: a bound on what one row may hold in memory. */
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

async function* readJsonLines(input: Readable, checkColumns: (columns: string[]) => void): AsyncGenerator<ParsedRecord> {
  input.setEncoding('utf8');
  const lines = createInterface({ input, crlfDelay: Infinity });
  let checked = false;
  let rowNumber = 0;
  for await (const line of lines) {
    rowNumber += 1;
    if (line.trim() === '') {
      rowNumber -= 1;
      continue;
    }
    if (line.length > RECORD_LENGTH_MAX) {
      yield { rowNumber, data: null, parseError: `the line is longer than ${RECORD_LENGTH_MAX} characters` };
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      yield { rowNumber, data: null, parseError: `the line is not valid JSON: ${(error as Error).message}` };
      continue;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      yield { rowNumber, data: null, parseError: 'the line must be a JSON object' };
      continue;
    }
    if (!checked) {
      checkColumns(Object.keys(value));
      checked = true;
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
