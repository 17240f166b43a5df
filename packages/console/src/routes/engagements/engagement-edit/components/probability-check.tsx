import { Alert, List, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { ProbabilityCheck as Check, Segment } from '../../common/definition';

/** The wheel's odds at a glance: the weights' sum, segments that can never be drawn, the points a spin gives on average. */
export function ProbabilityCheck({ check, segments }: { check: Check; segments: Segment[] }) {
  const { t } = useTranslation();
  return (
    <Alert color={check.ok ? 'green' : 'red'} variant="light" title={t('engagements.wheel.check')} data-testid="probability-check" data-ok={check.ok}>
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
    </Alert>
  );
}
