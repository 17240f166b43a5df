import { Button, Fieldset, Group, Select, Stack, TextInput } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Controller, useFieldArray, useWatch, type Path } from 'react-hook-form';
import type { ApiForm } from '../../../../lib/forms';
import { EFFECTS_MAX, EFFECT_TYPES, ROUNDINGS, newEffect, type EffectDraft, type RuleDraft } from '../../common/rule-draft';
import { BadgePicker, FactPicker, StreakPicker } from '../../common/pickers';

interface EffectListProps {
  form: ApiForm<RuleDraft>;
  readOnly: boolean;
}

/** What the rule does when it applies: points (fixed or per unit of a property), a badge, a streak's progress; one to ten. */
export function EffectList({ form, readOnly }: EffectListProps) {
  const { t } = useTranslation();
  const rows = useFieldArray({ control: form.control, name: 'effects' });
  return (
    <Stack gap="xs">
      {rows.fields.map((row, index) => (
        <EffectRow key={row.id} form={form} index={index} readOnly={readOnly} onRemove={rows.fields.length > 1 ? () => rows.remove(index) : undefined} />
      ))}
      {!readOnly && rows.fields.length < EFFECTS_MAX && (
        <Group>
          <Button variant="default" size="xs" onClick={() => rows.append(newEffect())}>
            {t('rules.addEffect')}
          </Button>
        </Group>
      )}
    </Stack>
  );
}

/** A Mantine Select bound to a form value of a fixed list. */
function ChoiceField({ form, name, label, data, readOnly, w }: { form: ApiForm<RuleDraft>; name: Path<RuleDraft>; label: string; data: Array<{ value: string; label: string }>; readOnly: boolean; w?: number }) {
  return (
    <Controller
      control={form.control}
      name={name}
      render={({ field }) => (
        <Select ref={field.ref} label={label} data={data} value={String(field.value)} onChange={(value) => value && field.onChange(value)} allowDeselect={false} readOnly={readOnly} w={w} />
      )}
    />
  );
}

function EffectRow({ form, index, readOnly, onRemove }: EffectListProps & { index: number; onRemove?: () => void }) {
  const { t } = useTranslation();
  const effect = useWatch({ control: form.control, name: `effects.${index}` }) as EffectDraft | undefined;
  const eventName = useWatch({ control: form.control, name: 'event_name' }) ?? '';
  const at = `effects.${index}` as const;
  if (!effect) return null;
  return (
    <Fieldset legend={t('rules.effect', { n: index + 1 })} variant="filled" p="xs">
      <Group align="flex-start" wrap="wrap" gap="xs">
        <ChoiceField form={form} name={`${at}.type`} label={t('rules.effectType')} data={EFFECT_TYPES.map((type) => ({ value: type, label: t(`rules.effectTypes.${type}`) }))} readOnly={readOnly} />
        {effect.type === 'award_points' && (
          <ChoiceField form={form} name={`${at}.mode`} label={t('rules.pointsMode')} data={(['fixed', 'rate'] as const).map((mode) => ({ value: mode, label: t(`rules.pointsModes.${mode}`) }))} readOnly={readOnly} />
        )}
        {effect.type === 'award_points' && effect.mode === 'fixed' && (
          <TextInput label={t('rules.points')} {...form.field(`${at}.points`, { number: true, required: true })} readOnly={readOnly} w={170} />
        )}
        {effect.type === 'award_points' && effect.mode === 'rate' && (
          <>
            <div style={{ flex: '2 1 14rem' }}>
              <FactPicker
                form={form}
                operation="createRule"
                name={`${at}.property`}
                typeName={`${at}.property`}
                pointer={`/effects/${index}/rate/property`}
                label={t('rules.rateProperty')}
                eventName={eventName}
                numericOnly
                readOnly={readOnly}
                required
              />
            </div>
            <TextInput label={t('rules.pointsPerUnit')} {...form.field(`${at}.points_per_unit`, { number: true, required: true, pointer: `/effects/${index}/rate/points_per_unit` })} readOnly={readOnly} w={170} />
            <ChoiceField form={form} name={`${at}.rounding`} label={t('rules.rounding')} data={ROUNDINGS.map((rounding) => ({ value: rounding, label: t(`rules.roundings.${rounding}`) }))} readOnly={readOnly} w={120} />
            <TextInput label={t('rules.maxPoints')} {...form.field(`${at}.max_points`, { number: true })} readOnly={readOnly} w={200} />
          </>
        )}
        {effect.type === 'award_points' && <TextInput label={t('rules.reason')} placeholder={t('rules.reasonHelp')} {...form.field(`${at}.reason`)} readOnly={readOnly} />}
        {effect.type === 'award_badge' && <BadgePicker form={form} operation="createRule" name={`${at}.badge_code`} label={t('rules.badge')} readOnly={readOnly} required />}
        {effect.type === 'continue_streak' && <StreakPicker form={form} operation="createRule" name={`${at}.streak_code`} label={t('rules.streak')} readOnly={readOnly} required />}
        {!readOnly && onRemove && (
          <Button variant="subtle" color="red.9" mt={24} aria-label={t('rules.removeEffect', { n: index + 1 })} onClick={onRemove}>
            ✕
          </Button>
        )}
      </Group>
    </Fieldset>
  );
}
