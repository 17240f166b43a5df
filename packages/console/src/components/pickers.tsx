import { Autocomplete, Group, Select, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Controller, type FieldValues, type Path, type UseControllerProps } from 'react-hook-form';
import { useEventNames } from '../hooks/api/event-names';
import { useBadgeChoices } from '../hooks/api/programs';
import { useStreakChoices } from '../hooks/api/streaks';
import { fieldHint, fieldRule, registerRules, type ApiForm } from '../lib/forms';
import { useFormat } from '../lib/format';

/**
 * Pickers where free text used to be: an event name from those the tenant has
 * sent, a badge or a streak by its name. Each is a field of a lib/forms form:
 * its limits from the operation's schema, and a refusal naming its body
 * pointer shown on it. Programs and competitions both use them.
 */
export interface PickerProps<T extends FieldValues> {
  form: ApiForm<T>;
  /** The operation whose schema bounds the field. */
  operation: string;
  name: Path<T>;
  label: string;
  required?: boolean;
  readOnly?: boolean;
  disabled?: boolean;
  /** Shown under the label when the field has nothing more pressing to say. */
  description?: string;
  /** The body field, when the form's name differs from it (`/conditions/all/0/fact`). */
  pointer?: string;
}

/** A controlled widget's part of a form field: the schema's check and hint, and the name recorded with the form so a refusal lands on it. */
export function useFieldWiring<T extends FieldValues>({ form, operation, name, required, pointer }: PickerProps<T>) {
  const rule = fieldRule(operation, pointer ? pointer.replace(/^\//, '').split('/').join('.') : name);
  form.field(name, { required, pointer });
  return { rules: registerRules(rule, { required }) as UseControllerProps<T>['rules'], hint: fieldHint(rule), error: form.errorOf(name) };
}

/** An event name: those received offered with their count and last time; a name never received is allowed, with a warning. */
export function EventNamePicker<T extends FieldValues>(props: PickerProps<T> & { extraNames?: string[] }) {
  const { t } = useTranslation();
  const f = useFormat();
  const wiring = useFieldWiring(props);
  const value = String(props.form.watch(props.name) ?? '');
  const names = useEventNames('');
  const seen = names.data?.names ?? [];
  const byName = new Map(seen.map((n) => [n.event_name, n]));
  const unseen = value.trim() !== '' && names.isSuccess && !byName.has(value.trim()) && !(props.extraNames ?? []).includes(value.trim());
  return (
    <Controller
      control={props.form.control}
      name={props.name}
      rules={wiring.rules}
      render={({ field }) => (
        <Autocomplete
          ref={field.ref}
          label={props.label}
          data={[...new Set([...seen.map((n) => n.event_name), ...(props.extraNames ?? [])])]}
          renderOption={({ option }) => {
            const n = byName.get(option.value);
            return (
              <Group justify="space-between" wrap="nowrap" w="100%" gap="sm">
                <Text size="sm">{option.value}</Text>
                {n && (
                  <Text size="xs" c="dimmed">
                    {t('programs.pickers.eventSeen', { count: n.events, events: f.number(n.events), at: f.dateTime(n.last_seen_at) })}
                  </Text>
                )}
              </Group>
            );
          }}
          value={(field.value as string | undefined) ?? ''}
          onChange={field.onChange}
          onBlur={field.onBlur}
          name={field.name}
          // A name never received is advice, not a refusal: said in the description (the field stays valid), in a dark orange that keeps its contrast.
          description={unseen ? `⚠ ${t('programs.pickers.eventUnseen')}` : props.description}
          styles={unseen ? { description: { color: '#8a3c00' }, input: { borderColor: '#8a3c00' } } : undefined}
          error={wiring.error}
          required={props.required}
          readOnly={props.readOnly}
          disabled={props.disabled}
          limit={50}
          maxDropdownHeight={280}
        />
      )}
    />
  );
}

interface Choice {
  code: string;
  name: string;
}

/** A definition (badge, streak) by its name; its code is what is sent. A stored code not among the choices stays shown as it is. */
function CodePicker<T extends FieldValues>(props: PickerProps<T> & { choices: Choice[]; empty: string; placeholder?: string }) {
  const wiring = useFieldWiring(props);
  const data = props.choices.map((c) => ({ value: c.code, label: `${c.name} (${c.code})` }));
  return (
    <Controller
      control={props.form.control}
      name={props.name}
      rules={wiring.rules}
      render={({ field }) => {
        const value = (field.value as string | undefined) || null;
        const options = value && !data.some((o) => o.value === value) ? [...data, { value, label: value }] : data;
        return (
          <Select
            ref={field.ref}
            label={props.label}
            description={props.description ?? wiring.hint}
            placeholder={props.placeholder}
            data={options}
            value={value}
            onChange={(code) => field.onChange(code ?? '')}
            onBlur={field.onBlur}
            name={field.name}
            error={wiring.error}
            required={props.required}
            readOnly={props.readOnly}
            disabled={props.disabled}
            clearable={!props.required && !props.readOnly}
            searchable
            nothingFoundMessage={props.empty}
            w={280}
          />
        );
      }}
    />
  );
}

export function BadgePicker<T extends FieldValues>(props: PickerProps<T> & { placeholder?: string }) {
  const { t } = useTranslation();
  const badges = useBadgeChoices();
  return <CodePicker {...props} choices={badges.data?.badges ?? []} empty={t('programs.pickers.noBadges')} />;
}

export function StreakPicker<T extends FieldValues>(props: PickerProps<T>) {
  const { t } = useTranslation();
  const streaks = useStreakChoices();
  return <CodePicker {...props} choices={streaks.data?.streaks ?? []} empty={t('programs.pickers.noStreaks')} />;
}
