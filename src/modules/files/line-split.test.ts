import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../platform/errors.js';
import { splitLines } from './formats.js';

/**
 * Review finding 7 (issue 32): a JSON lines import held a whole line in memory
 * before its 64 KiB check. The splitter counts the bytes since the last line
 * end as they arrive and fails at the limit, before the line ends.
 */
test('the JSON lines splitter', async (t) => {
  await t.test('the splitter fails as soon as a line passes the limit, before its newline arrives', async () => {
    const limit = 64 * 1024;
    const chunkBytes = 16 * 1024;
    let pulled = 0;
    async function* oneLongLine() {
      for (let i = 0; i < 100; i++) {
        pulled += 1;
        yield Buffer.alloc(chunkBytes, 0x61);
      }
      pulled += 1;
      yield Buffer.from('\n');
    }
    const seen: number[] = [];
    await assert.rejects(
      async () => {
        for await (const { lineNumber } of splitLines(oneLongLine(), limit)) seen.push(lineNumber);
      },
      (error: unknown) => error instanceof AppError && error.code === 'FILE_LINE_TOO_LONG' && /line 1 /.test(error.message) && /64 KiB/.test(error.message),
    );
    // 5 chunks of 16 KiB are the first to pass 64 KiB: what was held never passed the limit plus one chunk.
    assert.equal(pulled, Math.floor(limit / chunkBytes) + 1);
    assert.deepEqual(seen, []);
  });

  await t.test('the splitter numbers lines across chunks, drops CR and takes a line of exactly the limit', async () => {
    const limit = 8;
    async function* chunks() {
      yield Buffer.from('ab');
      yield Buffer.from('c\r\n\nx');
      yield Buffer.from('y123456\nlast');
    }
    const lines: Array<{ lineNumber: number; line: string }> = [];
    for await (const line of splitLines(chunks(), limit)) lines.push(line);
    assert.deepEqual(lines, [
      { lineNumber: 1, line: 'abc' },
      { lineNumber: 2, line: '' },
      { lineNumber: 3, line: 'xy123456' },
      { lineNumber: 4, line: 'last' },
    ]);
    await assert.rejects(async () => {
      for await (const _ of splitLines((async function* () { yield Buffer.from('123456789\n'); })(), limit)) void _;
    }, /line 1 /);
  });

});
