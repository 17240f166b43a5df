import { Alert, Button, Fieldset, Group, Select, Stack, Text, TextInput } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Controller, useFieldArray, useWatch } from 'react-hook-form';
import type { ApiForm } from '../../../../lib/forms';
import { useFormat } from '../../../../lib/format';
import { useRules } from '../../../../hooks/api/programs';
import { useMultipliers } from '../../../../hooks/api/points-settings';
import { useEngagements } from '../../../../hooks/api/engagements';
import type { SubjectType } from '../../../../hooks/api/experiments';
import { VARIANTS_MAX, VARIANTS_MIN, allocated, nextVariant, type ExperimentDraft } from '../../common/experiment-draft';

/** The existing rules, multipliers or engagements a variant can be: rules and engagements by name, a multiplier (which has none) by its factor, event and window. */
function useSubjectChoices(type: SubjectType): Array<{ value: string; label: string }> {
  const { t } = useTranslation();
  const f = useFormat();
  const rules = useRules({});
  const multipliers = useMultipliers({});
  const engagements = useEngagements({});
  if (type === 'rule') return (rules.data?.rules ?? []).map((rule) => ({ value: rule.id, label: rule.name }));
  if (type === 'engagement') return (engagements.data?.engagements ?? []).map((engagement) => ({ value: engagement.id, label: engagement.name }));
  return (multipliers.data?.multipliers ?? []).map((m) => ({
    value: m.id,
    label: t('experiments.multiplierLabel', { multiplier: f.number(m.multiplier), event: m.match.event_type, from: f.date(m.starts_at), to: f.date(m.ends_at) }),
  }));
}

interface VariantListProps {
  form: ApiForm<ExperimentDraft>;
  /** Nothing can be changed (ended), or only the allocation (running). */
  readOnly: boolean;
  allocationOnly: boolean;
}

/** The variants (the first is the control), each an existing subject and its share; the holdout; and what they add up to. */
export function VariantList({ form, readOnly, allocationOnly }: VariantListProps) {
  const { t } = useTranslation();
  const rows = useFieldArray({ control: form.control, name: 'variants' });
  const subjectType = useWatch({ control: form.control, name: 'subject_type' });
  const variants = useWatch({ control: form.control, name: 'variants' });
  const holdout = useWatch({ control: form.control, name: 'holdout_percent' });
  const choices = useSubjectChoices(subjectType);
  const total = allocated({ holdout_percent: holdout, variants: variants ?? [] });
  const fixed = readOnly || allocationOnly;
  const holdoutField = form.field('holdout_percent', { number: true });
  return (
    <Stack>
      {rows.fields.map((row, index) => (
        <Fieldset key={row.id} legend={index === 0 ? t('experiments.controlLegend') : t('experiments.variantLegend', { n: index + 1 })} variant="filled" p="xs">
          <Group align="flex-start" wrap="wrap" gap="xs">
            <TextInput label={t('experiments.variantKey')} {...form.field(`variants.${index}.key`, { required: true })} readOnly={fixed} style={{ flex: '1 1 7rem' }} />
            <TextInput label={t('experiments.variantName')} {...form.field(`variants.${index}.name`, { required: true })} readOnly={fixed} style={{ flex: '1 1 9rem' }} />
            <SubjectPicker form={form} index={index} choices={choices} readOnly={fixed} kind={t(`experiments.subjectTypes.${subjectType}`)} />
            <TextInput label={t('experiments.allocation')} {...form.field(`variants.${index}.allocation_percent`, { number: true, required: true })} readOnly={readOnly} style={{ flex: '1 1 7rem' }} />
            {!fixed && rows.fields.length > VARIANTS_MIN && (
              <Button variant="subtle" color="red.9" mt={24} aria-label={t('experiments.removeVariant', { n: index + 1 })} onClick={() => rows.remove(index)}>
                ✕
              </Button>
            )}
          </Group>
        </Fieldset>
      ))}
      {!fixed && rows.fields.length < VARIANTS_MAX && (
        <Group>
          <Button variant="default" size="xs" onClick={() => rows.append(nextVariant(variants ?? []), { shouldFocus: false })}>
            {t('experiments.addVariant')}
          </Button>
        </Group>
      )}
      <TextInput label={t('experiments.holdout')} {...holdoutField} description={`${t('experiments.holdoutHelp')} ${String(holdoutField.description ?? '')}`.trim()} readOnly={readOnly} maw={420} />
      {!readOnly && (
        <Alert color={total === 100 ? 'teal' : 'yellow'} variant="light" role="status" data-testid="allocation-total">
          <Text size="sm">{total === 100 ? t('experiments.allocatedAll') : t('experiments.allocatedPart', { total })}</Text>
        </Alert>
      )}
    </Stack>
  );
}

function SubjectPicker({ form, index, choices, readOnly, kind }: { form: ApiForm<ExperimentDraft>; index: number; choices: Array<{ value: string; label: string }>; readOnly: boolean; kind: string }) {
  const { t } = useTranslation();
  const name = `variants.${index}.subject_id` as const;
  form.field(name);
  return (
    <Controller
      control={form.control}
      name={name}
      rules={{ required: t('forms.errors.required') }}
      render={({ field }) => {
        const value = field.value || null;
        const data = value && !choices.some((c) => c.value === value) ? [...choices, { value, label: value }] : choices;
        return (
          <Select
            ref={field.ref}
            label={t('experiments.subject')}
            description={kind}
            required
            searchable
            data={data}
            value={value}
            onChange={(id) => field.onChange(id ?? '')}
            onBlur={field.onBlur}
            error={form.errorOf(name)}
            readOnly={readOnly}
            nothingFoundMessage={t('experiments.noSubjects')}
            style={{ flex: '2 1 14rem' }}
          />
        );
      }}
    />
  );
}
