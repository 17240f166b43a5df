import { useEffect, useRef, useState } from 'react';
import { Alert, Button, Card, Group, Stack, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { ErrorAlert } from '../../../../components/error-alert';
import { useEmbedUrl, type Engagement } from '../../../../hooks/api/engagements';

const PREVIEW_HEIGHT_MIN_PX = 420;
const PREVIEW_HEIGHT_MAX_PX = 2000;

/**
 * The engagement as a visitor sees it: the runtime page of its site
 * (`/embed/{tenant}/{site}`) in an iframe of this origin. The runtime page
 * serves the published snapshot only, so a draft has no preview yet
 * (docs/decisions/console.md, "Engagements").
 */
export function LivePreview({ engagement }: { engagement: Engagement }) {
  const { t } = useTranslation();
  const published = engagement.status === 'published';
  const embed = useEmbedUrl(published ? engagement.id : undefined);
  const frame = useRef<HTMLIFrameElement>(null);
  const [reloads, setReloads] = useState(0);
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

  const src = embed.data
    ? `/embed/${encodeURIComponent(embed.data.tenant_slug)}/${encodeURIComponent(embed.data.site_slug)}?engagement_id=${encodeURIComponent(engagement.id)}&host_origin=${encodeURIComponent(window.location.origin)}`
    : null;
  return (
    <Card withBorder>
      <Group justify="space-between" mb="xs">
        <Title order={2} size="h4">
          {t('engagements.preview.title')}
        </Title>
        {src && (
          <Button variant="default" size="compact-sm" onClick={() => setReloads((n) => n + 1)}>
            {t('engagements.preview.reload')}
          </Button>
        )}
      </Group>
      <Stack gap="xs">
        {!published && <Text size="sm">{t('engagements.preview.draft')}</Text>}
        {published && engagement.has_unpublished_changes && (
          <Alert color="yellow" variant="light" role="status">
            {t('engagements.preview.stale')}
          </Alert>
        )}
        {published && !engagement.allow_anonymous_sessions && <Text size="sm">{t('engagements.preview.noAnonymous')}</Text>}
        {published && <Text size="sm" c="dimmed">{t('engagements.preview.live')}</Text>}
        <ErrorAlert error={embed.error} />
        {src && (
          <iframe
            key={`${reloads}-${engagement.published_version}`}
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
