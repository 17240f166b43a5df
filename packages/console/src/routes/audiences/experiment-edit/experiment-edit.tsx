import { useEffect } from 'react';
import { Anchor, Button, Card, Grid, Group, Select, Stack, Text, TextInput, Textarea, Title } from '@mantine/core';
import { Controller, useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams } from 'react-router';
import { useDeleteExperiment, useExperiment, useSaveExperiment } from '../../../hooks/api/experiments';
import { useSegmentChoices } from '../../../hooks/api/segments';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { ConfirmButton } from '../../../components/confirm-button';
import { useCan } from '../../../components/permission';
import { Loading } from '../../../components/loading';
import { FormErrors, useApiForm } from '../../../lib/forms';
import { SUBJECT_TYPES, allocated, emptyExperimentDraft, fromExperiment, toInput, type ExperimentDraft } from '../common/experiment-draft';
import { VariantList } from './components/variant-list';
import { GoalPicker } from './components/goal-picker';
import { ExperimentActions } from './components/experiment-actions';

/** Sets an experiment up (subject, variants and their shares, holdout, goal, segment), or shows one with its next step. */
export function ExperimentEdit() {
  const { t } = useTranslation();
  const experimentId = useParams().experimentId;
  const navigate = useNavigate();
  const experiment = useExperiment(experimentId);
  const segments = useSegmentChoices();
  const save = useSaveExperiment(experimentId);
  const remove = useDeleteExperiment();
  const canWrite = useCan('programs:write');
  const form = useApiForm<ExperimentDraft>(experimentId ? 'updateExperiment' : 'createExperiment', {
    defaultValues: emptyExperimentDraft([t('experiments.controlName'), t('experiments.variantB')]),
  });
  const status = experiment.data?.status ?? 'draft';
  const readOnly = !canWrite || status === 'ended';
  /** A running or stopped experiment changes only its name and allocation (which never reassigns anyone). */
  const allocationOnly = status === 'running' || status === 'stopped';
  const fixed = readOnly || allocationOnly;

  useEffect(() => {
    if (experiment.data) form.reset(fromExperiment(experiment.data));
  }, [experiment.data, form]);

  const draft = useWatch({ control: form.control }) as ExperimentDraft;
  // Registered so that a refusal naming the segment lands on its picker.
  form.field('segment_id');
  const onSubmit = form.submit(async (values) => {
    const total = allocated(values);
    if (total !== 100) {
      form.setError('holdout_percent', { type: 'sum', message: t('experiments.allocatedPart', { total }) }, { shouldFocus: true });
      return;
    }
    const body = toInput(values);
    // A saved experiment keeps its subject type; a running or stopped one changes only its name, description and allocation.
    const { subject_type: _fixed, ...changes } = body;
    const patch = allocationOnly ? { name: body.name, holdout_percent: body.holdout_percent, variants: body.variants } : { ...changes, segment_id: body.segment_id ?? null };
    const saved = await save.mutateAsync(experimentId ? { ...patch, description: values.description.trim() || null } : body);
    if (!experimentId) navigate(`/experiments/${saved.id}`);
  });

  if (experimentId && experiment.isPending) return <Loading />;
  return (
    <Stack>
      <Anchor component={Link} to="/experiments" size="sm">
        ← {t('experiments.title')}
      </Anchor>
      <PageHeader title={experimentId ? t('experiments.edit', { name: experiment.data?.name ?? '' }) : t('experiments.new')}>
        {experimentId && canWrite && status === 'draft' && (
          <ConfirmButton
            label={t('experiments.delete')}
            title={t('experiments.deleteTitle')}
            message={t('experiments.deleteConfirm', { name: experiment.data?.name ?? '' })}
            confirmLabel={t('experiments.delete')}
            onConfirm={async () => {
              await remove.mutateAsync(experimentId);
              navigate('/experiments');
            }}
          />
        )}
      </PageHeader>
      <ErrorAlert error={experiment.error} />
      {experiment.data && <ExperimentActions experiment={experiment.data} />}
      <Grid>
        <Grid.Col span={{ base: 12, lg: 9 }}>
          <form onSubmit={onSubmit} noValidate>
            <Stack>
              <Card withBorder>
                <Stack>
                  <TextInput label={t('experiments.name')} {...form.field('name', { required: true })} readOnly={readOnly} />
                  <Textarea label={t('experiments.description')} {...form.field('description')} readOnly={readOnly} autosize minRows={2} />
                  <Controller
                    control={form.control}
                    name="subject_type"
                    render={({ field }) => (
                      <Select
                        ref={field.ref}
                        label={t('experiments.subjectType')}
                        description={t('experiments.subjectTypeHelp')}
                        data={SUBJECT_TYPES.map((type) => ({ value: type, label: t(`experiments.subjectTypes.${type}`) }))}
                        value={field.value}
                        onChange={(value) => {
                          field.onChange(value ?? 'rule');
                          draft.variants?.forEach((_, index) => form.setValue(`variants.${index}.subject_id`, ''));
                        }}
                        allowDeselect={false}
                        readOnly={fixed || experimentId !== undefined}
                        maw={320}
                      />
                    )}
                  />
                </Stack>
              </Card>
              <Card withBorder>
                <Title order={2} size="h4" mb="sm">
                  {t('experiments.variants')}
                </Title>
                <VariantList form={form} readOnly={readOnly} allocationOnly={allocationOnly} />
              </Card>
              <Card withBorder>
                <Title order={2} size="h4" mb="sm">
                  {t('experiments.goal')}
                </Title>
                <GoalPicker form={form} readOnly={fixed} />
              </Card>
              <Card withBorder>
                <Stack>
                  <Controller
                    control={form.control}
                    name="segment_id"
                    render={({ field }) => (
                      <Select
                        ref={field.ref}
                        label={t('experiments.segment')}
                        description={t('experiments.segmentHelp')}
                        placeholder={t('experiments.everyone')}
                        clearable
                        searchable
                        data={(segments.data?.segments ?? []).map((segment) => ({ value: segment.id, label: segment.name }))}
                        value={field.value || null}
                        onChange={(id) => field.onChange(id ?? '')}
                        error={form.errorOf('segment_id')}
                        readOnly={fixed}
                        maw={420}
                      />
                    )}
                  />
                  <FormErrors form={form} />
                  {!readOnly && (
                    <Group>
                      <Button type="submit" loading={form.formState.isSubmitting}>
                        {experimentId ? t('experiments.save') : t('experiments.create')}
                      </Button>
                      {save.isSuccess && experimentId && (
                        <Text size="sm" role="status">
                          {t('experiments.saved')}
                        </Text>
                      )}
                    </Group>
                  )}
                </Stack>
              </Card>
            </Stack>
          </form>
        </Grid.Col>
      </Grid>
    </Stack>
  );
}
