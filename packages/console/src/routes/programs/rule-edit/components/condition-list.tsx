import { Button, Fieldset, Group, Select, Stack, Text, TextInput } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { CONDITIONS_MAX, OPERATORS, VALUELESS, newCondition, type ConditionDraft, type Operator } from '../../common/rule-draft';

interface ConditionListProps {
  group: 'all' | 'any';
  rows: ConditionDraft[];
  onChange: (rows: ConditionDraft[]) => void;
  disabled: boolean;
}

/** One group of conditions (all or any), a row per (fact, operator, value). */
export function ConditionList({ group, rows, onChange, disabled }: ConditionListProps) {
  const { t } = useTranslation();
  const update = (key: number, patch: Partial<ConditionDraft>) => onChange(rows.map((row) => (row.key === key ? { ...row, ...patch } : row)));
  return (
    <Stack gap="xs">
      <Text fw={600} size="sm">
        {t(group === 'all' ? 'rules.conditionsAll' : 'rules.conditionsAny')}
      </Text>
      {rows.map((row, index) => {
        const legend = t(group === 'all' ? 'rules.conditionAll' : 'rules.conditionAny', { n: index + 1 });
        return (
          <Fieldset key={row.key} legend={legend} variant="filled" p="xs">
            <Group align="flex-end" wrap="wrap" gap="xs">
              <TextInput
                label={t('rules.fact')}
                value={row.fact}
                onChange={(e) => update(row.key, { fact: e.currentTarget.value })}
                disabled={disabled}
                style={{ flex: '2 1 14rem' }}
              />
              <Select
                label={t('rules.operator')}
                data={OPERATORS.map((operator) => ({ value: operator, label: t(`rules.operators.${operator}`) }))}
                value={row.operator}
                onChange={(value) => update(row.key, { operator: (value ?? 'equals') as Operator })}
                allowDeselect={false}
                disabled={disabled}
                style={{ flex: '1 1 10rem' }}
              />
              {!VALUELESS.includes(row.operator) && (
                <TextInput
                  label={t('rules.value')}
                  value={row.value}
                  onChange={(e) => update(row.key, { value: e.currentTarget.value })}
                  disabled={disabled}
                  style={{ flex: '2 1 12rem' }}
                />
              )}
              {!disabled && (
                <Button
                  variant="subtle"
                  color="red.9"
                  aria-label={t('rules.removeCondition', { n: index + 1 }) + ` (${group})`}
                  onClick={() => onChange(rows.filter((r) => r.key !== row.key))}
                >
                  ✕
                </Button>
              )}
            </Group>
          </Fieldset>
        );
      })}
      {!disabled && rows.length < CONDITIONS_MAX && (
        <Group>
          <Button variant="default" size="xs" onClick={() => onChange([...rows, newCondition()])}>
            {t(group === 'all' ? 'rules.addConditionAll' : 'rules.addConditionAny')}
          </Button>
        </Group>
      )}
    </Stack>
  );
}
