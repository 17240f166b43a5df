import { useEffect, useState } from 'react';
import { Controller, type UseControllerProps } from 'react-hook-form';
import { Alert, Badge, Button, Card, Checkbox, Code, CopyButton, Group, Select, Stack, Switch, Table, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useApiKeys, useCreateApiKey, useRevokeApiKey, useRotateApiKey } from '../../../hooks/api/api-keys';
import { useTenant } from '../../../hooks/api/settings';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { ConfirmButton } from '../../../components/confirm-button';
import { Loading, ScrollTable } from '../../../components/loading';
import { FormErrors, fieldRule, registerRules, useApiForm } from '../../../lib/forms';
import { useFormat, ZoneNote } from '../../../lib/format';

/** The scopes `/events/api-keys` accepts, in the order the form lists them. */
const SCOPES = ['ingest', 'admin', 'gamify:admin', 'read:pii'] as const;
type Scope = (typeof SCOPES)[number];

/** A secret shown once, with a copy button; it lives in this component's state only, never in the query cache. */
function SecretOnce({ title, secret, onDismiss }: { title: string; secret: string; onDismiss: () => void }) {
  const { t } = useTranslation();
  return (
    <Alert color="green" variant="light" role="status" withCloseButton onClose={onDismiss} closeButtonLabel={t('apiKeys.dismiss')}>
      <Stack gap="xs">
        {/* The title as body text: the alert's own title colour is below 4.5:1 on its background. */}
        <Text fw={700}>{title}</Text>
        <Text size="sm">{t('apiKeys.secretOnce')}</Text>
        <Group gap="xs" wrap="nowrap">
          <Code data-testid="api-key-secret" style={{ wordBreak: 'break-all' }}>
            {secret}
          </Code>
          <CopyButton value={secret}>
            {({ copied, copy }) => (
              <Button size="compact-sm" variant={copied ? 'filled' : 'default'} onClick={copy}>
                {copied ? t('apiKeys.copied') : t('apiKeys.copy')}
              </Button>
            )}
          </CopyButton>
        </Group>
      </Stack>
    </Alert>
  );
}

interface ApiKeyValues {
  name: string;
  environment: 'live' | 'test';
  scopes: Scope[];
}

function CreateApiKey({ onSecret }: { onSecret: (title: string, secret: string) => void }) {
  const { t } = useTranslation();
  const create = useCreateApiKey();
  const tenant = useTenant();
  // A sandbox tenant is for integration tests: its keys are test keys unless someone asks otherwise.
  const proposed = tenant.data?.environment === 'sandbox' ? 'test' : 'live';
  const form = useApiForm<ApiKeyValues>('createApiKey', { defaultValues: { name: '', environment: proposed, scopes: ['ingest'] } });
  const { setValue, getFieldState } = form;
  useEffect(() => {
    if (!getFieldState('environment').isDirty) setValue('environment', proposed);
  }, [proposed, setValue, getFieldState]);
  // Recording the names with the form is what lets a refusal naming /environment or /scopes land on them.
  form.field('environment');
  form.field('scopes');
  const scopesRules = registerRules(fieldRule('createApiKey', 'scopes'), { required: true }) as UseControllerProps<ApiKeyValues, 'scopes'>['rules'];
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('apiKeys.create')}
      </Title>
      <form
        noValidate
        onSubmit={form.submit(async (values) => {
          const created = await create.mutateAsync({ name: values.name, environment: values.environment, scopes: values.scopes });
          onSecret(t('apiKeys.created', { name: created.name }), created.key);
          form.reset({ name: '', environment: values.environment, scopes: values.scopes });
        })}
      >
        <Stack>
          <Group align="flex-start" wrap="wrap">
            <TextInput label={t('apiKeys.name')} {...form.field('name')} />
            <Controller
              control={form.control}
              name="environment"
              render={({ field }) => (
                <Select
                  ref={field.ref}
                  label={t('apiKeys.environment')}
                  data={[
                    { value: 'live', label: t('apiKeys.live') },
                    { value: 'test', label: t('apiKeys.test') },
                  ]}
                  value={field.value}
                  allowDeselect={false}
                  onChange={(value) => field.onChange((value ?? 'live') as 'live' | 'test')}
                  onBlur={field.onBlur}
                  error={form.errorOf('environment')}
                />
              )}
            />
          </Group>
          <Controller
            control={form.control}
            name="scopes"
            rules={scopesRules}
            render={({ field }) => (
              <Checkbox.Group label={t('apiKeys.scopes')} value={field.value} onChange={(value) => field.onChange(value as Scope[])} error={form.errorOf('scopes')} withAsterisk>
                <Stack gap="xs" mt="xs">
                  {SCOPES.map((scope) => (
                    <Checkbox key={scope} value={scope} label={<><Code>{scope}</Code> {t(`apiKeys.scope.${scope.replace(':', '_')}`)}</>} />
                  ))}
                </Stack>
              </Checkbox.Group>
            )}
          />
          <FormErrors form={form} />
          <Group>
            <Button type="submit" loading={form.formState.isSubmitting}>
              {t('apiKeys.createSubmit')}
            </Button>
          </Group>
        </Stack>
      </form>
    </Card>
  );
}

