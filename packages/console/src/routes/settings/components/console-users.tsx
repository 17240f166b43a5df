import { Alert, Badge, Button, Card, Checkbox, Code, Group, Select, Stack, Switch, Table, Text, TextInput, Title } from '@mantine/core';
import { Controller, type Control, type FieldValues, type Path } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { useConsoleUsers, useInviteUser, useRemoveUser, useUpdateUser, type ConsoleUserRow } from '../../../hooks/api/settings';
import { ErrorAlert } from '../../../components/error-alert';
import { ConfirmButton } from '../../../components/confirm-button';
import { FormDialog } from '../../../components/publication-controls';
import { useCurrentUser } from '../../../components/permission';
import { FormErrors, useApiForm, type ApiForm } from '../../../lib/forms';
import { ROLES, type Role } from '../../../lib/permissions';
import { ScrollTable } from '../../../components/loading';

/**
 * Whether a role edits programs at all: only then does `can_publish` mean
 * something (the service's role description: owners and marketers edit
 * programs, and publish when `can_publish`).
 */
const PROGRAM_EDITORS: ReadonlySet<Role> = new Set<Role>(['owner', 'marketer']);
const editsPrograms = (role: Role) => PROGRAM_EDITORS.has(role);

/** The role picker and the publishing switch, shared by the invitation and the edit dialog. */
function RoleAndPublishing<T extends FieldValues & { role: Role; can_publish: boolean }>({ form, control }: { form: ApiForm<T>; control: Control<T> }) {
  const { t } = useTranslation();
  const role = form.watch('role' as Path<T>) as Role;
  return (
    <>
      <Controller
        control={control}
        name={'role' as Path<T>}
        render={({ field }) => (
          <Select
            label={t('users.role')}
            data={ROLES.map((value) => ({ value, label: t(`roles.${value}`) }))}
            value={field.value as string}
            onChange={(value) => value && field.onChange(value)}
            onBlur={field.onBlur}
            allowDeselect={false}
            error={form.errorOf('role' as Path<T>)}
            w={200}
          />
        )}
      />
      <Controller
        control={control}
        name={'can_publish' as Path<T>}
        render={({ field }) => (
          <Checkbox
            label={t('people.mayPublish')}
            description={t('people.mayPublishHelp')}
            checked={Boolean(field.value) && editsPrograms(role)}
            disabled={!editsPrograms(role)}
            onChange={(event) => field.onChange(event.currentTarget.checked)}
            error={form.errorOf('can_publish' as Path<T>)}
          />
        )}
      />
    </>
  );
}

interface EditValues {
  name: string;
  role: Role;
  can_publish: boolean;
}

/** One person's name, role and publishing permission, in a dialog on lib/forms. */
function EditUser({ user }: { user: ConsoleUserRow }) {
  const { t } = useTranslation();
  const update = useUpdateUser();
  // `values`, not defaults: a switch in the table may change the person while the dialog is closed.
  const form = useApiForm<EditValues>('updateConsoleUser', { values: { name: user.name ?? '', role: user.role, can_publish: user.can_publish } });
  return (
    <FormDialog
      form={form}
      label={t('people.edit')}
      buttonLabel={t('people.editNamed', { email: user.email })}
      title={t('people.editTitle', { email: user.email })}
      message={t('people.editMessage')}
      confirmLabel={t('people.save')}
      onSubmit={async (values) => {
        const saved = await update.mutateAsync({
          id: user.id,
          name: values.name.trim() && values.name.trim() !== (user.name ?? '') ? values.name.trim() : undefined,
          role: values.role !== user.role ? values.role : undefined,
          can_publish: values.can_publish !== user.can_publish ? values.can_publish : undefined,
        });
        form.reset({ name: saved.name ?? '', role: saved.role, can_publish: saved.can_publish });
      }}
    >
      <TextInput label={t('people.name')} {...form.field('name', { required: false })} />
      <RoleAndPublishing form={form} control={form.control} />
    </FormDialog>
  );
}

