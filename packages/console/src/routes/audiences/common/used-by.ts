/** What a segment's user is, as the console names it: the service names a row by its table (`points_multiplier`). */
export function usedByKind(use: { type: string }): string {
  return use.type.replace(/^points_/, '');
}

/** Where the console shows what uses a segment (a rule, a multiplier, a challenge, an engagement, an experiment). */
export function usedByLink(use: { type: string; id: string }): string {
  switch (usedByKind(use)) {
    case 'rule':
      return `/programs/rules/${use.id}`;
    case 'multiplier':
      return '/programs/multipliers';
    case 'engagement':
      return `/engagements/${use.id}`;
    case 'experiment':
      return `/experiments/${use.id}`;
    case 'challenge':
      return `/competitions/challenges/${use.id}`;
    default:
      return '/segments';
  }
}
