import { Group, Select } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Controller, useWatch } from 'react-hook-form';
import type { ApiForm } from '../../../../lib/forms';
import { EventNamePicker } from '../../../../components/pickers';
import { useEventProperties } from '../../../../hooks/api/event-names';
import { useRewardChoices } from '../../../../hooks/api/rewards';
import { GOAL_TYPES, type ExperimentDraft } from '../../common/experiment-draft';

/** What counts as success: a count of an event, the sum of one of its numeric properties, or redemptions (of one reward or any). */
export function GoalPicker({ form, readOnly }: { form: ApiForm<ExperimentDraft>; readOnly: boolean }) {
  const { t } = useTranslation();
  const goal = useWatch({ control: form.control, name: 'goal' });
  const properties = useEventProperties(goal?.type === 'event_property_sum' ? (goal.event_name ?? '') : '');
  const rewards = useRewardChoices();
  const numeric = (properties.data?.properties ?? []).filter((p) => p.types.includes('number')).map((p) => p.fact);
  form.field('goal.property', { pointer: '/goal/property' });
  form.field('goal.reward_id', { pointer: '/goal/reward_id' });
  return (
    <Group align="flex-start" wrap="wrap" gap="xs">
      <Controller
        control={form.control}
        name="goal.type"
        render={({ field }) => (
          <Select
            ref={field.ref}
            label={t('experiments.goalType')}
            data={GOAL_TYPES.map((type) => ({ value: type, label: t(`experiments.goalTypes.${type}`) }))}
            value={field.value}
            onChange={(value) => field.onChange(value ?? 'event_count')}
            allowDeselect={false}
            readOnly={readOnly}
            style={{ flex: '1 1 14rem' }}
          />
        )}
      />
      {goal?.type !== 'redemptions' && (
        <div style={{ flex: '1 1 14rem' }}>
          <EventNamePicker form={form} operation="createExperiment" name="goal.event_name" pointer="/goal/event_name" label={t('experiments.goalEvent')} required readOnly={readOnly} />
        </div>
      )}
      {goal?.type === 'event_property_sum' && (
        <Controller
          control={form.control}
          name="goal.property"
          rules={{ required: t('forms.errors.required') }}
          render={({ field }) => {
            const value = field.value || null;
            return (
              <Select
                ref={field.ref}
                label={t('experiments.goalProperty')}
                description={t('experiments.goalPropertyHelp')}
                required
                searchable
                data={value && !numeric.includes(value) ? [...numeric, value] : numeric}
                value={value}
                onChange={(property) => field.onChange(property ?? '')}
                onBlur={field.onBlur}
                error={form.errorOf('goal.property')}
                readOnly={readOnly}
                nothingFoundMessage={t('experiments.noProperties')}
                style={{ flex: '1 1 12rem' }}
              />
            );
          }}
        />
      )}
      {goal?.type === 'redemptions' && (
        <Controller
          control={form.control}
          name="goal.reward_id"
          render={({ field }) => (
            <Select
              ref={field.ref}
              label={t('experiments.goalReward')}
              placeholder={t('experiments.anyReward')}
              clearable
              searchable
              data={(rewards.data?.rewards ?? []).map((reward) => ({ value: reward.id, label: reward.name }))}
              value={field.value || null}
              onChange={(id) => field.onChange(id ?? '')}
              error={form.errorOf('goal.reward_id')}
              readOnly={readOnly}
              style={{ flex: '1 1 14rem' }}
            />
          )}
        />
      )}
    </Group>
  );
}
