import type { Reward } from '../../../hooks/api/rewards';

/**
 * The API has no low-stock threshold; the console decides one (docs/decisions/console.md):
 * a reward is low on stock when 10 units or fewer remain, or a tenth of its inventory or less.
 */
export const LOW_STOCK_UNITS = 10;
export const LOW_STOCK_SHARE = 0.1;

/** Units that can still be claimed: the inventory left and, for a pool of codes, the codes left; null is unlimited. */
export function remaining(reward: Reward): number | null {
  const left = reward.inventory === null ? null : Math.max(0, reward.inventory - reward.claimed_count);
  if (reward.codes_available === null) return left;
  return left === null ? reward.codes_available : Math.min(left, reward.codes_available);
}

export function isLowStock(reward: Reward): boolean {
  const left = remaining(reward);
  if (left === null) return false;
  const share = reward.inventory ? reward.inventory * LOW_STOCK_SHARE : 0;
  return left <= Math.max(LOW_STOCK_UNITS, share);
}

export function isClaimable(reward: Reward, now = Date.now()): boolean {
  if (!reward.active) return false;
  if (reward.available_until !== null && Date.parse(reward.available_until) <= now) return false;
  return remaining(reward) !== 0;
}
