import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientIp, publicOrigin } from '../../platform/http.js';
import { CONSOLE_COOKIE, CONSOLE_SESSION_TTL_SECONDS } from '../../platform/console-auth.js';
import * as service from './service.js';
import {
  AcceptInvitationBody,
  AuditPage,
  AuditQuery,
  ChangePasswordBody,
  ConsoleSessionResponse,
  InviteUserBody,
  InvitedUser,
  ListUsersQuery,
  SignInBody,
  UpdateUserBody,
  UserList,
  UserParams,
} from './schemas.js';

const tags = ['console'];

/**
 * Whether the service's public address (PUBLIC_BASE_URL) is https: then the
 * console cookie is always `Secure`. Unset or http, the request's own protocol
 * decides, as before (a local http run keeps working).
 */
function isHttpsUrl(url: string | null): boolean {
  if (!url) return false;
  try {
    return new URL(url).protocol === 'https:';
  } catch {
    return false;
  }
}
/** Console routes any signed-in person may call, whatever their role. */
const SELF = 'account:self' as const;

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config, authenticator } = app.ctx;
  const signingKey = app.ctx.signingKey;

  // Behind a TLS-terminating proxy without TRUST_PROXY every request looks like http: an https public address decides instead.
  const publicBaseIsHttps = isHttpsUrl(config.publicBaseUrl);

  function setCookie(request: FastifyRequest, reply: FastifyReply, value: string, maxAgeSeconds: number): void {
    reply.setCookie(CONSOLE_COOKIE, value, {
      httpOnly: true,
      sameSite: 'strict',
      secure: publicBaseIsHttps || request.protocol === 'https',
      path: '/',
      maxAge: maxAgeSeconds,
    });
  }

  app.post(
    '/console/session',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        operationId: 'createConsoleSession',
        summary: 'Sign in to the console: sets the HttpOnly, SameSite=Strict session cookie and returns the CSRF token',
        description:
          'Sets `lk_console` (HttpOnly, SameSite=Strict, Path=/; Secure when PUBLIC_BASE_URL is https, or when the request itself was). Every admin route then accepts the cookie; a request that changes something ' +
          'must also send `X-CSRF-Token` with the `csrf_token` returned here. The sign-in lasts 12 hours at most and ends after two hours without a request.',
        body: SignInBody,
        response: {
          200: ConsoleSessionResponse,
          401: { ...Type.Ref('ErrorResponse'), description: 'The email or the password is wrong, or the user is disabled or only invited (one answer for all). Codes: AUTH_UNAUTHENTICATED.' },
        },
      },
    },
    async (request, reply) => {
      const { cookie, body } = await service.signIn(db, signingKey, app.ctx.rateLimits, request.body.email, request.body.password, clientIp(request) ?? null);
      setCookie(request, reply, cookie, CONSOLE_SESSION_TTL_SECONDS);
      reply.header('Cache-Control', 'no-store');
      return body;
    },
  );

  app.get(
    '/console/session',
    {
      config: { auth: 'admin', permission: SELF },
      schema: { tags, operationId: 'getConsoleSession', summary: 'The signed-in user, their permissions and the CSRF token', response: { 200: ConsoleSessionResponse } },
    },
    async (request, reply) => {
      reply.header('Cache-Control', 'no-store');
      return service.currentSession(db, signingKey, request.auth!);
    },
  );

  app.delete(
    '/console/session',
    {
      config: { auth: 'admin', permission: SELF },
      schema: { tags, operationId: 'deleteConsoleSession', summary: 'Sign out: ends this console sign-in and clears the cookie', response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      await service.signOut(db, authenticator, request.auth!);
      setCookie(request, reply, '', 0);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/console/password',
    {
      config: { auth: 'admin', permission: SELF },
      schema: {
        tags,
        operationId: 'changeConsolePassword',
        summary: "Change the signed-in user's password; their other sign-ins end",
        body: ChangePasswordBody,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await service.changePassword(db, authenticator, request.auth!, request.body.current_password, request.body.new_password);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/auth/logout',
    {
      config: { auth: 'jwt' },
      schema: {
        tags: ['access'],
        operationId: 'adminLogout',
        summary: "Log out: ends this admin login token and every other one of its user",
        description:
          'Takes the admin login token to end (`Authorization: Bearer <jwt>`); a console sign-in (cookie) is ended with `DELETE /api/v1/console/session` instead, and an API key is refused (401). ' +
          "Every token of the user ends, since tokens carry their user's token version and this bumps it; so do a password change, a console sign-out, a role change and a disable. " +
          "The user's console sign-ins go on.",
        response: { 204: Type.Null({ description: 'Logged out: the token answers 401 from now on.' }) },
      },
    },
    async (request, reply) => {
      await service.logout(db, authenticator, request.auth!);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/console/invitations/accept',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        operationId: 'acceptConsoleInvitation',
        summary: 'Accept an invitation: choose a password; then sign in',
        body: AcceptInvitationBody,
        response: { 200: Type.Object({ user: Type.Ref('ConsoleUser') }) },
      },
    },
    async (request) => service.acceptInvitation(db, request.body),
  );

  app.get(
    '/admin/users',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'listConsoleUsers', summary: "The tenant's console users", querystring: ListUsersQuery, response: { 200: UserList } },
    },
    async (request) => service.listUsers(db, request.auth!.tenantId, request.query),
  );

  app.post(
    '/admin/users',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'inviteConsoleUser',
        summary: 'Invite a console user: returns the invite link to hand over (no mail is sent)',
        body: InviteUserBody,
        response: { 201: InvitedUser },
      },
    },
    async (request, reply) => {
      const baseUrl = publicOrigin(request, config.publicBaseUrl);
      const invited = await service.inviteUser(db, request.auth!.tenantId, request.auth!.user?.id ?? null, request.body, baseUrl);
      return reply.status(201).send(invited);
    },
  );

  app.get(
    '/admin/users/:id',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'getConsoleUser', summary: 'One console user', params: UserParams, response: { 200: Type.Ref('ConsoleUser') } },
    },
    async (request) => service.readUser(db, request.auth!.tenantId, request.params.id),
  );

  app.patch(
    '/admin/users/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'updateConsoleUser',
        summary: "Change a user's role, publishing permission, name or status",
        description: 'The last active owner cannot be demoted or disabled (409 `LAST_OWNER`). A change applies to the user\'s next request.',
        params: UserParams,
        body: UpdateUserBody,
        response: { 200: Type.Ref('ConsoleUser') },
      },
    },
    async (request) => service.updateUser(db, authenticator, request.auth!.tenantId, request.params.id, request.body),
  );

  app.delete(
    '/admin/users/:id',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'deleteConsoleUser', summary: 'Remove a console user (their sign-ins end; the audit log keeps their entries)', params: UserParams, response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      await service.deleteUser(db, authenticator, request.auth!.tenantId, request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/admin/audit-log',
    {
      config: { auth: 'admin', rateLimit: 'listing' },
      schema: {
        tags,
        operationId: 'listAuditLog',
        summary: 'Every configuration change: who, when, what, before and after (newest first)',
        querystring: AuditQuery,
        response: { 200: AuditPage },
      },
    },
    async (request) => service.readAuditLog(db, request.auth!.tenantId, request.query),
  );
};

export default routes;
