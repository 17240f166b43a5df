import assert from 'node:assert/strict';
import type { TestService } from './helper.js';

/**
 * Console people for tests: sign-in with the `lk_console` cookie and its CSRF
 * token, and invitations accepted through the API, as a person does them.
 */
export interface ConsolePerson {
  email: string;
  cookie: string;
  csrf: string;
  userId: string;
}

export const CONSOLE_TEST_PASSWORD = 'correct horse battery';

function cookieOf(response: { headers: Headers }): string {
  const set = response.headers.get('set-cookie') ?? '';
  const match = /lk_console=([^;]*)/.exec(set);
  assert.ok(match, `no lk_console cookie in ${set}`);
  return `lk_console=${match[1]}`;
}

export async function signInConsole(svc: TestService, email: string, password: string): Promise<ConsolePerson> {
  const response = await svc.request('POST', '/api/v1/console/session', { body: { email, password } });
  assert.equal(response.status, 200, response.text);
  return { email, cookie: cookieOf(response), csrf: response.body.csrf_token, userId: response.body.user.id };
}

/** The headers of a console request: the cookie, and the CSRF token for requests that change something. */
export function asPerson(person: ConsolePerson, write = true): { headers: Record<string, string> } {
  return { headers: write ? { cookie: person.cookie, 'x-csrf-token': person.csrf } : { cookie: person.cookie } };
}

/** Invites a user with a role and accepts the invitation with CONSOLE_TEST_PASSWORD, without signing in; returns the email. */
export async function acceptInvitation(svc: TestService, owner: ConsolePerson, email: string, role: string, extra: Record<string, unknown> = {}): Promise<string> {
  const invited = await svc.request('POST', '/api/v1/admin/users', { ...asPerson(owner), body: { email, role, ...extra } });
  assert.equal(invited.status, 201, invited.text);
  const token = decodeURIComponent(/#token=(.+)$/.exec(invited.body.invite_url)![1]);
  const accepted = await svc.request('POST', '/api/v1/console/invitations/accept', { body: { token, password: CONSOLE_TEST_PASSWORD, name: role } });
  assert.equal(accepted.status, 200, accepted.text);
  assert.equal(accepted.body.user.status, 'active');
  return email;
}

/** Invites a user with a role, accepts the invitation and signs the new user in. */
export async function invitePerson(svc: TestService, owner: ConsolePerson, email: string, role: string, extra: Record<string, unknown> = {}): Promise<ConsolePerson> {
  await acceptInvitation(svc, owner, email, role, extra);
  return signInConsole(svc, email, CONSOLE_TEST_PASSWORD);
}
