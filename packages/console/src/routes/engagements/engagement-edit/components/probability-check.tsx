import { Badge, Card, Group, List, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { ProbabilityCheck as Check, Segment } from '../../common/definition';

/** The wheel's odds at a glance: the weights' sum, segments that can never be drawn, the points a spin gives on average. */
export function ProbabilityCheck({ check, segments }: { check: Check; segments: Segment[] }) {
  const { t } = useTranslation();
  return (
    <Card withBorder p="sm" data-testid="probability-check" data-ok={check.ok} aria-live="polite">
      <Group gap="xs" mb={4}>
        <Title order={4} size="h6">
          {t('engagements.wheel.check')}
        </Title>
        <Badge variant="filled" color={check.ok ? 'teal.9' : 'red.9'}>
          {check.ok ? t('engagements.wheel.checkOk') : t('engagements.wheel.checkProblem')}
        </Badge>
      </Group>
      <List size="sm" spacing={2}>
        <List.Item>{t('engagements.wheel.totalWeight', { total: Number(check.totalWeight.toFixed(6)) })}</List.Item>
        <List.Item>
          {check.unreachable.length === 0
            ? t('engagements.wheel.allReachable')
            : t('engagements.wheel.unreachable', { labels: check.unreachable.map((i) => segments[i]?.label || `#${i + 1}`).join(', ') })}
        </List.Item>
        <List.Item>
          <Text span fw={700} size="sm" data-testid="expected-points">
            {t('engagements.wheel.expectedPoints', { points: check.expectedPoints.toFixed(1) })}
          </Text>
        </List.Item>
      </List>
    </Card>
  );
}
