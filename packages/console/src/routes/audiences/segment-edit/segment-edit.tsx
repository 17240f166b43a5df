import { useEffect, useMemo } from 'react';
import { Alert, Anchor, Button, Card, Grid, Group, Radio, Stack, Switch, Text, TextInput, Textarea, Title } from '@mantine/core';
import { Controller, useFieldArray, useWatch } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams } from 'react-router';
import { useDeleteSegment, useSaveSegment, useSegment, useSegmentFacts } from '../../../hooks/api/segments';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { ConfirmButton } from '../../../components/confirm-button';
import { useCan } from '../../../components/permission';
import { Loading } from '../../../components/loading';
import { FormErrors, useApiForm } from '../../../lib/forms';
import { ZoneNote } from '../../../lib/format';
import { PublicationControls } from '../../../components/publication-controls';
import { CONDITIONS_MAX, completeFilter, emptySegmentDraft, fromSegment, newCondition, toInput, type SegmentDraft } from '../common/segment-draft';
import { ConditionRow } from './components/condition-row';
import { LiveSize } from './components/live-size';
import { SegmentFacts } from './components/segment-facts';
import { MembersCard } from './components/members-card';

/** Builds a segment, or shows and edits one: conditions from the fact catalogue, the live size beside them, and for a saved one its members. */
export function SegmentEdit() {
  const { t } = useTranslation();
  const segmentId = useParams().segmentId;
  const navigate = useNavigate();
  const segment = useSegment(segmentId);
  const facts = useSegmentFacts();
  const save = useSaveSegment(segmentId);
  const remove = useDeleteSegment();
  const canWrite = useCan('programs:write');
  const readOnly = !canWrite;
  const form = useApiForm<SegmentDraft>(segmentId ? 'updateSegment' : 'createSegment', { defaultValues: emptySegmentDraft() });
  const rows = useFieldArray({ control: form.control, name: 'conditions' });
  const factList = useMemo(() => facts.data?.facts ?? [], [facts.data]);
  const byFact = useMemo(() => new Map(factList.map((f) => [f.fact, f])), [factList]);

  useEffect(() => {
    if (segment.data) form.reset(fromSegment(segment.data));
  }, [segment.data, form]);

  const draft = useWatch({ control: form.control }) as SegmentDraft;
  const kept = draft.kept?.length ?? 0;
  const filter = completeFilter({ ...emptySegmentDraft(), ...draft, conditions: draft.conditions ?? [] }, byFact);
  const onSubmit = form.submit(async (values) => {
    const saved = await save.mutateAsync(toInput(values, byFact));
    if (!segmentId) navigate(`/segments/${saved.id}`);
  });

  if (segmentId && segment.isPending) return <Loading />;
  return (
    <Stack>
      <Anchor component={Link} to="/segments" size="sm">
        ← {t('segments.title')}
      </Anchor>
      <PageHeader title={segmentId ? t('segments.edit', { name: segment.data?.name ?? '' }) : t('segments.new')}>
        {segmentId && canWrite && (
          <ConfirmButton
            label={t('segments.delete')}
            title={t('segments.deleteTitle')}
            message={t('segments.deleteConfirm', { name: segment.data?.name ?? '' })}
            confirmLabel={t('segments.delete')}
            onConfirm={async () => {
              await remove.mutateAsync(segmentId);
              navigate('/segments');
            }}
          />
        )}
      </PageHeader>
      <ErrorAlert error={segment.error ?? facts.error} />
      {segment.data && <SegmentFacts segment={segment.data} />}
      {segment.data?.status === 'draft_pending' && (
        <Alert color="indigo" variant="light" data-testid="segment-draft-pending">
          <Stack gap="xs">
            <Text size="sm">{t('segments.draftPending')}</Text>
            <PublicationControls kind="segment" id={segment.data.id} status="draft" name={segment.data.name} />
          </Stack>
        </Alert>
      )}
      <Grid>
        <Grid.Col span={{ base: 12, lg: 8 }}>
          <form onSubmit={onSubmit} noValidate>
            <Stack>
              <Card withBorder>
                <Stack>
                  <TextInput label={t('segments.name')} {...form.field('name', { required: true })} readOnly={readOnly} />
                  <Textarea label={t('segments.description')} {...form.field('description')} readOnly={readOnly} autosize minRows={2} />
                </Stack>
              </Card>
              <Card withBorder>
                <Title order={2} size="h4" mb="sm">
                  {t('segments.conditions')}
                </Title>
                <Stack>
                  <Controller
                    control={form.control}
                    name="match"
                    render={({ field }) => (
                      <Radio.Group label={t('segments.match')} value={field.value} onChange={(value) => field.onChange(value)} readOnly={readOnly || kept > 0}>
                        <Group mt={4}>
                          <Radio value="all" label={t('segments.matchAll')} disabled={readOnly || kept > 0} />
                          <Radio value="any" label={t('segments.matchAny')} disabled={readOnly || kept > 0} />
                        </Group>
                      </Radio.Group>
                    )}
                  />
                  {kept > 0 && (
                    <Alert color="blue" variant="light">
                      {t('segments.keptAny', { count: kept })}
                    </Alert>
                  )}
                  {rows.fields.length === 0 && <Text size="sm">{t('segments.conditionsNone')}</Text>}
                  {rows.fields.map((row, index) => (
                    <ConditionRow key={row.id} form={form} index={index} facts={factList} readOnly={readOnly} onRemove={() => rows.remove(index)} />
                  ))}
                  {!readOnly && rows.fields.length < CONDITIONS_MAX && (
                    <Group>
                      <Button variant="default" size="xs" onClick={() => rows.append(newCondition(), { shouldFocus: false })}>
                        {t('segments.addCondition')}
                      </Button>
                    </Group>
                  )}
                </Stack>
              </Card>
              <Card withBorder>
                <Stack>
                  <Controller
                    control={form.control}
                    name="materialized"
                    render={({ field }) => (
                      <Switch
                        ref={field.ref}
                        label={t('segments.materialized')}
                        description={t('segments.materializedHelp')}
                        checked={field.value}
                        onChange={(event) => field.onChange(event.currentTarget.checked)}
                        disabled={readOnly}
                      />
                    )}
                  />
                  <FormErrors form={form} />
                  {canWrite && (
                    <Group>
                      <Button type="submit" loading={form.formState.isSubmitting}>
                        {t('segments.save')}
                      </Button>
                      {save.isSuccess && segmentId && (
                        <Text size="sm" role="status">
                          {t('segments.saved')}
                        </Text>
                      )}
                    </Group>
                  )}
                </Stack>
              </Card>
            </Stack>
          </form>
        </Grid.Col>
        <Grid.Col span={{ base: 12, lg: 4 }}>
          <LiveSize filter={filter} />
        </Grid.Col>
      </Grid>
      {segment.data && <MembersCard segment={segment.data} />}
      <ZoneNote />
    </Stack>
  );
}
