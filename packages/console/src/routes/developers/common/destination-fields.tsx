import { MultiSelect, Switch, Textarea, TextInput } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Controller, type UseControllerProps } from 'react-hook-form';
import { useEventCatalog } from '../../../hooks/api/webhooks';
import { useTenant } from '../../../hooks/api/settings';
import { registerRules, type ApiForm } from '../../../lib/forms';

/** What the create and the edit form of a destination share; `name` is set at creation only (the spec does not make it updatable). */
export interface DestinationValues {
  name: string;
  url: string;
  events: string[];
  description: string;
  active: boolean;
  allow_private_network: boolean;
}

/**
 * The event filter's choices: `*`, a `<prefix>.*` pattern for each prefix the
 * catalogue's names start with (what the service accepts as a pattern), then
 * every catalogue event.
 */
function useEventChoices() {
  const { t } = useTranslation();
  const catalog = useEventCatalog();
  const names = (catalog.data?.events ?? []).map((event) => event.name);
  const prefixes = [...new Set(names.filter((name) => name.includes('.')).map((name) => name.split('.')[0]))].sort();
  return [
    { value: '*', label: `* (${t('webhookForm.every')})` },
    ...prefixes.map((prefix) => ({ value: `${prefix}.*`, label: `${prefix}.* (${t('webhookForm.everyWithPrefix', { prefix })})` })),
    ...names.map((name) => ({ value: name, label: name })),
  ];
}

/**
 * The URL, event filter, description, enabled and local-receiver fields. The
 * local-receiver switch is the service's `allow_private_network`: offered in a
 * sandbox tenant; a live tenant sees it off and disabled, with the reason (the
 * service refuses it there with 403 SANDBOX_ONLY whatever the console does).
 */
export function DestinationFields({ form, withActive }: { form: ApiForm<DestinationValues>; withActive: boolean }) {
  const { t } = useTranslation();
  const tenant = useTenant();
  const choices = useEventChoices();
  const sandbox = tenant.data?.environment === 'sandbox';
  // Recording the names with the form is what lets a refusal naming /events or /allow_private_network land on them.
  form.field('events', { required: true });
  form.field('allow_private_network');
  form.field('active');
  const eventsRules = registerRules(undefined, { required: true }) as UseControllerProps<DestinationValues, 'events'>['rules'];
  return (
    <>
      <TextInput label={t('webhooks.url')} type="url" placeholder="https://" {...form.field('url', { required: true })} />
      <Controller
        control={form.control}
        name="events"
        rules={eventsRules}
        render={({ field }) => (
          <MultiSelect
            ref={field.ref}
            label={t('webhooks.events')}
            description={t('webhookForm.eventsHelp')}
            data={choices}
            value={field.value}
            onChange={field.onChange}
            onBlur={field.onBlur}
            name={field.name}
            error={form.errorOf('events')}
            searchable
            required
          />
        )}
      />
      <Textarea label={t('webhookForm.description')} autosize minRows={2} {...form.field('description')} />
      {withActive && (
        <Controller
          control={form.control}
          name="active"
          render={({ field }) => (
            <Switch
              ref={field.ref}
              label={t('webhookForm.enabled')}
              description={t('webhookForm.enabledHelp')}
              checked={field.value}
              onChange={(event) => field.onChange(event.currentTarget.checked)}
              error={form.errorOf('active')}
            />
          )}
        />
      )}
      <Controller
        control={form.control}
        name="allow_private_network"
        render={({ field }) => (
          <Switch
            ref={field.ref}
            label={t('webhookForm.localReceiver')}
            description={sandbox ? t('webhookForm.localReceiverHelp') : t('webhookForm.localReceiverLive')}
            checked={field.value}
            disabled={!sandbox && !field.value}
            onChange={(event) => field.onChange(event.currentTarget.checked)}
            error={form.errorOf('allow_private_network')}
          />
        )}
      />
    </>
  );
}

/** The body of a PATCH: only what the person changed (an unchanged URL is not checked again). */
export function changedFields(values: DestinationValues, dirty: Partial<Record<keyof DestinationValues, unknown>>) {
  const body: { url?: string; events?: string[]; description?: string; active?: boolean; allow_private_network?: boolean } = {};
  if (dirty.url) body.url = values.url.trim();
  if (dirty.events) body.events = values.events;
  if (dirty.description) body.description = values.description;
  if (dirty.active) body.active = values.active;
  if (dirty.allow_private_network) body.allow_private_network = values.allow_private_network;
  return body;
}
