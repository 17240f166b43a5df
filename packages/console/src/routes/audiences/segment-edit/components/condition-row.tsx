import { useEffect } from 'react';
import { Button, Fieldset, Group, MultiSelect, Select, TextInput } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Controller, useWatch } from 'react-hook-form';
import type { ApiForm } from '../../../../lib/forms';
import type { SegmentFact } from '../../../../hooks/api/segments';
import { useBadgeChoices, useTiers } from '../../../../hooks/api/programs';
import { EventNamePicker } from '../../../../components/pickers';
import { VALUELESS, isNumeric, type ConditionDraft, type SegmentDraft } from '../../common/segment-draft';
import { useFactLabel } from '../../common/fact-label';

interface ConditionRowProps {
  form: ApiForm<SegmentDraft>;
  index: number;
  facts: SegmentFact[];
  readOnly: boolean;
  onRemove: () => void;
}

/** One condition: the fact (from the service's catalogue), an operator the fact allows, and a value picked where a list exists (tiers, badges). */
export function ConditionRow({ form, index, facts, readOnly, onRemove }: ConditionRowProps) {
  const { t } = useTranslation();
  const factLabel = useFactLabel();
  const match = useWatch({ control: form.control, name: 'match' });
  const row = useWatch({ control: form.control, name: `conditions.${index}` }) as ConditionDraft | undefined;
  const fact = facts.find((f) => f.fact === row?.fact);
  const operators = fact?.operators ?? [];
  const pointer = `/filter/${match}/${index}`;
  // A fact that does not allow the operator picked for the previous one gets its first.
  useEffect(() => {
    if (row && fact && !operators.includes(row.operator as never)) form.setValue(`conditions.${index}.operator`, operators[0] ?? '');
  }, [row, fact, operators, form, index]);
  form.field(`conditions.${index}.fact`, { pointer: `${pointer}/fact` });
  const needsValue = row?.operator !== '' && row?.operator !== undefined && !VALUELESS.includes(row.operator);
  const list = row?.operator === 'in' || row?.operator === 'not_in';
  return (
    <Fieldset legend={t('segments.condition', { n: index + 1 })} variant="filled" p="xs">
      <Group align="flex-start" wrap="wrap" gap="xs">
        <Controller
          control={form.control}
          name={`conditions.${index}.fact`}
          rules={{ required: t('forms.errors.required') }}
          render={({ field }) => (
            <Select
              ref={field.ref}
              label={t('segments.fact')}
              required
              searchable
              data={facts.map((f) => ({ value: f.fact, label: f.personal ? `${factLabel(f)} · ${t('segments.personal')}` : factLabel(f) }))}
              value={field.value || null}
              onChange={(value) => field.onChange(value ?? '')}
              onBlur={field.onBlur}
              error={form.errorOf(`conditions.${index}.fact`)}
              readOnly={readOnly}
              style={{ flex: '2 1 14rem' }}
              nothingFoundMessage={t('segments.noFacts')}
            />
          )}
        />
        {fact?.needs_event && (
          <div style={{ flex: '2 1 12rem' }}>
            <EventNamePicker form={form} operation="createSegment" name={`conditions.${index}.event_name`} pointer={`${pointer}/event_name`} label={t('segments.eventName')} description={t('segments.eventNameHelp')} required readOnly={readOnly} />
          </div>
        )}
        {fact?.needs_event && (
          <TextInput
            label={t('segments.withinDays')}
            {...form.field(`conditions.${index}.within_days`, { number: true, required: true, pointer: `${pointer}/within_days` })}
            readOnly={readOnly}
            style={{ flex: '1 1 8rem' }}
          />
        )}
        <Controller
          control={form.control}
          name={`conditions.${index}.operator`}
          render={({ field }) => (
            <Select
              ref={field.ref}
              label={t('segments.operator')}
              data={operators.map((operator) => ({ value: operator, label: t(`segments.operators.${operator}`) }))}
              value={field.value || null}
              onChange={(value) => field.onChange(value ?? '')}
              allowDeselect={false}
              disabled={!fact}
              readOnly={readOnly}
              style={{ flex: '1 1 10rem' }}
            />
          )}
        />
        {needsValue && <ValueField form={form} index={index} fact={fact} list={list} pointer={`${pointer}/value`} readOnly={readOnly} />}
        {!readOnly && (
          <Button variant="subtle" color="red.9" mt={24} aria-label={t('segments.removeCondition', { n: index + 1 })} onClick={onRemove}>
            ✕
          </Button>
        )}
      </Group>
    </Fieldset>
  );
}

/** Picks from a list where one exists (tiers and badges by name, the fact's allowed values, yes/no); a text field for the rest. */
function ValueField({ form, index, fact, list, pointer, readOnly }: { form: ApiForm<SegmentDraft>; index: number; fact: SegmentFact | undefined; list: boolean; pointer: string; readOnly: boolean }) {
  const { t } = useTranslation();
  const tiers = useTiers();
  const badges = useBadgeChoices();
  const name = `conditions.${index}.value` as const;
  form.field(name, { pointer });
  const choices =
    fact?.type === 'boolean'
      ? [
          { value: 'true', label: t('segments.yes') },
          { value: 'false', label: t('segments.no') },
        ]
      : fact?.fact === 'tier'
        ? (tiers.data?.tiers ?? []).map((tier) => ({ value: tier.code, label: `${tier.name} (${tier.code})` }))
        : fact?.fact === 'badges'
          ? (badges.data?.badges ?? []).map((badge) => ({ value: badge.code, label: `${badge.name} (${badge.code})` }))
          : (fact?.allowed_values ?? []).map((value) => ({ value, label: value }));
  if (choices.length === 0 || !fact) {
    return (
      <TextInput
        label={t('segments.value')}
        {...form.field(name, { required: true, pointer })}
        description={list ? t('segments.listHint') : isNumeric(fact) ? t('segments.numberHint') : fact?.type === 'date' ? t('segments.dateHint') : undefined}
        inputMode={isNumeric(fact) && !list ? 'decimal' : undefined}
        readOnly={readOnly}
        style={{ flex: '2 1 9rem' }}
      />
    );
  }
  const label = fact.fact === 'tier' ? t('segments.tier') : fact.fact === 'badges' ? t('segments.badge') : t('segments.value');
  return (
    <Controller
      control={form.control}
      name={name}
      rules={{ required: t('forms.errors.required') }}
      render={({ field }) => {
        const common = { label, required: true, error: form.errorOf(name), readOnly, onBlur: field.onBlur, searchable: true, style: { flex: '2 1 12rem' } };
        if (list) {
          const values = String(field.value ?? '').split(',').map((v) => v.trim()).filter(Boolean);
          return <MultiSelect ref={field.ref} {...common} data={choices} value={values} onChange={(picked) => field.onChange(picked.join(', '))} />;
        }
        return <Select ref={field.ref} {...common} data={choices} value={field.value || null} onChange={(value) => field.onChange(value ?? '')} />;
      }}
    />
  );
}
