import { useState } from 'react';
import { Alert, Anchor, Button, Center, Paper, PasswordInput, Stack, TextInput, Title } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { client } from '../../api/client';
import { ErrorAlert } from '../../components/error-alert';

/** The invite link, `/console/accept-invite#token=…` (in the fragment, so never in a server log): the invited person chooses a password. */
function invitationToken(): string {
  return new URLSearchParams(window.location.hash.slice(1)).get('token') ?? new URLSearchParams(window.location.search).get('token') ?? '';
}

export function AcceptInvitation() {
  const { t } = useTranslation();
  const token = invitationToken();
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const accept = useMutation({ mutationFn: () => client.console.acceptInvitation({ body: { token, password, name: name || undefined } }) });
  return (
    <Center mih="100vh" p="md" component="main">
      <Paper withBorder p="xl" w="100%" maw={420}>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            accept.mutate();
          }}
        >
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
                <TextInput label={t('invitation.name')} value={name} onChange={(e) => setName(e.currentTarget.value)} autoComplete="name" />
                <PasswordInput label={t('invitation.password')} required value={password} onChange={(e) => setPassword(e.currentTarget.value)} autoComplete="new-password" />
                <ErrorAlert error={accept.error} />
                <Button type="submit" loading={accept.isPending} disabled={!token}>
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
