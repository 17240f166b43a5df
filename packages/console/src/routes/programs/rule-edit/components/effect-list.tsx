import { Button, Fieldset, Group, NumberInput, Select, Stack, TextInput } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { EFFECTS_MAX, EFFECT_TYPES, ROUNDINGS, newEffect, type EffectDraft } from '../../common/rule-draft';

interface EffectListProps {
  rows: EffectDraft[];
  onChange: (rows: EffectDraft[]) => void;
  readOnly: boolean;
}

/** What the rule does when it applies: points (fixed or per unit of a property), a badge, a streak's progress; one to ten. */
export function EffectList({ rows, onChange, readOnly }: EffectListProps) {
  const { t } = useTranslation();
  const update = (key: number, patch: Partial<EffectDraft>) => onChange(rows.map((row) => (row.key === key ? { ...row, ...patch } : row)));
  return (
    <Stack gap="xs">
      {rows.map((row, index) => (
        <Fieldset key={row.key} legend={t('rules.effect', { n: index + 1 })} variant="filled" p="xs">
          <Group align="flex-end" wrap="wrap" gap="xs">
            <Select
              label={t('rules.effectType')}
              data={EFFECT_TYPES.map((type) => ({ value: type, label: t(`rules.effectTypes.${type}`) }))}
              value={row.type}
              onChange={(value) => update(row.key, { type: (value ?? 'award_points') as EffectDraft['type'] })}
              allowDeselect={false}
              readOnly={readOnly}
            />
            {row.type === 'award_points' && (
              <Select
                label={t('rules.pointsMode')}
                data={(['fixed', 'rate'] as const).map((mode) => ({ value: mode, label: t(`rules.pointsModes.${mode}`) }))}
                value={row.mode}
                onChange={(value) => update(row.key, { mode: (value ?? 'fixed') as EffectDraft['mode'] })}
                allowDeselect={false}
                readOnly={readOnly}
              />
            )}
            {row.type === 'award_points' && row.mode === 'fixed' && (
              <NumberInput label={t('rules.points')} min={1} allowDecimal={false} value={row.points} onChange={(value) => update(row.key, { points: value })} readOnly={readOnly} w={130} />
            )}
            {row.type === 'award_points' && row.mode === 'rate' && (
              <>
                <TextInput label={t('rules.rateProperty')} placeholder="properties.amount" value={row.property} onChange={(e) => update(row.key, { property: e.currentTarget.value })} readOnly={readOnly} />
                <NumberInput label={t('rules.pointsPerUnit')} min={0} decimalScale={4} value={row.points_per_unit} onChange={(value) => update(row.key, { points_per_unit: value })} readOnly={readOnly} w={130} />
                <Select
                  label={t('rules.rounding')}
                  data={ROUNDINGS.map((rounding) => ({ value: rounding, label: t(`rules.roundings.${rounding}`) }))}
                  value={row.rounding}
                  onChange={(value) => update(row.key, { rounding: (value ?? 'floor') as EffectDraft['rounding'] })}
                  allowDeselect={false}
                  readOnly={readOnly}
                  w={120}
                />
                <NumberInput label={t('rules.maxPoints')} min={1} allowDecimal={false} value={row.max_points} onChange={(value) => update(row.key, { max_points: value })} readOnly={readOnly} w={200} />
              </>
            )}
            {row.type === 'award_points' && (
              <TextInput label={t('rules.reason')} placeholder={t('rules.reasonHelp')} value={row.reason} onChange={(e) => update(row.key, { reason: e.currentTarget.value })} readOnly={readOnly} />
            )}
            {row.type === 'award_badge' && (
              <TextInput label={t('rules.badgeCode')} value={row.badge_code} onChange={(e) => update(row.key, { badge_code: e.currentTarget.value })} readOnly={readOnly} />
            )}
            {row.type === 'continue_streak' && (
              <TextInput label={t('rules.streakCode')} value={row.streak_code} onChange={(e) => update(row.key, { streak_code: e.currentTarget.value })} readOnly={readOnly} />
            )}
            {!readOnly && rows.length > 1 && (
              <Button variant="subtle" color="red.9" aria-label={t('rules.removeEffect', { n: index + 1 })} onClick={() => onChange(rows.filter((r) => r.key !== row.key))}>
                ✕
              </Button>
            )}
          </Group>
        </Fieldset>
      ))}
      {!readOnly && rows.length < EFFECTS_MAX && (
        <Group>
          <Button variant="default" size="xs" onClick={() => onChange([...rows, newEffect()])}>
            {t('rules.addEffect')}
          </Button>
        </Group>
      )}
    </Stack>
  );
}
