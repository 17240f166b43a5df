import { personal, secret } from '../../platform/privacy.js';
import { Type, type Static } from '@sinclair/typebox';
import { PERMISSIONS, ROLES } from '../../platform/permissions.js';

const Role = Type.Union(
  ROLES.map((role) => Type.Literal(role)),
  {
    description:
      '`owner` everything (users and keys); `marketer` programs (rules, engagements, rewards, badges, tiers, challenges, contests, referrals), publishing when `can_publish`; ' +
      '`support` participant look-up (masked), manual points adjustment, reveal of one personal field with a reason, erasure; `reviewer` fraud queues and decisions; ' +
      '`analyst` read-only (no personal data).',
  },
);
const Email = Type.String({ ...personal('staff'), format: 'email', maxLength: 254 });
const Password = Type.String({ minLength: 12, maxLength: 200, description: 'At least 12 characters.' });

export const ConsoleUser = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    email: Type.String(personal('staff')),
    name: Type.Union([Type.String(), Type.Null()]),
    role: Role,
    can_publish: Type.Boolean({ description: 'May publish, unpublish, end and archive programs (with a role that edits them).' }),
    status: Type.Union([Type.Literal('invited'), Type.Literal('active'), Type.Literal('disabled')]),
    invite_expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'ConsoleUser' },
);
export type ConsoleUserView = Static<typeof ConsoleUser>;

export const SignInBody = Type.Object({ email: Email, password: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

export const ConsoleSessionResponse = Type.Object({
  user: Type.Ref('ConsoleUser'),
  tenant: Type.Object({ id: Type.String({ format: 'uuid' }), slug: Type.String(), name: Type.String(), environment: Type.String() }),
  permissions: Type.Array(Type.Union(PERMISSIONS.map((p) => Type.Literal(p))), { description: 'What this user may do; the server enforces the same list on every route.' }),
  csrf_token: Type.Union([Type.String(), Type.Null()], {
    description: 'Send it as `X-CSRF-Token` on every request that changes something. Null for an admin login token, which needs none.',
  }),
  expires_at: Type.String({ format: 'date-time', description: 'When the sign-in ends at the latest (12 hours); two hours without a request end it sooner.' }),
});

export const ChangePasswordBody = Type.Object(
  { current_password: Type.String({ minLength: 1, maxLength: 200 }), new_password: Password },
  { additionalProperties: false, examples: [{ current_password: 'correct horse battery staple', new_password: 'tulips bloom in april rain' }] },
);

export const AcceptInvitationBody = Type.Object(
  {
    token: Type.String({ minLength: 10, maxLength: 200, description: 'The `token` of the invite link (after `#token=`).' }),
    password: Password,
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);

export const InviteUserBody = Type.Object(
  {
    email: Email,
    role: Role,
    can_publish: Type.Optional(Type.Boolean({ description: 'Default: true for owners, false for other roles.' })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);

export const InvitedUser = Type.Object({
  user: Type.Ref('ConsoleUser'),
  invite_url: Type.String({ ...secret(), description: 'Give it to the person (no mail is sent). Valid 7 days, once.' }),
});

export const UpdateUserBody = Type.Object(
  {
    role: Type.Optional(Role),
    can_publish: Type.Optional(Type.Boolean()),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('disabled')], { description: 'Disabling ends the user\'s sign-ins at once.' })),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const UserParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

export const ListUsersQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
);

export const UserList = Type.Object({ users: Type.Array(Type.Ref('ConsoleUser')), next_cursor: Type.Union([Type.String(), Type.Null()]) });

export const AuditQuery = Type.Object(
  {
    resource_type: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9_-]+$', description: 'e.g. `rules`, `engagements`, `webhooks`, `users`.' })),
    resource_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    actor_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'A console user id or an API key id.' })),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'Entries at or after this instant.' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'Entries before this instant (after `from`: 400 otherwise).' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
);

export const AuditEntry = Type.Object({
  id: Type.String(),
  occurred_at: Type.String({ format: 'date-time' }),
  actor_type: Type.Union([Type.Literal('user'), Type.Literal('api_key'), Type.Literal('system')]),
  actor_id: Type.String(),
  actor_label: Type.Union([Type.String(), Type.Null()], { description: 'A person\'s email and role when they acted; null for an API key.' }),
  actor_name: Type.Union([Type.String(personal('staff')), Type.Null()], {
    description: "Who acted, by name now: a person's name (their email when they gave none), an API key's name; null once they are removed.",
  }),
  action: Type.String({
    description: '`create`, `update`, `delete`, or the action of the route (`publish`, `award`, `replay`, `reveal`, …); a POST that acts on a collection without creating in it is named by its last segment (`simulate` on `rules`: a backtest; `bulk-grant` on `points`).',
  }),
  method: Type.String(),
  route: Type.String(),
  resource_type: Type.String(),
  resource_id: Type.Union([Type.String(), Type.Null()]),
  resource_name: Type.Union([Type.String(), Type.Null()], { description: "The resource's name (or title) as its snapshot after, or else before, the change shows it; null when it has none." }),
  status: Type.Integer(),
  before: Type.Unknown({ ...personal('free-form'), description: 'The resource as its GET route showed it before the change (secrets and personal values redacted); null for a create.' }),
  after: Type.Unknown({ ...personal('free-form'), description: 'The resource after the change, or the response of a create or an action; null for a delete.' }),
  details: Type.Unknown({ ...personal('free-form'), description: 'The path parameters and the request body (redacted).' }),
  request_id: Type.Union([Type.String(), Type.Null()]),
});

export const AuditPage = Type.Object({ entries: Type.Array(AuditEntry), next_cursor: Type.Union([Type.String(), Type.Null()]) });
