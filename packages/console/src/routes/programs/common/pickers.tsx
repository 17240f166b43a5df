import { Autocomplete, Group, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Controller, type FieldValues, type Path, type PathValue } from 'react-hook-form';
import { useEventProperties, type EventProperty } from '../../../hooks/api/event-names';
import { useFieldWiring, type PickerProps } from '../../../components/pickers';
import { PARTICIPANT_FACTS, type FactType } from './rule-draft';

export { BadgePicker, EventNamePicker, StreakPicker } from '../../../components/pickers';

/**
 * The Programs area's own picker: a condition's fact from the properties seen
 * on that event (with their types). The event name, badge and streak pickers
 * are shared (components/pickers.tsx).
 */
/** The facts a condition may read on an event, with their types: the properties seen on it, then the participant's attributes. */
export function useFactChoices(eventName: string) {
  const properties = useEventProperties(eventName);
  const scalar = (properties.data?.properties ?? []).filter((p) => p.types[0] !== 'object');
  const facts = [
    ...scalar.map((p) => ({ fact: p.fact, type: factType(p), seen: p.seen })),
    ...PARTICIPANT_FACTS.map((p) => ({ ...p, seen: null as number | null })),
  ];
  return { facts, sampled: properties.data?.sampled ?? 0, loading: properties.isFetching };
}

/** A property's type as a condition compares it: its most frequent JSON type; a list is read as a list. */
function factType(property: EventProperty): FactType {
  const type = property.types[0];
  return type === 'number' || type === 'string' || type === 'boolean' || type === 'array' ? type : '';
}

/** A condition's fact: offered from the event's properties with their types; picking one sets the condition's type. */
export function FactPicker<T extends FieldValues>(props: PickerProps<T> & { eventName: string; typeName: Path<T>; numericOnly?: boolean }) {
  const { t } = useTranslation();
  const wiring = useFieldWiring(props);
  const choices = useFactChoices(props.eventName);
  const facts = props.numericOnly ? choices.facts.filter((c) => c.type === 'number' && c.fact.startsWith('properties.')) : choices.facts;
  const byFact = new Map(facts.map((c) => [c.fact, c]));
  const typeLabel = (type: FactType) => t(`programs.pickers.types.${type || 'unknown'}`);
  const current = byFact.get(String(props.form.watch(props.name) ?? ''));
  const description = current
    ? current.seen !== null
      ? t('programs.pickers.factSeen', { type: typeLabel(current.type), seen: current.seen, sampled: choices.sampled })
      : t('programs.pickers.factParticipant', { type: typeLabel(current.type) })
    : choices.sampled === 0 && props.eventName.trim() !== ''
      ? t('programs.pickers.noPropertiesSeen')
      : wiring.hint;
  return (
    <Controller
      control={props.form.control}
      name={props.name}
      rules={wiring.rules}
      render={({ field }) => (
        <Autocomplete
          ref={field.ref}
          label={props.label}
          description={description}
          placeholder={props.numericOnly ? 'properties.amount' : undefined}
          data={facts.map((c) => c.fact)}
          renderOption={({ option }) => (
            <Group justify="space-between" wrap="nowrap" w="100%" gap="sm">
              <Text size="sm">{option.value}</Text>
              <Text size="xs" c="dimmed">
                {typeLabel(byFact.get(option.value)?.type ?? '')}
              </Text>
            </Group>
          )}
          value={(field.value as string | undefined) ?? ''}
          onChange={(fact) => {
            field.onChange(fact);
            if (!props.numericOnly) props.form.setValue(props.typeName, (byFact.get(fact)?.type ?? '') as PathValue<T, Path<T>>);
          }}
          onBlur={field.onBlur}
          name={field.name}
          error={wiring.error}
          required={props.required}
          readOnly={props.readOnly}
          limit={50}
          maxDropdownHeight={280}
          // Wider than a narrow field, so each fact's type stays readable beside it.
          comboboxProps={{ width: 'max-content', position: 'bottom-start' }}
        />
      )}
    />
  );
}

