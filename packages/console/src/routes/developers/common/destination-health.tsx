import { Badge, Card, Code, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { DestinationHealth } from '../../../hooks/api/webhooks';
import { useFormat } from '../../../lib/format';

/** Dark shades, on which white text passes AA contrast; the light yellow takes dark text (autoContrast). */
const COLORS: Record<DestinationHealth['status'], string> = { healthy: 'teal.9', degraded: 'yellow.4', failing: 'red.9', disabled: 'gray.7', idle: 'blue.9' };

/** The service's verdict on a destination (computed from its recent attempts), in a word. */
export function HealthBadge({ health }: { health: DestinationHealth }) {
  const { t } = useTranslation();
  return (
    <Badge color={COLORS[health.status]} variant="filled" autoContrast miw="max-content" data-testid="health-badge">
      {t(`webhookHealth.status.${health.status}`)}
    </Badge>
  );
}

function Figure({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text size="sm">{children}</Text>
    </div>
  );
}

/** The destination's health on its page: the verdict and why, the last error, the last success and the failure counts. */
export function HealthCard({ health }: { health: DestinationHealth }) {
  const { t } = useTranslation();
  const f = useFormat();
  const counts = (c: DestinationHealth['last_hour']) => t('webhookHealth.counts', { failed: f.number(c.failed), attempts: f.number(c.attempts) });
  const failing = health.status === 'failing';
  return (
    <Card withBorder data-testid="destination-health" style={failing ? { borderColor: 'var(--mantine-color-red-9)' } : undefined}>
      <Stack gap="sm">
        <Title order={2} size="h4">
          {t('webhookHealth.title')} <HealthBadge health={health} />
        </Title>
        <Text size="sm">{failing ? t('webhookHealth.explain.failing', { count: health.consecutive_failures }) : t(`webhookHealth.explain.${health.status}`)}</Text>
        {health.last_error && (
          <div>
            <Text size="xs" c="dimmed">
              {t('webhookHealth.lastError')} · {f.dateTime(health.last_failure_at)}
            </Text>
            <Code block data-testid="health-last-error" style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>
              {health.last_error}
            </Code>
          </div>
        )}
        <SimpleGrid cols={{ base: 2, sm: 5 }} spacing="sm">
          <Figure label={t('webhookHealth.lastSuccess')}>{health.last_success_at ? f.dateTime(health.last_success_at) : t('webhookHealth.never')}</Figure>
          <Figure label={t('webhookHealth.lastAttempt')}>{health.last_attempt_at ? f.dateTime(health.last_attempt_at) : t('webhookHealth.never')}</Figure>
          <Figure label={t('webhookHealth.consecutive')}>{f.number(health.consecutive_failures)}</Figure>
          <Figure label={t('webhookHealth.lastHour')}>{counts(health.last_hour)}</Figure>
          <Figure label={t('webhookHealth.lastDay')}>{counts(health.last_day)}</Figure>
        </SimpleGrid>
      </Stack>
    </Card>
  );
}
