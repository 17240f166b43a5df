/**
 * What a console user's role may do. API keys keep their scopes (an admin key
 * may do everything an owner may); people signed in to the console (cookie) or
 * holding an admin login token act through their role, checked on the server
 * for every route before the handler runs.
 *
 * A route's permission comes from its `config.permission` when it names one,
 * else from ROUTE_PERMISSIONS below, matched on the route pattern in order.
 * A credentialed route that neither names is refused to every role but the
 * owner, and a test fails for it (test/console-access.test.ts), so a new route
 * is classified when it is written.
 */
export const ROLES = ['owner', 'marketer', 'support', 'reviewer', 'analyst'] as const;
export type Role = (typeof ROLES)[number];

export const PERMISSIONS = [
  'account:self',
  'programs:read',
  'programs:write',
  'programs:publish',
  'participants:read',
  'participants:write',
  'participants:erase',
  'pii:reveal',
  'fraud:read',
  'fraud:decide',
  'developers:read',
  'developers:write',
  'analytics:read',
  'audit:read',
  'settings:read',
  'settings:write',
  'access:manage',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const everything = new Set<Permission>(PERMISSIONS);

/** The permissions of each role; `programs:publish` further needs the user's `can_publish`. */
export const ROLE_PERMISSIONS: Record<Role, ReadonlySet<Permission>> = {
  owner: everything,
  marketer: new Set(['account:self', 'programs:read', 'programs:write', 'programs:publish', 'participants:read', 'analytics:read', 'settings:read']),
  support: new Set(['account:self', 'participants:read', 'participants:write', 'participants:erase', 'pii:reveal', 'programs:read', 'analytics:read', 'settings:read']),
  reviewer: new Set(['account:self', 'fraud:read', 'fraud:decide', 'participants:read', 'programs:read', 'settings:read']),
  analyst: new Set([
    'account:self',
    'programs:read',
    'participants:read',
    'fraud:read',
    'developers:read',
    'analytics:read',
    'audit:read',
    'settings:read',
  ]),
};

export interface ConsoleUser {
  id: string;
  role: Role;
  canPublish: boolean;
  email: string;
}

export function userMay(user: Pick<ConsoleUser, 'role' | 'canPublish'>, permission: Permission): boolean {
  if (!ROLE_PERMISSIONS[user.role].has(permission)) return false;
  return permission !== 'programs:publish' || user.canPublish;
}

/** Every permission the user holds, for the console to show what it may. */
export function permissionsOf(user: Pick<ConsoleUser, 'role' | 'canPublish'>): Permission[] {
  return PERMISSIONS.filter((permission) => userMay(user, permission));
}

type Area = { read: Permission; write: Permission };
const PROGRAMS: Area = { read: 'programs:read', write: 'programs:write' };
const PARTICIPANTS: Area = { read: 'participants:read', write: 'participants:write' };
const FRAUD: Area = { read: 'fraud:read', write: 'fraud:decide' };
const DEVELOPERS: Area = { read: 'developers:read', write: 'developers:write' };
const SETTINGS: Area = { read: 'settings:read', write: 'settings:write' };
const ACCESS: Area = { read: 'access:manage', write: 'access:manage' };
const only = (permission: Permission): Area => ({ read: permission, write: permission });

/** Lifecycle actions of programs: publishing is a permission of its own. */
const PUBLISHING = /\/(publish|unpublish|end|archive|pause|resume)$/;

/**
 * Route patterns (as registered, under `/api/v1`) and the area they belong to,
 * most specific first. GET and HEAD need the area's read permission, every
 * other method its write permission.
 */
const ROUTE_PERMISSIONS: Array<[RegExp, Area]> = [
  [/^\/api\/v1\/admin\/analytics(\/|$)/, only('analytics:read')],
  // An experiment's results are a report (issue 36): whoever reads the analytics reads them, an analyst included; a reviewer of fraud does not.
  [/^\/api\/v1\/admin\/experiments\/:experiment_id\/results$/, only('analytics:read')],
  // The campaign calendar (analytics module) is read by whoever reads the programs.
  [/^\/api\/v1\/admin\/calendar$/, PROGRAMS],
  // Imports and exports share their routes across kinds; the files module checks the kind's own permission (files/access.ts).
  [/^\/api\/v1\/admin\/(imports|exports)(\/|$)/, only('account:self')],
  [/^\/api\/v1\/admin\/audit-log(\/|$)/, only('audit:read')],
  [/^\/api\/v1\/admin\/pii-access-log(\/|$)/, only('audit:read')],
  [/^\/api\/v1\/admin\/users(\/|$)/, ACCESS],
  [/^\/api\/v1\/events\/api-keys(\/|$)/, ACCESS],
  [/^\/api\/v1\/admin\/participants\/:participant_id\/reveal$/, only('pii:reveal')],
  [/^\/api\/v1\/admin\/participants(\/|$)/, PARTICIPANTS],
  [/^\/api\/v1\/gamify\/admin\/participants\/:participant_id$/, { read: 'participants:read', write: 'participants:erase' }],
  [/^\/api\/v1\/gamify\/admin\/participants(\/|$)/, PARTICIPANTS],
  [/^\/api\/v1\/gamify\/admin\/participant-fields(\/|$)/, SETTINGS],
  [/^\/api\/v1\/gamify\/(participants|state)\//, PARTICIPANTS],
  [/^\/api\/v1\/gamify\/points\/(grant|deduct)$/, PARTICIPANTS],
  // A grant to a segment is a campaign to an audience the marketer defined (issue 36): programs:write, so always in the audit log; its job is read at bulk-grant/{job_id}.
  [/^\/api\/v1\/admin\/points\/segment-grants$/, PROGRAMS],
  [/^\/api\/v1\/admin\/points\/bulk-grant(\/|$)/, PARTICIPANTS],
  [/^\/api\/v1\/admin\/badges\/:code\/award$/, PARTICIPANTS],
  [/^\/api\/v1\/points\/history$/, PARTICIPANTS],
  [/^\/api\/v1\/referrals\/(generate|stats\/)/, PARTICIPANTS],
  [/^\/api\/v1\/admin\/reviews\/:id\/(approve|return)$/, only('programs:publish')],
  // Review requests are read by those who author drafts or publish them: a fraud reviewer or an analyst has none to act on.
  [/^\/api\/v1\/admin\/reviews(\/|$)/, only('programs:write')],
  [/^\/api\/v1\/admin\/contests\/:id\/entries(\/|$)/, { read: 'participants:read', write: 'programs:write' }],
  [/^\/api\/v1\/admin\/fraud(\/|$)/, FRAUD],
  [/^\/api\/v1\/admin\/referrals\/conversions(\/|$)/, FRAUD],
  // Starting an experiment puts its draft variants live for their share; stopping and rolling out take programs down (issue 36).
  [/^\/api\/v1\/admin\/experiments\/:experiment_id\/(start|stop|rollout)$/, only('programs:publish')],
  [/^\/api\/v1\/admin\/experiments(\/|$)/, PROGRAMS],
  // A segment's members are participants' profiles; the rest of segments is a program setting (issue 36).
  [/^\/api\/v1\/admin\/segments\/:segment_id\/members$/, PARTICIPANTS],
  [/^\/api\/v1\/admin\/segments(\/|$)/, PROGRAMS],
  [/^\/api\/v1\/admin\/(rules|badges|streaks|engagements|rewards|challenges|contests|leaderboards|referrals|points|test-clock)(\/|$)/, PROGRAMS],
  [/^\/api\/v1\/contests\/:id\/leaderboard$/, PROGRAMS],
  [/^\/api\/v1\/public\//, PROGRAMS],
  [/^\/api\/v1\/gamify\/webhooks(\/|$)/, DEVELOPERS],
  [/^\/api\/v1\/admin\/events(\/|$)/, DEVELOPERS],
  [/^\/api\/v1\/(ingest\/events|events\/batch|events\/search)(\/|$)/, DEVELOPERS],
  [/^\/api\/v1\/sessions$/, DEVELOPERS],
  [/^\/api\/v1\/activities\/:activityId\/completions$/, DEVELOPERS],
  [/^\/api\/v1\/tenant(\/|$)/, SETTINGS],
  // Ends the caller's own admin login tokens (users/routes.ts).
  [/^\/api\/v1\/auth\/logout$/, only('account:self')],
];

/** The permission a route needs of a console user, or null when no rule classifies it. */
export function routePermission(method: string, url: string): Permission | null {
  const write = method !== 'GET' && method !== 'HEAD';
  for (const [pattern, area] of ROUTE_PERMISSIONS) {
    if (!pattern.test(url)) continue;
    if (write && area === PROGRAMS && PUBLISHING.test(url)) return 'programs:publish';
    return write ? area.write : area.read;
  }
  return null;
}
