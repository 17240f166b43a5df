import { useEffect, useState } from 'react';
import { Alert, Anchor, Button, Card, Group, Loader, NumberInput, Select, SimpleGrid, Stack, Text, TextInput, Textarea, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams } from 'react-router';
import { useDeleteRule, useRule, useSaveRule, useSimulateRule, type RuleInput } from '../../../hooks/api/programs';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { ConfirmButton } from '../../../components/confirm-button';
import { useCan } from '../../../components/permission';
import { Loading } from '../../../components/loading';
import { PublicationControls } from '../../../components/publication-controls';

/** What the form edits: an event rule awarding a fixed number of points (other rule shapes are kept as they are). */
interface Draft {
  name: string;
  description: string;
  event_name: string;
  points: number | string;
  status: 'draft' | 'active' | 'paused';
}

const EMPTY: Draft = { name: '', description: '', event_name: '', points: 10, status: 'draft' };
const BACKTEST_DAYS = 30;

function toInput(draft: Draft): RuleInput {
  return {
    name: draft.name.trim(),
    description: draft.description.trim() || undefined,
    trigger: 'event',
    event_name: draft.event_name.trim(),
    effects: [{ type: 'award_points', points: Number(draft.points) }],
    status: draft.status,
  };
}

export function RuleEdit() {
  const { t } = useTranslation();
  const ruleId = useParams().ruleId;
  const navigate = useNavigate();
  const rule = useRule(ruleId);
  const save = useSaveRule(ruleId);
  const remove = useDeleteRule();
  const simulate = useSimulateRule();
  const canWrite = useCan('programs:write');
  const canPublish = useCan('programs:publish');
  const [draft, setDraft] = useState<Draft>(EMPTY);
  /** Without the publishing permission only a draft can be changed (the service refuses the rest). */
  const editable = canWrite && (canPublish || !rule.data || rule.data.status === 'draft');
  /** The draft the last backtest ran on: activating needs a backtest of exactly what is saved. */
  const [simulated, setSimulated] = useState<string | null>(null);

  useEffect(() => {
    const r = rule.data;
    if (!r) return;
    const fixed = r.effects.find((e) => e.type === 'award_points' && e.points !== undefined);
    setDraft({ name: r.name, description: r.description ?? '', event_name: r.event_name ?? '', points: fixed?.points ?? 10, status: r.status });
  }, [rule.data]);

  const input = toInput(draft);
  const current = JSON.stringify(input);
  const backtested = simulated === current;
  const activating = draft.status === 'active' && rule.data?.status !== 'active';
  const set = (patch: Partial<Draft>) => setDraft((d) => ({ ...d, ...patch }));
  const runBacktest = () => {
    const to = new Date();
    const from = new Date(to.getTime() - BACKTEST_DAYS * 86_400_000);
    simulate.mutate({ rule: input, from: from.toISOString(), to: to.toISOString() }, { onSuccess: () => setSimulated(current) });
  };

  if (ruleId && rule.isPending) return <Loading />;
  return (
    <Stack>
      <Anchor component={Link} to="/programs/rules" size="sm">
        ← {t('rules.title')}
      </Anchor>
      <PageHeader title={ruleId ? t('rules.edit', { name: rule.data?.name ?? '' }) : t('rules.new')}>
        {ruleId && editable && (
          <ConfirmButton
            label={t('rules.delete')}
            title={t('rules.deleteTitle')}
            message={t('rules.deleteConfirm', { name: rule.data?.name ?? '' })}
            confirmLabel={t('rules.delete')}
            onConfirm={async () => {
              await remove.mutateAsync(ruleId);
              navigate('/programs/rules');
            }}
          />
        )}
      </PageHeader>
      <ErrorAlert error={rule.error} />
      {ruleId && rule.data && (
        <PublicationControls
          kind="rule"
          id={ruleId}
          status={rule.data.status}
          name={rule.data.name}
          publishBlocked={rule.data.status === 'draft' && !backtested ? t('rules.backtestFirst') : null}
        />
      )}
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Card withBorder>
          <form
            onSubmit={(event) => {
              event.preventDefault();
              save.mutate(input, { onSuccess: (saved) => navigate(`/programs/rules/${saved.id}`) });
            }}
          >
            <Stack>
              <TextInput label={t('rules.name')} value={draft.name} onChange={(e) => set({ name: e.currentTarget.value })} required disabled={!editable} />
              <Textarea label={t('rules.description')} value={draft.description} onChange={(e) => set({ description: e.currentTarget.value })} disabled={!editable} />
              <TextInput label={t('rules.eventName')} description={t('rules.eventNameHelp')} value={draft.event_name} onChange={(e) => set({ event_name: e.currentTarget.value })} required disabled={!editable} />
              <NumberInput label={t('rules.points')} min={1} allowDecimal={false} value={draft.points} onChange={(value) => set({ points: value })} required disabled={!editable} />
              <Select
                label={t('rules.status')}
                description={canPublish ? undefined : t('rules.draftOnly')}
                data={[
                  { value: 'draft', label: t('rules.draft') },
                  { value: 'paused', label: t('rules.paused'), disabled: !canPublish },
                  { value: 'active', label: t('rules.active'), disabled: !canPublish },
                ]}
                value={draft.status}
                onChange={(value) => set({ status: (value ?? 'draft') as Draft['status'] })}
                allowDeselect={false}
                disabled={!editable}
              />
              {activating && !backtested && (
                <Alert color="yellow" role="status">
                  {t('rules.backtestFirst')}
                </Alert>
              )}
              <ErrorAlert error={save.error} />
              {editable && (
                <Group>
                  <Button type="submit" loading={save.isPending} disabled={activating && !backtested}>
                    {t('rules.save')}
                  </Button>
                </Group>
              )}
            </Stack>
          </form>
        </Card>
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            {t('rules.backtest')}
          </Title>
          <Text size="sm" mb="sm">
            {t('rules.backtestExplain', { days: BACKTEST_DAYS })}
          </Text>
          <Button variant="default" onClick={runBacktest} loading={simulate.isPending} disabled={!draft.name || !draft.event_name}>
            {t('rules.runBacktest')}
          </Button>
          <ErrorAlert error={simulate.error} />
          {simulate.data && (
            <Stack gap={4} mt="sm" data-testid="backtest-result" aria-live="polite">
              {!backtested && <Text c="red.9">{t('rules.backtestStale')}</Text>}
              <Text>{t('rules.eventsMatched', { matched: simulate.data.events_matched, scanned: simulate.data.events_scanned })}</Text>
              <Text>{t('rules.participantsReached', { count: simulate.data.participants })}</Text>
              <Text fw={700}>{t('rules.pointsWouldAward', { points: simulate.data.points.toLocaleString() })}</Text>
              {simulate.data.truncated && <Text size="sm">{t('rules.truncated')}</Text>}
            </Stack>
          )}
        </Card>
      </SimpleGrid>
    </Stack>
  );
}
