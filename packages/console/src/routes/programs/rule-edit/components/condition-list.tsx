import { Button, Fieldset, Group, Select, Stack, Text, TextInput } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { CONDITIONS_MAX, OPERATORS, VALUELESS, newCondition, type ConditionDraft, type Operator } from '../../common/rule-draft';

interface ConditionListProps {
  group: 'all' | 'any';
  rows: ConditionDraft[];
  onChange: (rows: ConditionDraft[]) => void;
  readOnly: boolean;
}

/** One group of conditions (all or any), a row per (fact, operator, value). */
export function ConditionList({ group, rows, onChange, readOnly }: ConditionListProps) {
  const { t } = useTranslation();
  const update = (key: number, patch: Partial<ConditionDraft>) => onChange(rows.map((row) => (row.key === key ? { ...row, ...patch } : row)));
  if (readOnly && rows.length === 0) return null;
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
                readOnly={readOnly}
                style={{ flex: '2 1 11rem' }}
              />
              <Select
                label={t('rules.operator')}
                data={OPERATORS.map((operator) => ({ value: operator, label: t(`rules.operators.${operator}`) }))}
                value={row.operator}
                onChange={(value) => update(row.key, { operator: (value ?? 'equals') as Operator })}
                allowDeselect={false}
                readOnly={readOnly}
                style={{ flex: '1 1 8rem' }}
              />
              {!VALUELESS.includes(row.operator) && (
                <TextInput
                  label={t('rules.value')}
                  value={row.value}
                  onChange={(e) => update(row.key, { value: e.currentTarget.value })}
                  readOnly={readOnly}
                  style={{ flex: '2 1 8rem' }}
                />
              )}
              {!readOnly && (
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
      {!readOnly && rows.length < CONDITIONS_MAX && (
        <Group>
          <Button variant="default" size="xs" onClick={() => onChange([...rows, newCondition()])}>
            {t(group === 'all' ? 'rules.addConditionAll' : 'rules.addConditionAny')}
          </Button>
        </Group>
      )}
    </Stack>
  );
}
