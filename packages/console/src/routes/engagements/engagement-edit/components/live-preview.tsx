import { useEffect, useRef, useState } from 'react';
import { Alert, Button, Card, Group, Stack, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { ErrorAlert } from '../../../../components/error-alert';
import { useCan } from '../../../../components/permission';
import { usePreview, type Engagement, type EngagementPreview } from '../../../../hooks/api/engagements';

const PREVIEW_HEIGHT_MIN_PX = 420;
const PREVIEW_HEIGHT_MAX_PX = 2000;

/**
 * The saved draft as a visitor would see it, published or not, played by a
 * test participant: the runtime page of the draft (`preview_url`) in an
 * iframe of this origin, with the preview session in its fragment. A spin
 * here takes an attempt of the test participant and awards nothing real; the
 * test participant is in no list or figure (docs/decisions.md, "Engagement
 * previews"). Starting again makes a new test participant; ending the
 * preview deletes it.
 */
export function LivePreview({ engagement, unsaved }: { engagement: Engagement; unsaved: boolean }) {
  const { t } = useTranslation();
  const canWrite = useCan('programs:write');
  const { start, reset } = usePreview(engagement.id);
  const [preview, setPreview] = useState<EngagementPreview | null>(null);
  const frame = useRef<HTMLIFrameElement>(null);
  const [height, setHeight] = useState(PREVIEW_HEIGHT_MIN_PX);

  // The runtime tells its host how tall it is; only messages from this preview's own frame count.
  useEffect(() => {
    const listen = (event: MessageEvent) => {
      if (event.origin !== window.location.origin || event.source !== frame.current?.contentWindow) return;
      const data = event.data as { source?: string; type?: string; height?: number };
      if (data?.source !== 'loyalty-runtime' || data.type !== 'runtime:resize' || typeof data.height !== 'number') return;
      setHeight(Math.max(PREVIEW_HEIGHT_MIN_PX, Math.min(PREVIEW_HEIGHT_MAX_PX, Math.ceil(data.height) + 16)));
    };
    window.addEventListener('message', listen);
    return () => window.removeEventListener('message', listen);
  }, []);

  const begin = () => start.mutate(undefined, { onSuccess: (started) => setPreview(started) });
  const end = () => reset.mutate(undefined, { onSuccess: () => setPreview(null) });
  // The session travels in the fragment: never sent to a server, so never in a log.
  const src = preview ? `${preview.preview_url}&host_origin=${encodeURIComponent(window.location.origin)}#session=${encodeURIComponent(preview.session_id)}` : null;
  const outdated = preview !== null && preview.version !== engagement.version;

  return (
    <Card withBorder>
      <Group justify="space-between" mb="xs">
        <Title order={2} size="h4">
          {t('engagements.preview.title')}
        </Title>
        <Group gap="xs">
          <Button variant={preview ? 'default' : 'filled'} size="compact-sm" onClick={begin} loading={start.isPending} disabled={!canWrite}>
            {preview ? t('engagements.preview.restart') : t('engagements.preview.start')}
          </Button>
          {preview && (
            <Button variant="default" size="compact-sm" onClick={end} loading={reset.isPending}>
              {t('engagements.preview.end')}
            </Button>
          )}
        </Group>
      </Group>
      <Stack gap="xs">
        <Text size="sm">{t('engagements.preview.explain')}</Text>
        {!canWrite && <Text size="sm" c="dimmed">{t('engagements.preview.needsWrite')}</Text>}
        {(unsaved || outdated) && (
          <Alert color="yellow" variant="light" role="status">
            {unsaved ? t('engagements.preview.unsaved') : t('engagements.preview.outdated')}
          </Alert>
        )}
        {preview && (
          <Text size="sm" c="dimmed" data-testid="preview-participant">
            {t('engagements.preview.participant', { id: preview.participant_id, version: preview.version })}
          </Text>
        )}
        <ErrorAlert error={start.error ?? reset.error} />
        {src && (
          <iframe
            key={preview!.session_id}
            ref={frame}
            title={t('engagements.preview.frame', { name: engagement.name })}
            src={src}
            height={height}
            data-testid="live-preview"
            style={{ width: '100%', border: '1px solid var(--mantine-color-gray-4)', borderRadius: 8 }}
          />
        )}
      </Stack>
    </Card>
  );
}
