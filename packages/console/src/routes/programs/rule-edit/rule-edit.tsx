import { useEffect, useState } from 'react';
import { Alert, Anchor, Button, Card, Grid, Group, Select, SimpleGrid, Stack, Text, TextInput, Textarea, Title } from '@mantine/core';
import { Controller, useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams } from 'react-router';
import { useDeleteRule, useRule, useSaveRule, useSimulateRule } from '../../../hooks/api/programs';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { ConfirmButton } from '../../../components/confirm-button';
import { useCan } from '../../../components/permission';
import { Loading } from '../../../components/loading';
import { SCHEDULES, TRIGGERS, emptyDraft, fromRule, toInput, toPatch, valueFitsType, type RuleDraft } from '../common/rule-draft';
import { FormErrors, fieldErrorWords, useApiForm } from '../../../lib/forms';
import { useFormat } from '../../../lib/format';
import { EventNamePicker } from '../common/pickers';
import { ConditionList } from './components/condition-list';
import { EffectList } from './components/effect-list';
import { BacktestCard, type BacktestDays } from './components/backtest-card';
import { LimitsCard, WindowCard } from './components/limits-cards';
import { PublicationControls } from '../../../components/publication-controls';

const DAY_MS = 86_400_000;

/** Creates or edits an earn rule, every field of it; activating needs a backtest of exactly the rule being saved. */
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
  const f = useFormat();
  const form = useApiForm<RuleDraft>('createRule', { defaultValues: emptyDraft() });
  const [days, setDays] = useState<BacktestDays>(30);
  /** The rule the last backtest ran on: activating needs a backtest of exactly what is saved. */
  const [simulated, setSimulated] = useState<string | null>(null);

  useEffect(() => {
    if (rule.data) form.reset(fromRule(rule.data, f));
  }, [rule.data, f, form]);

  const draft = useWatch({ control: form.control }) as RuleDraft;
  const input = toInput(draft, f);
  const current = JSON.stringify({ ...input, status: undefined });
  const backtested = simulated === current;
  const activating = draft.status === 'active' && rule.data?.status !== 'active';
  // Only event rules can be replayed over stored events; birthday and recurring rules are activated without.
  const needsBacktest = activating && draft.trigger === 'event' && !backtested;
  const runBacktest = () => {
    const to = new Date();
    const from = new Date(to.getTime() - days * DAY_MS);
    simulate.mutate({ rule: input, from: from.toISOString(), to: to.toISOString() }, { onSuccess: () => setSimulated(current) });
  };
  /** A number-typed condition's value must be a number: said on its field before anything is sent. */
  const valuesFit = (values: RuleDraft): boolean => {
    let fits = true;
    for (const group of ['all', 'any'] as const) {
      values[group].forEach((condition, index) => {
        if (valueFitsType(condition)) return;
        form.setError(`${group}.${index}.value`, { type: 'type', message: fieldErrorWords({ code: 'type_number', message: 'must be a number' }) }, { shouldFocus: fits });
        fits = false;
      });
    }
    return fits;
  };
  const onSubmit = form.submit(async (values) => {
    if (!valuesFit(values)) return;
    const saved = await save.mutateAsync({ input: toInput(values, f), patch: toPatch(values, f) });
    navigate(`/programs/rules/${saved.id}`);
  });
  /** Without the publishing permission only a draft can be changed (the service refuses the rest). */
  const editable = canWrite && (canPublish || !rule.data || rule.data.status === 'draft');
  const readOnly = !editable;

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
          publishBlocked={rule.data.status === 'draft' && rule.data.trigger === 'event' && !backtested ? t('rules.backtestFirst') : null}
        />
      )}
      {rule.data && rule.data.budget_points !== null && (
        <Text data-testid="rule-budget">{t('rules.budgetSpentLabel', { spent: f.number(rule.data.budget_spent), budget: f.number(rule.data.budget_points) })}</Text>
      )}
      <Grid>
        <Grid.Col span={{ base: 12, lg: 8 }}>
          <form onSubmit={onSubmit} noValidate>
            <Stack>
              <Card withBorder>
                <Title order={2} size="h4" mb="sm">
                  {t('rules.sections.what')}
                </Title>
                <Stack>
                  <TextInput label={t('rules.name')} {...form.field('name', { required: true })} readOnly={readOnly} />
                  <Textarea label={t('rules.description')} {...form.field('description')} readOnly={readOnly} autosize minRows={2} />
                </Stack>
              </Card>

              <Card withBorder>
                <Title order={2} size="h4" mb="sm">
                  {t('rules.sections.when')}
                </Title>
                <SimpleGrid cols={{ base: 1, sm: 2 }}>
                  <Controller
                    control={form.control}
                    name="trigger"
                    render={({ field }) => (
                      <Select
                        ref={field.ref}
                        label={t('rules.trigger')}
                        description={ruleId ? t('rules.triggerHelp') : undefined}
                        data={TRIGGERS.map((trigger) => ({ value: trigger, label: t(`rules.triggers.${trigger}`) }))}
                        value={field.value}
                        onChange={(value) => field.onChange(value ?? 'event')}
                        allowDeselect={false}
                        readOnly={readOnly || ruleId !== undefined}
                      />
                    )}
                  />
                  {draft.trigger === 'event' && (
                    <EventNamePicker form={form} operation="createRule" name="event_name" label={t('rules.eventName')} description={t('rules.eventNameHelp')} required readOnly={readOnly} />
                  )}
                  {draft.trigger === 'recurring' && (
                    <Controller
                      control={form.control}
                      name="schedule"
                      render={({ field }) => (
                        <Select
                          ref={field.ref}
                          label={t('rules.schedule')}
                          description={t('rules.scheduleHelp')}
                          data={SCHEDULES.map((schedule) => ({ value: schedule, label: t(`rules.schedules.${schedule}`) }))}
                          value={field.value}
                          onChange={(value) => field.onChange(value ?? 'daily')}
                          allowDeselect={false}
                          readOnly={readOnly}
                        />
                      )}
                    />
                  )}
                </SimpleGrid>
              </Card>

              <Card withBorder>
                <Title order={2} size="h4" mb={4}>
                  {t('rules.sections.conditions')}
                </Title>
                <Text size="sm" c="dimmed" mb="sm">
                  {t('rules.factHelp')}. {t('rules.valueHelp')}
                </Text>
                <Stack>
                  {draft.all.length === 0 && draft.any.length === 0 && <Text size="sm">{t('rules.conditionsNone')}</Text>}
                  <ConditionList form={form} group="all" readOnly={readOnly} />
                  <ConditionList form={form} group="any" readOnly={readOnly} />
                </Stack>
              </Card>

              <Card withBorder>
                <Title order={2} size="h4" mb="sm">
                  {t('rules.sections.effects')}
                </Title>
                <EffectList form={form} readOnly={readOnly} />
              </Card>

              <LimitsCard form={form} readOnly={readOnly} />

              <WindowCard form={form} readOnly={readOnly} />

              <Card withBorder>
                <Stack>
                  <Controller
                    control={form.control}
                    name="status"
                    render={({ field }) => (
                      <Select
                        ref={field.ref}
                        label={t('rules.status')}
                        description={canPublish ? undefined : t('rules.draftOnly')}
                        data={[
                          { value: 'draft', label: t('rules.draft') },
                          { value: 'paused', label: t('rules.paused'), disabled: !canPublish },
                          { value: 'active', label: t('rules.active'), disabled: !canPublish },
                        ]}
                        value={field.value}
                        onChange={(value) => field.onChange(value ?? 'draft')}
                        allowDeselect={false}
                        readOnly={readOnly}
                        maw={320}
                      />
                    )}
                  />
                  {needsBacktest && (
                    <Alert color="yellow" role="status">
                      {t('rules.backtestFirst')}
                    </Alert>
                  )}
                  <FormErrors form={form} />
                  {editable && (
                    <Group>
                      <Button type="submit" loading={form.formState.isSubmitting} disabled={needsBacktest}>
                        {t('rules.save')}
                      </Button>
                    </Group>
                  )}
                </Stack>
              </Card>
            </Stack>
          </form>
        </Grid.Col>
        {canWrite && (
        <Grid.Col span={{ base: 12, lg: 4 }}>
          <BacktestCard
            days={days}
            onDaysChange={setDays}
            onRun={runBacktest}
            running={simulate.isPending}
            runnable={draft.name.trim() !== '' && (draft.trigger !== 'event' || draft.event_name.trim() !== '')}
            eventRule={draft.trigger === 'event'}
            hasBudget={draft.budget_points !== undefined && !Number.isNaN(draft.budget_points)}
            result={simulate.data}
            error={simulate.error}
            current={backtested}
          />
        </Grid.Col>
        )}
      </Grid>
    </Stack>
  );
}
