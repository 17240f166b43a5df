import { Autocomplete, Select } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Controller, type FieldValues, type Path, type UseControllerProps } from 'react-hook-form';
import { useBadges, useRules } from '../../../hooks/api/programs';
import { useContests } from '../../../hooks/api/contests';
import { useChallenges } from '../../../hooks/api/challenges';
import { useEventNames } from '../../../hooks/api/event-names';
import { fieldHint, fieldRule, registerRules, type ApiForm } from '../../../lib/forms';

interface PickerProps<T extends FieldValues> {
  form: ApiForm<T>;
  /** The operation whose schema bounds the field (its limits become the hint and the check). */
  operation: string;
  name: Path<T>;
  label: string;
  required?: boolean;
  disabled?: boolean;
  /** The body field, when the form's name differs from it. */
  pointer?: string;
}

/**
 * A controlled widget's part of a form field: the check and hint from the
 * service's schema, and the field's name recorded with the form (through
 * `form.field`) so a refusal naming its body pointer lands on it.
 */
function useFieldWiring<T extends FieldValues>({ form, operation, name, required, pointer }: PickerProps<T>) {
  const rule = fieldRule(operation, pointer ? pointer.replace(/^\//, '').split('/').join('.') : name);
  // Recording the name (and its pointer) is what `field` does besides the registration, which the Controller takes over.
  form.field(name, { required, pointer });
  return { rules: registerRules(rule, { required }) as UseControllerProps<T>['rules'], description: fieldHint(rule), error: form.errorOf(name) };
}

/**
 * The event names the tenant has sent (most seen first, as the API lists them)
 * and those its programs already use: its rules' triggers, its contests'
 * scoring and its challenges' objectives (an event not sent yet).
 */
function useKnownEventNames(): string[] {
  const seen = useEventNames('');
  const rules = useRules({ trigger: 'event' });
  const contests = useContests({});
  const challenges = useChallenges({});
  const names = new Set<string>((seen.data?.names ?? []).map((name) => name.event_name));
  for (const rule of rules.data?.rules ?? []) if (rule.event_name) names.add(rule.event_name);
  for (const contest of contests.data?.contests ?? []) names.add(contest.scoring.event_type);
  for (const challenge of challenges.data?.challenges ?? []) for (const objective of challenge.objectives) if (objective.event_name) names.add(objective.event_name);
  return [...names];
}

/** An event name: the names already in use offered, a new one (an event not sent yet) still typed freely. */
export function EventNamePicker<T extends FieldValues>(props: PickerProps<T>) {
  const { t } = useTranslation();
  const wiring = useFieldWiring(props);
  const names = useKnownEventNames();
  return (
    <Controller
      control={props.form.control}
      name={props.name}
      rules={wiring.rules}
      render={({ field }) => (
        <Autocomplete
          ref={field.ref}
          label={props.label}
          description={wiring.description ?? t('competitions.pickers.eventHint')}
          data={names}
          value={(field.value as string | undefined) ?? ''}
          onChange={field.onChange}
          onBlur={field.onBlur}
          name={field.name}
          error={wiring.error}
          required={props.required}
          disabled={props.disabled}
        />
      )}
    />
  );
}

/** A badge by its name (the code is what is sent); empty for none. */
export function BadgePicker<T extends FieldValues>(props: PickerProps<T>) {
  const { t } = useTranslation();
  const wiring = useFieldWiring(props);
  const badges = useBadges(undefined);
  const data = (badges.data?.badges ?? []).map((badge) => ({ value: badge.code, label: `${badge.name} (${badge.code})` }));
  return (
    <Controller
      control={props.form.control}
      name={props.name}
      rules={wiring.rules}
      render={({ field }) => {
        const value = (field.value as string | undefined) || null;
        // A code no longer in the first page of badges (or since deleted) stays shown as it is stored.
        const options = value && !data.some((option) => option.value === value) ? [...data, { value, label: value }] : data;
        return (
          <Select
            ref={field.ref}
            label={props.label}
            description={t('competitions.pickers.badgeHint')}
            placeholder={t('competitions.pickers.noBadge')}
            data={options}
            value={value}
            onChange={(code) => field.onChange(code ?? '')}
            onBlur={field.onBlur}
            name={field.name}
            error={wiring.error}
            required={props.required}
            disabled={props.disabled}
            searchable
            clearable
            nothingFoundMessage={t('competitions.pickers.noBadges')}
          />
        );
      }}
    />
  );
}
