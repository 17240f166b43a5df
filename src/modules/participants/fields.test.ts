import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkCountryCode,
  checkDate,
  checkEmail,
  checkGender,
  checkMobileNumber,
  checkPostalCode,
  checkStandardField,
  maskDateOfBirth,
  maskEmail,
  maskFullName,
  maskMobileNumber,
  maskName,
} from './fields.js';

test('masks: the exact forms of the spec', () => {
  assert.equal(maskEmail('zenobia.q@example.org'), 'z***@example.org');
  assert.equal(maskEmail('Ä@b.de'), 'Ä***@b.de');
  assert.equal(maskMobileNumber('+4915112345678'), '***5678');
  assert.equal(maskName('Zenobia'), 'Ze***');
  assert.equal(maskName('Al'), 'Al***');
  assert.equal(maskName('J'), 'J***');
  assert.equal(maskName('Ølga'), 'Øl***');
  assert.equal(maskFullName('Zenobia Quartermaine'), 'Z.Q.');
  assert.equal(maskFullName('ada  king lovelace'), 'A.K.L.');
  assert.equal(maskDateOfBirth('1987-03-14'), '1987');
});

test('email: syntax checked, domain lower-cased', () => {
  assert.deepEqual(checkEmail(' Zen.Q@Example.ORG '), { ok: true, value: 'Zen.Q@example.org' });
  for (const bad of ['plain', '@example.org', 'a@b', 'a@@b.org', 'a b@c.org', 'a..b@c.org', '.a@c.org', 'a@-c.org', 'a@c.123', `${'a'.repeat(65)}@c.org`, 42]) {
    assert.equal(checkEmail(bad).ok, false, `accepted ${String(bad)}`);
  }
});

test('mobile number: E.164 after dropping punctuation', () => {
  assert.deepEqual(checkMobileNumber('+49 151 1234-5678'), { ok: true, value: '+4915112345678' });
  assert.deepEqual(checkMobileNumber('0049 (151) 12345678'), { ok: true, value: '+4915112345678' });
  for (const bad of ['015112345678', '+0151123456', '+49151abc5678', '+1234567', '+1234567890123456', 'phone']) {
    assert.equal(checkMobileNumber(bad).ok, false, `accepted ${bad}`);
  }
});

test('dates, countries, genders and postal codes', () => {
  const today = new Date('2026-11-21T12:00:00Z');
  assert.deepEqual(checkDate('1987-03-14', 'date_of_birth', today), { ok: true, value: '1987-03-14' });
  for (const bad of ['1987-02-30', '1987-13-01', '14.03.1987', '1899-12-31', '2026-11-22', '1987-3-14']) {
    assert.equal(checkDate(bad, 'date_of_birth', today).ok, false, `accepted ${bad}`);
  }
  assert.deepEqual(checkCountryCode('de'), { ok: true, value: 'DE' });
  for (const bad of ['ZZ', 'DEU', 'D', '12']) assert.equal(checkCountryCode(bad).ok, false, `accepted ${bad}`);
  assert.deepEqual(checkGender('Female'), { ok: true, value: 'female' });
  assert.equal(checkGender('f').ok, false);
  assert.deepEqual(checkPostalCode('sw1a 1aa'), { ok: true, value: 'SW1A 1AA' });
  assert.equal(checkPostalCode('06484;DROP').ok, false);
  assert.equal(checkStandardField('first_name', 'x'.repeat(101), today).ok, false);
  assert.equal(checkStandardField('first_name', 'Zen\u0000', today).ok, false);
  assert.equal(checkStandardField('city', '12345', today).ok, false);
});