export function ApiKeyList() {
  const { t } = useTranslation();
  const f = useFormat();
  const pages = useCursorPages();
  const [includeRevoked, setIncludeRevoked] = useState(false);
  const keys = useApiKeys({ includeRevoked, cursor: pages.cursor });
  const rotate = useRotateApiKey();
  const revoke = useRevokeApiKey();
  const [secret, setSecret] = useState<{ title: string; value: string } | null>(null);
  const rows = keys.data?.api_keys ?? [];
  return (
    <Stack>
      <PageHeader title={t('apiKeys.title')} />
      <Text c="dimmed" size="sm">
        {t('apiKeys.intro')}
      </Text>
      {secret && <SecretOnce title={secret.title} secret={secret.value} onDismiss={() => setSecret(null)} />}
      <ErrorAlert error={keys.error} />
      <Switch
        label={t('apiKeys.showRevoked')}
        checked={includeRevoked}
        onChange={(e) => {
          pages.reset();
          setIncludeRevoked(e.currentTarget.checked);
        }}
      />
      {keys.isPending && <Loading />}
      {keys.data && rows.length === 0 && <Text>{t('apiKeys.none')}</Text>}
      {rows.length > 0 && (
        <ScrollTable minWidth={900}>
          <Table striped data-testid="api-keys">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('apiKeys.name')}</Table.Th>
                <Table.Th>{t('apiKeys.prefix')}</Table.Th>
                <Table.Th>{t('apiKeys.scopes')}</Table.Th>
                <Table.Th>{t('apiKeys.lastUsed')}</Table.Th>
                <Table.Th>{t('apiKeys.state')}</Table.Th>
                <Table.Th>{t('common.actions')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((key) => (
                <Table.Tr key={key.id}>
                  <Table.Td>{key.name}</Table.Td>
                  <Table.Td>
                    <Code>{key.prefix}…</Code>
                  </Table.Td>
                  <Table.Td>{key.scopes.join(', ')}</Table.Td>
                  <Table.Td>{key.last_used_at ? f.dateTime(key.last_used_at) : t('apiKeys.never')}</Table.Td>
                  <Table.Td>
                    <Badge color={key.revoked_at ? 'gray.7' : 'teal.9'} variant="filled">
                      {key.revoked_at ? t('apiKeys.revoked') : t(`apiKeys.${key.environment}`)}
                    </Badge>
                  </Table.Td>
                  <Table.Td>
                    {!key.revoked_at && (
                      <Group gap="xs" wrap="nowrap">
                        <ConfirmButton
                          size="compact-sm"
                          variant="default"
                          destructive={false}
                          label={t('apiKeys.rotate')}
                          aria-label={t('apiKeys.rotateNamed', { name: key.name })}
                          title={t('apiKeys.rotateTitle')}
                          message={t('apiKeys.rotateConfirm', { name: key.name })}
                          confirmLabel={t('apiKeys.rotate')}
                          onConfirm={async () => {
                            const rotated = await rotate.mutateAsync(key.id);
                            setSecret({ title: t('apiKeys.rotated', { name: rotated.name }), value: rotated.key });
                          }}
                        />
                        <ConfirmButton
                          size="compact-sm"
                          variant="outline"
                          label={t('apiKeys.revoke')}
                          aria-label={t('apiKeys.revokeNamed', { name: key.name })}
                          title={t('apiKeys.revokeTitle')}
                          message={t('apiKeys.revokeConfirm', { name: key.name })}
                          confirmLabel={t('apiKeys.revoke')}
                          onConfirm={() => revoke.mutateAsync(key.id)}
                        />
                      </Group>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      {rows.length > 0 && <ZoneNote />}
      <Pager pages={pages} nextCursor={keys.data?.next_cursor} />
      <CreateApiKey onSecret={(title, value) => setSecret({ title, value })} />
    </Stack>
  );
}
