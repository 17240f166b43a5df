import { SimpleGrid, Switch, TextInput, Textarea } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Controller } from 'react-hook-form';
import type { ApiForm } from '../../../lib/forms';
import { ZoneNote, type Format } from '../../../lib/format';
import type { Reward, RewardChanges, RewardInput } from '../../../hooks/api/rewards';
import { METADATA_EXAMPLES, type CodeSource, type RewardType } from './reward-form';

/**
 * The reward form's values, shared by the create and edit screens: what a
 * person types, turned into the API's body at submit. Times are entered in the
 * tenant's zone (lib/format.tsx); numbers are never clamped.
 */
export interface RewardValues {
  id: string;
  name: string;
  description: string;
  type: RewardType;
  code_source: CodeSource;
  code_prefix: string;
  inventory: number | undefined;
  valid_for_days: number | undefined;
  /** `2026-11-27T14:05` in the tenant's zone, or empty. */
  available_until: string;
  active: boolean;
  metadata: Record<string, unknown>;
}

export function newRewardValues(): RewardValues {
  return {
    id: '',
    name: '',
    description: '',
    type: 'coupon',
    code_source: 'pool',
    code_prefix: '',
    inventory: undefined,
    valid_for_days: undefined,
    available_until: '',
    active: true,
    metadata: { ...METADATA_EXAMPLES.coupon },
  };
}

export function rewardValuesOf(reward: Reward, f: Format): RewardValues {
  return {
    id: reward.id,
    name: reward.name,
    description: reward.description ?? '',
    type: reward.type,
    code_source: reward.code_source as CodeSource,
    code_prefix: '',
    inventory: reward.inventory ?? undefined,
    valid_for_days: reward.valid_for_days ?? undefined,
    available_until: f.toZonedInput(reward.available_until),
    active: reward.active,
    metadata: { ...reward.metadata },
  };
}

/** Keys left empty are not sent: an optional one is then absent, a required one refused by name. */
function metadataOf(values: RewardValues): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values.metadata ?? {}).filter(([, value]) => value !== '' && value !== undefined && value !== null));
}

function shared(values: RewardValues, f: Format) {
  return {
    name: values.name,
    description: values.description.trim() || undefined,
    inventory: values.inventory ?? null,
    valid_for_days: values.valid_for_days ?? null,
    available_until: values.available_until ? f.fromZonedInput(values.available_until) : null,
    metadata: metadataOf(values),
  };
}

export function createBody(values: RewardValues, f: Format): RewardInput {
  return {
    ...(values.id.trim() ? { id: values.id.trim() } : {}),
    type: values.type,
    code_source: values.code_source,
    ...(values.code_source === 'generated' && values.code_prefix ? { code_prefix: values.code_prefix } : {}),
    ...shared(values, f),
  };
}

export function updateBody(values: RewardValues, f: Format): RewardChanges {
  return { ...shared(values, f), active: values.active };
}

/** Name, description, stock and validity: the fields both screens have. */
export function RewardCommonFields({ form, disabled, editing }: { form: ApiForm<RewardValues>; disabled: boolean; editing: boolean }) {
  const { t } = useTranslation();
  return (
    <>
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        <TextInput label={t('rewards.name')} {...form.field('name', { required: true })} disabled={disabled} />
        <TextInput label={t('rewards.inventory')} {...form.field('inventory', { number: true })} description={t('rewards.inventoryHelp')} disabled={disabled} />
        <TextInput label={t('rewards.validForDays')} {...form.field('valid_for_days', { number: true, pointer: '/valid_for_days' })} disabled={disabled} />
        <TextInput
          label={t('rewards.availableUntil')}
          type="datetime-local"
          {...form.field('available_until')}
          description={t('rewards.availableUntilHelp')}
          disabled={disabled}
        />
      </SimpleGrid>
      <ZoneNote />
      <Textarea label={t('rewards.description')} autosize minRows={1} {...form.field('description')} disabled={disabled} />
      {editing && (
        <Controller
          control={form.control}
          name="active"
          render={({ field }) => (
            <Switch label={t('rewards.activeLabel')} checked={field.value} onChange={(e) => field.onChange(e.currentTarget.checked)} onBlur={field.onBlur} disabled={disabled} />
          )}
        />
      )}
    </>
  );
}
