import { useEffect, useMemo, useState } from 'react';
import { Anchor, Button, Card, Group, Stack, Switch, Text, TextInput, Textarea, Title, SimpleGrid } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Controller } from 'react-hook-form';
import { Link, useNavigate, useParams } from 'react-router';
import { useEngagement, useSaveEngagement } from '../../../hooks/api/engagements';
import { FormErrors, useApiForm } from '../../../lib/forms';
import { problemsOf } from '../common/problems';
import { useRewardChoices } from '../../../hooks/api/rewards';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { useCan } from '../../../components/permission';
import { Loading } from '../../../components/loading';
import { EMPTY_DRAFT, newQuiz, newSpinWheel, toInput, type Activity, type Draft } from '../common/definition';
import { isClaimable } from '../common/stock';
import { ActivityCard } from './components/activity-card';
import { cleanScreens, ScreensEditor } from './components/screens-editor';
import { PublicationButtons } from './components/publication-buttons';
import { LivePreview } from './components/live-preview';

export function EngagementEdit() {
  const { t } = useTranslation();
  const engagementId = useParams().engagementId;
  const navigate = useNavigate();
  const engagement = useEngagement(engagementId);
  const save = useSaveEngagement(engagementId);
  const rewards = useRewardChoices();
  const canWrite = useCan('programs:write');
  // The named fields are on the form (their limits shown, refusals placed); activities and screens are edited as lists.
  const form = useApiForm<Pick<Draft, 'name' | 'site_slug' | 'description' | 'allow_anonymous_sessions'>>(engagementId ? 'updateEngagement' : 'createEngagement', {
    defaultValues: { name: EMPTY_DRAFT.name, site_slug: EMPTY_DRAFT.site_slug, description: EMPTY_DRAFT.description, allow_anonymous_sessions: EMPTY_DRAFT.allow_anonymous_sessions },
  });
  const [lists, setLists] = useState<Pick<Draft, 'screens' | 'activities'>>({ screens: EMPTY_DRAFT.screens, activities: EMPTY_DRAFT.activities });
  const [listsChanged, setListsChanged] = useState(false);
  const [saved, setSaved] = useState(false);

  useEffect(() => {
    const e = engagement.data;
    if (!e) return;
    form.reset({ name: e.name, site_slug: e.site_slug, description: e.description ?? '', allow_anonymous_sessions: e.allow_anonymous_sessions });
    setLists({ screens: e.screens, activities: e.activities });
    setListsChanged(false);
  }, [engagement.data, form]);
  const draft = lists;
  const problemOf = problemsOf(form);

  const rewardChoices = useMemo(() => (rewards.data?.rewards ?? []).map((r) => ({ value: r.id, label: `${r.name} (${r.id})` })), [rewards.data]);
  const unclaimable = useMemo(() => new Set((rewards.data?.rewards ?? []).filter((r) => !isClaimable(r)).map((r) => r.id)), [rewards.data]);
  const set = (patch: Partial<Pick<Draft, 'screens' | 'activities'>>) => {
    setSaved(false);
    setListsChanged(true);
    setLists((d) => ({ ...d, ...patch }));
  };
  const unsaved = listsChanged || form.formState.isDirty;
  const setActivity = (index: number, activity: Activity) => set({ activities: draft.activities.map((a, i) => (i === index ? activity : a)) });
  const taken = draft.activities.map((a) => a.id);

  if (engagementId && engagement.isPending) return <Loading />;
  const disabled = !canWrite;
  return (
    <Stack>
      <Anchor component={Link} to="/engagements" size="sm">
        ← {t('engagements.title')}
      </Anchor>
      <PageHeader title={engagementId ? t('engagements.edit', { name: engagement.data?.name ?? '' }) : t('engagements.new')}>
        {engagement.data && <PublicationButtons engagement={engagement.data} />}
      </PageHeader>
      <ErrorAlert error={engagement.error} />
      <form
        noValidate
        onSubmit={form.submit(async (values) => {
          const result = await save.mutateAsync(toInput({ ...values, ...draft, screens: cleanScreens(draft.screens) }));
          setSaved(true);
          setListsChanged(false);
          if (!engagementId) navigate(`/engagements/${result.id}`);
        })}
      >
        <Stack>
          <Card withBorder>
            <SimpleGrid cols={{ base: 1, md: 2 }}>
              <TextInput label={t('engagements.name')} {...form.field('name', { required: true })} disabled={disabled} />
              <TextInput label={t('engagements.siteSlug')} {...form.field('site_slug', { required: true })} description={t('engagements.siteSlugHelp')} disabled={disabled} />
            </SimpleGrid>
            <Textarea mt="sm" label={t('engagements.description')} autosize minRows={2} {...form.field('description')} disabled={disabled} />
            <Controller
              control={form.control}
              name="allow_anonymous_sessions"
              render={({ field }) => (
                <Switch
                  mt="sm"
                  label={t('engagements.anonymous')}
                  description={t('engagements.anonymousHelp')}
                  checked={field.value}
                  onChange={(e) => field.onChange(e.currentTarget.checked)}
                  onBlur={field.onBlur}
                  disabled={disabled}
                />
              )}
            />
          </Card>

          <Group justify="space-between">
            <Title order={2} size="h3">
              {t('engagements.activities')}
            </Title>
            {canWrite && (
              <Group gap="xs">
                <Button variant="default" onClick={() => set({ activities: [...draft.activities, newSpinWheel(taken)] })}>
                  {t('engagements.addWheel')}
                </Button>
                <Button variant="default" onClick={() => set({ activities: [...draft.activities, newQuiz(taken)] })}>
                  {t('engagements.addQuiz')}
                </Button>
              </Group>
            )}
          </Group>
          {draft.activities.length === 0 && <Text size="sm">{t('engagements.noActivities')}</Text>}
          {draft.activities.map((activity, index) => (
            <ActivityCard
              key={index}
              activity={activity}
              onChange={(a) => setActivity(index, a)}
              onRemove={() => set({ activities: draft.activities.filter((_a, i) => i !== index) })}
              rewards={rewardChoices}
              unclaimableRewards={unclaimable}
              disabled={disabled}
              problemOf={(pointer) => problemOf(`/activities/${index}${pointer}`)}
            />
          ))}

          <Title order={2} size="h3">
            {t('engagements.screens.title')}
          </Title>
          <ScreensEditor screens={draft.screens} activities={draft.activities} onChange={(screens) => set({ screens })} disabled={disabled} />

          {canWrite && <FormErrors form={form} />}
          {canWrite && (
            <Group>
              <Button type="submit" loading={form.formState.isSubmitting}>
                {engagementId ? t('engagements.save') : t('engagements.create')}
              </Button>
              {saved && (
                <Text size="sm" role="status" data-testid="saved">
                  {t('engagements.saved')}
                </Text>
              )}
            </Group>
          )}
        </Stack>
      </form>
      {engagement.data && <LivePreview engagement={engagement.data} unsaved={unsaved} />}
    </Stack>
  );
}
