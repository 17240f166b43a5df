import { Alert, Anchor, Button, Center, Paper, PasswordInput, Stack, TextInput, Title } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { client } from '../../api/client';
import { FormErrors, useApiForm } from '../../lib/forms';

/** The invite link, `/console/accept-invite#token=…` (in the fragment, so never in a server log): the invited person chooses a password. */
function invitationToken(): string {
  return new URLSearchParams(window.location.hash.slice(1)).get('token') ?? new URLSearchParams(window.location.search).get('token') ?? '';
}

interface InvitationValues {
  name: string;
  password: string;
}

/** The password's length is the service's rule (12 to 200 characters), shown under the field before it is broken. */
export function AcceptInvitation() {
  const { t } = useTranslation();
  const token = invitationToken();
  const form = useApiForm<InvitationValues>('acceptConsoleInvitation', { defaultValues: { name: '', password: '' } });
  const accept = useMutation({ mutationFn: (values: InvitationValues) => client.console.acceptInvitation({ body: { token, password: values.password, name: values.name || undefined } }) });
  return (
    <Center mih="100vh" p="md" component="main">
      <Paper withBorder p="xl" w="100%" maw={420}>
        <form onSubmit={form.submit((values) => accept.mutateAsync(values))} noValidate>
          <Stack>
            <Title order={1} size="h2">
              {t('invitation.title')}
            </Title>
            {accept.isSuccess ? (
              <Alert color="green" role="status">
                {t('invitation.done')} <Anchor href="/console/">{t('signIn.submit')}</Anchor>
              </Alert>
            ) : (
              <>
                <TextInput label={t('invitation.name')} autoComplete="name" {...form.field('name')} />
                <PasswordInput label={t('invitation.password')} autoComplete="new-password" {...form.field('password')} />
                <FormErrors form={form} />
                <Button type="submit" loading={form.formState.isSubmitting} disabled={!token}>
                  {t('invitation.submit')}
                </Button>
              </>
            )}
          </Stack>
        </form>
      </Paper>
    </Center>
  );
}
