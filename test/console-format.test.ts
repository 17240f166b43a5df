import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatFor } from '../packages/console/src/lib/zoned.js';

/** The console's one rule for time: shown and entered in the tenant's zone, `YYYY-MM-DD HH:mm`, across a change of offset. */
test('times in the tenant\'s zone, both ways, across daylight saving', () => {
  const berlin = formatFor('Europe/Berlin', 'en');
  assert.equal(berlin.dateTime('2026-07-01T10:00:00Z'), '2026-07-01 12:00', 'summer: UTC+2');
  assert.equal(berlin.dateTime('2026-12-01T10:00:00Z'), '2026-12-01 11:00', 'winter: UTC+1');
  assert.equal(berlin.date('2026-12-31T23:30:00Z'), '2027-01-01', 'the tenant\'s day, not UTC\'s');
  assert.equal(berlin.toZonedInput('2026-03-29T00:30:00Z'), '2026-03-29T01:30');
  assert.equal(berlin.fromZonedInput('2026-03-29T01:30'), '2026-03-29T00:30:00.000Z', 'before the switch: +1');
  assert.equal(berlin.fromZonedInput('2026-03-29T03:30'), '2026-03-29T01:30:00.000Z', 'after the switch: +2');
  assert.equal(berlin.fromZonedInput('2026-10-25T12:00'), '2026-10-25T11:00:00.000Z');
  for (const iso of ['2026-01-15T08:05:00.000Z', '2026-06-15T23:59:00.000Z']) assert.equal(berlin.fromZonedInput(berlin.toZonedInput(iso)), iso, 'a round trip keeps the instant');
  const kolkata = formatFor('Asia/Kolkata', 'en');
  assert.equal(kolkata.dateTime('2026-01-01T00:00:00Z'), '2026-01-01 05:30');
  assert.match(kolkata.zoneLabel, /^Asia\/Kolkata \(UTC\+05:30\)$/);
  assert.equal(formatFor('Not/AZone', 'en').timeZone, 'UTC', 'an unknown zone falls back to UTC');
  assert.equal(berlin.dateTime(null), '—');
  assert.equal(berlin.fromZonedInput(''), '');
});

test('numbers and money in the console\'s language', () => {
  assert.equal(formatFor('UTC', 'en', 'EUR').money(1250), '€1,250.00');
  assert.equal(formatFor('UTC', 'de', 'EUR').money(1250), '1.250,00\u00a0€');
  assert.equal(formatFor('UTC', 'de').number(12500), '12.500');
  assert.equal(formatFor('UTC', 'en').number(12500), '12,500');
});
