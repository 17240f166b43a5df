import { useEffect, useState } from 'react';
import { ActionIcon, Button, Group, Select, Stack, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Controller, type FieldValues, type Path } from 'react-hook-form';
import type { ApiForm, FieldRule } from '../../../lib/forms';
import { useRewardMetadataFields, type RewardMetadataField } from '../../../hooks/api/rewards';
import { ErrorAlert } from '../../../components/error-alert';
import type { RewardType } from './reward-form';

/**
 * A reward's metadata as keys and typed values instead of a JSON box. The
 * keys a type takes, their types and their limits are the service's own
 * (`GET /admin/rewards/types/metadata-fields`, read from the schemas that
 * check them): required keys are always there, optional ones are added from
 * a list, a number is entered as a number, a key with fixed values is picked.
 * Each value is a field of the form (`metadata.<key>`), so a limit broken is
 * shown on it, before sending or as the service's refusal.
 */
type Values = FieldValues & { metadata: Record<string, unknown> };

export function ruleOf(field: RewardMetadataField): FieldRule {
  const { type, required, enum: allowed, minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength, pattern, format } = field;
  return { type: type === 'record' ? 'object' : type, required, enum: allowed, minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength, pattern, format };
}

export function MetadataEditor<T extends Values>({ form, type, disabled }: { form: ApiForm<T>; type: RewardType; disabled: boolean }) {
  const { t } = useTranslation();
  const catalogue = useRewardMetadataFields();
  const fields = catalogue.data?.types.find((entry) => entry.type === type)?.fields ?? [];
  const metadata = (form.watch('metadata' as Path<T>) ?? {}) as Record<string, unknown>;
  const shown = fields.filter((field) => field.required || field.key in metadata);
  const addable = fields.filter((field) => !shown.includes(field));
  const name = (key: string) => `metadata.${key}` as Path<T>;
  const remove = (key: string) => {
    const { [key]: _gone, ...rest } = metadata;
    form.unregister(name(key));
    form.setValue('metadata' as Path<T>, rest as T[Path<T>], { shouldDirty: true });
  };
  const add = (key: string) => form.setValue(name(key), (fields.find((f) => f.key === key)?.type === 'record' ? {} : '') as T[Path<T>], { shouldDirty: true });

  return (
    <Stack gap="xs" component="fieldset" style={{ border: 0, padding: 0, margin: 0 }} data-testid="metadata-editor">
      <Title order={3} size="h5" component="legend">
        {t('rewards.metadataTitle')}
      </Title>
      <Text size="sm" c="dimmed">
        {t('rewards.metadataHelp')}
      </Text>
      <ErrorAlert error={catalogue.error} />
      {shown.map((field) => (
        <Group key={field.key} align="flex-start" wrap="nowrap" gap="xs">
          <div style={{ flex: 1 }}>
            <MetadataValue form={form} field={field} disabled={disabled} />
          </div>
          {!field.required && !disabled && (
            <ActionIcon variant="outline" color="red.9" mt={26} aria-label={t('rewards.metadataRemove', { key: field.key })} onClick={() => remove(field.key)}>
              ×
            </ActionIcon>
          )}
        </Group>
      ))}
      {addable.length > 0 && !disabled && (
        <Select
          label={t('rewards.metadataAdd')}
          placeholder={t('rewards.metadataAddPlaceholder')}
          data={addable.map((field) => ({ value: field.key, label: field.key }))}
          value={null}
          onChange={(key) => key && add(key)}
          w={280}
        />
      )}
    </Stack>
  );
}

function MetadataValue<T extends Values>({ form, field, disabled }: { form: ApiForm<T>; field: RewardMetadataField; disabled: boolean }) {
  const { t } = useTranslation();
  const name = `metadata.${field.key}` as Path<T>;
  const rule = ruleOf(field);
  if (field.type === 'record') return <RecordValue form={form} field={field} disabled={disabled} />;
  if (field.enum) {
    return (
      <Controller
        control={form.control}
        name={name}
        rules={{ required: field.required ? t('forms.errors.required') : false }}
        render={({ field: input }) => (
          <Select
            label={field.key}
            description={field.description}
            required={field.required}
            data={field.enum!.map((value) => ({ value, label: value }))}
            value={(input.value as string) || null}
            onChange={(value) => input.onChange(value ?? '')}
            onBlur={input.onBlur}
            error={form.errorOf(name)}
            disabled={disabled}
          />
        )}
      />
    );
  }
  const number = field.type === 'number' || field.type === 'integer';
  const props = form.field(name, { rule, number, required: field.required });
  const hint = [field.description, props.description].filter(Boolean).join(' · ') || undefined;
  return <TextInput label={field.key} {...props} description={hint} disabled={disabled} />;
}

