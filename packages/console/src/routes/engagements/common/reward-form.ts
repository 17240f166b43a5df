import type { RewardInput } from '../../../hooks/api/rewards';

export type RewardType = RewardInput['type'];
export type CodeSource = NonNullable<RewardInput['code_source']>;
export const REWARD_TYPES: RewardType[] = ['coupon', 'voucher', 'physical', 'digital', 'points_multiplier'];
export const CODE_SOURCES: CodeSource[] = ['pool', 'generated', 'none'];

/** A starting point for each type's details; the server checks the shape (the reward schema in /openapi.json). */
export const METADATA_EXAMPLES: Record<RewardType, Record<string, unknown>> = {
  coupon: { discount_percent: 10 },
  voucher: { value: 10, currency: 'EUR' },
  physical: { sku: '' },
  digital: { kind: 'access_code' },
  points_multiplier: { multiplier: 2, duration_hours: 24, event_type: 'order_placed' },
};
