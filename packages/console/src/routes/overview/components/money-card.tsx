import { Anchor, Card, Group, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import type { Overview } from '../../../hooks/api/analytics';
import { useCan } from '../../../components/permission';
import { useFormat } from '../../../lib/format';

function Figure({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <div>
      <Text size="sm" c="dimmed">
        {label}
      </Text>
      <Text fw={700} size="xl" data-testid={testId}>
        {value}
      </Text>
    </div>
  );
}

/** The liability in money and the breakage of the period; without a point value, the way to set one (for who may). */
export function MoneyCard({ data }: { data: Overview }) {
  const { t, i18n } = useTranslation();
  const f = useFormat();
  const canSet = useCan('programs:write');
  const money = (value: number | null) => f.money(value, data.currency);
  const rate = data.breakage.rate;
  return (
    <Card withBorder padding="md" component="section" aria-labelledby="money-title">
      <Group justify="space-between" mb="sm" wrap="wrap">
        <Title order={2} size="h4" id="money-title">
          {t('money.title')}
        </Title>
        {data.point_value !== null && (
          <Text size="sm" c="dimmed" data-testid="point-value">
            {t('money.pointValue', { value: new Intl.NumberFormat(i18n.language, { style: 'currency', currency: data.currency, maximumFractionDigits: 6 }).format(data.point_value) })}
          </Text>
        )}
      </Group>
      {data.point_value === null && (
        <Stack gap={4} mb="sm">
          <Text size="sm">{t('money.noPointValue')}</Text>
          {canSet ? (
            <Anchor component={Link} to="/programs/points-settings" size="sm">
              {t('money.setPointValue')}
            </Anchor>
          ) : (
            <Text size="sm" c="dimmed">
              {t('money.askPointValue')}
            </Text>
          )}
        </Stack>
      )}
      <SimpleGrid cols={{ base: 1, sm: 3 }}>
        <Figure label={t('money.outstandingValue')} value={data.point_value === null ? `${f.number(data.liability.outstanding_points)} ${t('overview.points')}` : money(data.liability.outstanding_value)} testId="liability-value" />
        <Figure label={t('money.breakageRate')} value={rate === null ? '—' : new Intl.NumberFormat(i18n.language, { style: 'percent', maximumFractionDigits: 1 }).format(rate)} testId="breakage-rate" />
        <Figure label={t('money.breakageValue')} value={data.point_value === null ? `${f.number(data.breakage.points_expired)} ${t('overview.points')}` : money(data.breakage.value)} testId="breakage-value" />
      </SimpleGrid>
      <Text size="xs" c="dimmed" mt="xs">
        {data.breakage.points_issued === 0
          ? t('money.breakageNone')
          : t('money.breakageExplain', { expired: f.number(data.breakage.points_expired), issued: f.number(data.breakage.points_issued) })}
      </Text>
    </Card>
  );
}