type Typed = 'string' | 'number' | 'boolean';
interface Row {
  key: string;
  kind: Typed;
  value: string;
}

function rowsOf(value: unknown): Row[] {
  return Object.entries((value ?? {}) as Record<string, unknown>).map(([key, v]) => ({ key, kind: typeof v === 'number' ? 'number' : typeof v === 'boolean' ? 'boolean' : 'string', value: String(v) }));
}

function objectOf(rows: Row[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const row of rows) {
    if (!row.key.trim()) continue;
    // A number that is not one is sent as typed, and the service names the key it refuses.
    out[row.key.trim()] = row.kind === 'number' && row.value.trim() !== '' && !Number.isNaN(Number(row.value)) ? Number(row.value) : row.kind === 'boolean' ? row.value === 'true' : row.value;
  }
  return out;
}

/** An object of keys to typed values (a multiplier's event attributes): rows of key, type and value. */
function RecordValue<T extends Values>({ form, field, disabled }: { form: ApiForm<T>; field: RewardMetadataField; disabled: boolean }) {
  const { t } = useTranslation();
  const name = `metadata.${field.key}` as Path<T>;
  const [rows, setRows] = useState<Row[]>(() => rowsOf(form.getValues(name)));
  useEffect(() => setRows(rowsOf(form.getValues(name))), [form, name]);
  const kinds = (field.value_types ?? ['string']) as Typed[];
  const change = (next: Row[]) => {
    setRows(next);
    form.setValue(name, objectOf(next) as T[Path<T>], { shouldDirty: true });
  };
  const set = (index: number, patch: Partial<Row>) => change(rows.map((row, i) => (i === index ? { ...row, ...patch } : row)));
  return (
    <Stack gap={4}>
      <Text size="sm" fw={500}>
        {field.key}
      </Text>
      {field.description && (
        <Text size="xs" c="dimmed">
          {field.description}
        </Text>
      )}
      {rows.map((row, index) => (
        <Group key={index} gap="xs" wrap="nowrap" align="flex-end">
          <TextInput aria-label={t('rewards.entryKey', { n: index + 1, key: field.key })} value={row.key} onChange={(e) => set(index, { key: e.currentTarget.value })} disabled={disabled} w={160} />
          <Select
            aria-label={t('rewards.entryType', { n: index + 1, key: field.key })}
            data={kinds.map((kind) => ({ value: kind, label: t(`rewards.valueTypes.${kind}`) }))}
            value={row.kind}
            onChange={(kind) => kind && set(index, { kind: kind as Typed, value: kind === 'boolean' ? 'true' : row.value })}
            allowDeselect={false}
            disabled={disabled}
            w={120}
          />
          {row.kind === 'boolean' ? (
            <Select
              aria-label={t('rewards.entryValue', { n: index + 1, key: field.key })}
              data={[
                { value: 'true', label: t('rewards.yes') },
                { value: 'false', label: t('rewards.no') },
              ]}
              value={row.value}
              onChange={(value) => value && set(index, { value })}
              allowDeselect={false}
              disabled={disabled}
              w={110}
            />
          ) : (
            <TextInput
              aria-label={t('rewards.entryValue', { n: index + 1, key: field.key })}
              type={row.kind === 'number' ? 'number' : 'text'}
              value={row.value}
              onChange={(e) => set(index, { value: e.currentTarget.value })}
              disabled={disabled}
              w={160}
            />
          )}
          {!disabled && (
            <ActionIcon variant="outline" color="red.9" mb={4} aria-label={t('rewards.entryRemove', { n: index + 1, key: field.key })} onClick={() => change(rows.filter((_r, i) => i !== index))}>
              ×
            </ActionIcon>
          )}
        </Group>
      ))}
      {!disabled && (
        <Group>
          <Button variant="default" size="compact-sm" onClick={() => change([...rows, { key: '', kind: kinds[0], value: '' }])}>
            {t('rewards.entryAdd', { key: field.key })}
          </Button>
        </Group>
      )}
    </Stack>
  );
}
