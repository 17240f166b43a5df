/**
 * The event names nearest to one that no rule listens to, for the outcome of
 * an event that earned nothing because of a typo (`purchse`, `Purchase`).
 */
export const NEAREST_NAMES_MAX = 3;

/** Edit distance (insertions, deletions, substitutions) between two strings, case-insensitively. */
export function editDistance(a: string, b: string): number {
  const left = a.toLowerCase();
  const right = b.toLowerCase();
  let previous = Array.from({ length: right.length + 1 }, (_, j) => j);
  for (let i = 1; i <= left.length; i++) {
    const current = [i];
    for (let j = 1; j <= right.length; j++) {
      const substitution = previous[j - 1] + (left[i - 1] === right[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j] + 1, current[j - 1] + 1, substitution));
    }
    previous = current;
  }
  return previous[right.length];
}

/**
 * A name is near when a third of its letters (at least 2) change it into the
 * event's name, or when one name starts with the other (`purchase` and
 * `purchase_completed`): far names would be noise, not a suggestion.
 */
function nearEnough(eventName: string, candidate: string, distance: number): boolean {
  const allowed = Math.max(2, Math.floor(Math.max(eventName.length, candidate.length) / 3));
  const a = eventName.toLowerCase();
  const b = candidate.toLowerCase();
  return distance <= allowed || a.startsWith(b) || b.startsWith(a);
}

/** Up to NEAREST_NAMES_MAX names near `eventName`, nearest first (ties by name). */
export function nearestNames(eventName: string, names: readonly string[]): string[] {
  return names
    .filter((name) => name !== eventName)
    .map((name) => ({ name, distance: editDistance(eventName, name) }))
    .filter(({ name, distance }) => nearEnough(eventName, name, distance))
    .sort((x, y) => x.distance - y.distance || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))
    .slice(0, NEAREST_NAMES_MAX)
    .map(({ name }) => name);
}
