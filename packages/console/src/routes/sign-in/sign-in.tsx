import { useState } from 'react';
import { Alert, Button, Center, Paper, PasswordInput, Stack, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useSignIn } from '../../hooks/api/session';
import { ErrorAlert } from '../../components/error-alert';

export function SignIn({ expired }: { expired: boolean }) {
  const { t } = useTranslation();
  const signIn = useSignIn();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  return (
    <Center mih="100vh" p="md" component="main">
      <Paper withBorder shadow="sm" p="xl" w="100%" maw={400}>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            signIn.mutate({ email, password });
          }}
        >
          <Stack>
            <Title order={1} size="h2">
              {t('signIn.title')}
            </Title>
            {expired && !signIn.isError && (
              <Alert color="yellow" variant="light" role="status">
                {t('signIn.expired')}
              </Alert>
            )}
            <TextInput label={t('signIn.email')} type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} data-autofocus />
            <PasswordInput label={t('signIn.password')} autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.currentTarget.value)} />
            <ErrorAlert error={signIn.error} title={t('signIn.failed')} />
            <Button type="submit" loading={signIn.isPending}>
              {t('signIn.submit')}
            </Button>
          </Stack>
        </form>
      </Paper>
    </Center>
  );
}