/** Publishing as the table says it: a switch for owners of the console to flip at once, a word for others. */
function PublishingCell({ user, editable }: { user: ConsoleUserRow; editable: boolean }) {
  const { t } = useTranslation();
  const update = useUpdateUser();
  if (!editsPrograms(user.role)) return <Text size="sm">{t('people.noPrograms')}</Text>;
  if (!editable) return <Badge variant="outline" color="gray.8">{t(user.can_publish ? 'people.publishes' : 'people.draftsOnly')}</Badge>;
  return (
    <Stack gap={2}>
      <Switch
        aria-label={`${t('people.mayPublish')}: ${user.email}`}
        checked={user.can_publish}
        disabled={update.isPending}
        onChange={(event) => update.mutate({ id: user.id, can_publish: event.currentTarget.checked })}
      />
      <ErrorAlert error={update.error} />
    </Stack>
  );
}

interface InviteValues {
  email: string;
  name: string;
  role: Role;
  can_publish: boolean;
}

function InviteUser() {
  const { t } = useTranslation();
  const invite = useInviteUser();
  const form = useApiForm<InviteValues>('inviteConsoleUser', { defaultValues: { email: '', name: '', role: 'marketer', can_publish: false } });
  return (
    <form
      noValidate
      onSubmit={form.submit(async (values) => {
        await invite.mutateAsync({
          email: values.email.trim(),
          role: values.role,
          name: values.name.trim() || undefined,
          can_publish: editsPrograms(values.role) ? values.can_publish : undefined,
        });
        form.reset();
      })}
    >
      <Stack mt="md">
        <Title order={3} size="h5">
          {t('users.inviteEmail')}
        </Title>
        <Group align="flex-start" wrap="wrap">
          <TextInput label={t('users.email')} type="email" autoComplete="off" {...form.field('email')} />
          <TextInput label={t('people.name')} {...form.field('name')} />
        </Group>
        <RoleAndPublishing form={form} control={form.control} />
        <FormErrors form={form} />
        <Group>
          <Button type="submit" loading={form.formState.isSubmitting}>
            {t('users.invite')}
          </Button>
        </Group>
        {invite.data && (
          <Alert color="green" role="status" title={t('users.invited')}>
            {t('users.inviteLink')} <Code>{invite.data.invite_url}</Code>
          </Alert>
        )}
      </Stack>
    </form>
  );
}

/** The tenant's console users, for those holding access:manage: role and publishing per person, invitations, removal. */
export function ConsoleUsers() {
  const { t } = useTranslation();
  const { user: me } = useCurrentUser();
  const users = useConsoleUsers();
  const remove = useRemoveUser();
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('users.title')}
      </Title>
      <ErrorAlert error={users.error} />
      {users.data && (
        <ScrollTable minWidth={640}>
          <Table striped data-testid="console-users">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('users.email')}</Table.Th>
                <Table.Th>{t('users.role')}</Table.Th>
                <Table.Th>{t('people.mayPublish')}</Table.Th>
                <Table.Th>{t('common.actions')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {users.data.map((u) => (
                <Table.Tr key={u.id}>
                  <Table.Td>
                    <Text size="sm">
                      {u.email} {u.id === me.id ? t('people.you') : ''}
                    </Text>
                    {(u.name || (u.status && u.status !== 'active')) && (
                      <Text size="xs" c="dimmed">
                        {[u.name, u.status && u.status !== 'active' ? t(`people.statuses.${u.status}`) : null].filter(Boolean).join(' · ')}
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>{t(`roles.${u.role}`)}</Table.Td>
                  <Table.Td>
                    <PublishingCell user={u} editable={u.id !== me.id} />
                  </Table.Td>
                  <Table.Td>
                    {u.id !== me.id && (
                      <Group gap="xs" wrap="nowrap">
                        <EditUser user={u} />
                        <ConfirmButton
                          size="xs"
                          variant="outline"
                          label={t('users.remove')}
                          aria-label={t('users.removeNamed', { email: u.email })}
                          title={t('users.removeTitle')}
                          message={t('users.removeConfirm', { email: u.email })}
                          confirmLabel={t('users.remove')}
                          onConfirm={() => remove.mutateAsync(u.id)}
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
      <InviteUser />
    </Card>
  );
}
