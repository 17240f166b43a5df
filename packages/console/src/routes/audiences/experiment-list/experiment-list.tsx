import { Anchor, Badge, Button, Stack, Table, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useExperiments } from '../../../hooks/api/experiments';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { RoleGuard, useCan } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';
import { useFormat, ZoneNote } from '../../../lib/format';
import { STATUS_COLORS } from '../experiment-edit/components/experiment-actions';

/** The tenant's experiments: what each tests, its status and when it started, with the way to its results. */
export function ExperimentList() {
  const { t } = useTranslation();
  const f = useFormat();
  const pages = useCursorPages();
  const experiments = useExperiments(pages.cursor);
  const rows = experiments.data?.experiments ?? [];
  const canReadResults = useCan('analytics:read');
  return (
    <Stack>
      <PageHeader title={t('experiments.title')}>
        <RoleGuard permission="programs:write">
          <Button component={Link} to="/experiments/new">
            {t('experiments.new')}
          </Button>
        </RoleGuard>
      </PageHeader>
      <Text size="sm" c="dimmed">
        {t('experiments.intro')}
      </Text>
      <ErrorAlert error={experiments.error} />
      {experiments.isPending && <Loading />}
      {experiments.data && rows.length === 0 && <Text>{t('experiments.none')}</Text>}
      {rows.length > 0 && (
        <ScrollTable minWidth={640}>
          <Table striped data-testid="experiments">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('experiments.name')}</Table.Th>
                <Table.Th>{t('experiments.subjectType')}</Table.Th>
                <Table.Th>{t('experiments.status')}</Table.Th>
                <Table.Th>{t('experiments.started')}</Table.Th>
                <Table.Th>{t('experiments.results')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((experiment) => (
                <Table.Tr key={experiment.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/experiments/${experiment.id}`}>
                      {experiment.name}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{t(`experiments.subjectTypes.${experiment.subject_type}`)}</Table.Td>
                  <Table.Td>
                    <Badge color={STATUS_COLORS[experiment.status]} variant="filled">
                      {t(`experiments.statuses.${experiment.status}`)}
                    </Badge>
                  </Table.Td>
                  <Table.Td>{experiment.started_at ? f.dateTime(experiment.started_at) : '—'}</Table.Td>
                  <Table.Td>
                    {experiment.status === 'draft' || !canReadResults ? (
                      '—'
                    ) : (
                      <Anchor component={Link} to={`/experiments/${experiment.id}/results`} aria-label={t('experiments.resultsOf', { name: experiment.name })}>
                        {t('experiments.results')}
                      </Anchor>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <Pager pages={pages} nextCursor={experiments.data?.next_cursor} />
      <ZoneNote />
    </Stack>
  );
}
