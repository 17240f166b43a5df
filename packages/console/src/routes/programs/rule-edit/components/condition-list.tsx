import { useEffect } from 'react';
import { Button, Fieldset, Group, Select, Stack, Text, TextInput } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Controller, useFieldArray, useWatch } from 'react-hook-form';
import type { ApiForm } from '../../../../lib/forms';
import { CONDITIONS_MAX, OPERATORS, OPERATORS_BY_TYPE, VALUELESS, newCondition, type ConditionDraft, type Operator, type RuleDraft } from '../../common/rule-draft';
import { FactPicker } from '../../common/pickers';

interface ConditionListProps {
  form: ApiForm<RuleDraft>;
  group: 'all' | 'any';
  readOnly: boolean;
}

/** One group of conditions (all or any), a row per (fact, operator, value); the operators and the value fit the fact's type. */
export function ConditionList({ form, group, readOnly }: ConditionListProps) {
  const { t } = useTranslation();
  const rows = useFieldArray({ control: form.control, name: group });
  if (readOnly && rows.fields.length === 0) return null;
  return (
    <Stack gap="xs">
      <Text fw={600} size="sm">
        {t(group === 'all' ? 'rules.conditionsAll' : 'rules.conditionsAny')}
      </Text>
      {rows.fields.map((row, index) => (
        <ConditionRow key={row.id} form={form} group={group} index={index} readOnly={readOnly} onRemove={() => rows.remove(index)} />
      ))}
      {!readOnly && rows.fields.length < CONDITIONS_MAX && (
        <Group>
          <Button variant="default" size="xs" onClick={() => rows.append(newCondition(), { shouldFocus: true, focusName: `${group}.${rows.fields.length}.fact` })}>
            {t(group === 'all' ? 'rules.addConditionAll' : 'rules.addConditionAny')}
          </Button>
        </Group>
      )}
    </Stack>
  );
}

function ConditionRow({ form, group, index, readOnly, onRemove }: ConditionListProps & { index: number; onRemove: () => void }) {
  const { t } = useTranslation();
  const eventName = useWatch({ control: form.control, name: 'event_name' });
  const condition = useWatch({ control: form.control, name: `${group}.${index}` }) as ConditionDraft | undefined;
  const type = condition?.type ?? '';
  const operators = OPERATORS_BY_TYPE[type];
  const pointer = `/conditions/${group}/${index}`;
  // A fact of another type keeps no operator that does not fit it.
  useEffect(() => {
    if (condition && !operators.includes(condition.operator)) form.setValue(`${group}.${index}.operator`, operators[0]);
  }, [condition, operators, form, group, index]);
  const legend = t(group === 'all' ? 'rules.conditionAll' : 'rules.conditionAny', { n: index + 1 });
  const list = condition?.operator === 'in' || condition?.operator === 'not_in';
  const valueName = `${group}.${index}.value` as const;
  return (
    <Fieldset legend={legend} variant="filled" p="xs">
      <Group align="flex-start" wrap="wrap" gap="xs">
        <div style={{ flex: '2 1 14rem' }}>
          <FactPicker form={form} operation="createRule" name={`${group}.${index}.fact`} typeName={`${group}.${index}.type`} pointer={`${pointer}/fact`} label={t('rules.fact')} eventName={eventName ?? ''} readOnly={readOnly} required />
        </div>
        <Controller
          control={form.control}
          name={`${group}.${index}.operator`}
          render={({ field }) => (
            <Select
              ref={field.ref}
              label={t('rules.operator')}
              data={(readOnly ? OPERATORS : operators).map((operator) => ({ value: operator, label: t(`rules.operators.${operator}`) }))}
              value={field.value}
              onChange={(value) => field.onChange((value ?? operators[0]) as Operator)}
              allowDeselect={false}
              readOnly={readOnly}
              style={{ flex: '1 1 9rem' }}
            />
          )}
        />
        {condition && !VALUELESS.includes(condition.operator) && type === 'boolean' && (
          <Controller
            control={form.control}
            name={valueName}
            render={({ field }) => (
              <Select
                ref={field.ref}
                label={t('rules.value')}
                data={[
                  { value: 'true', label: t('programs.pickers.true') },
                  { value: 'false', label: t('programs.pickers.false') },
                ]}
                value={field.value || null}
                onChange={(value) => field.onChange(value ?? '')}
                error={form.errorOf(valueName)}
                readOnly={readOnly}
                style={{ flex: '1 1 8rem' }}
              />
            )}
          />
        )}
        {condition && !VALUELESS.includes(condition.operator) && type !== 'boolean' && (
          <TextInput
            label={t('rules.value')}
            {...form.field(valueName, { required: true, pointer: `${pointer}/value` })}
            description={list ? t('programs.pickers.listHint') : type === 'number' ? t('programs.pickers.numberHint') : type === '' ? t('rules.valueHelp') : undefined}
            inputMode={type === 'number' && !list ? 'decimal' : undefined}
            readOnly={readOnly}
            style={{ flex: '2 1 9rem' }}
          />
        )}
        {!readOnly && (
          <Button variant="subtle" color="red.9" mt={24} aria-label={t('rules.removeCondition', { n: index + 1 }) + ` (${group})`} onClick={onRemove}>
            ✕
          </Button>
        )}
      </Group>
    </Fieldset>
  );
}
