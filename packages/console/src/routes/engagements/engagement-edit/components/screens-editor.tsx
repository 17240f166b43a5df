import { Button, Card, Checkbox, Group, SimpleGrid, Stack, Text, TextInput, Textarea, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { freshId, type Activity, type Screen } from '../../common/definition';

type Component = NonNullable<Screen['components']>[number];

const isActivity = (c: Component): boolean => c.type === 'activity' && typeof c.activity_id === 'string';

/**
 * Screens, the activities each shows, and its gate. A gate's conditions are
 * the API's own words (`activity_completed:wheel`, `min_points_100`, …), one
 * per line; the server checks them and names the one it does not know.
 * Components other than activities (text, images, buttons) are kept as they are.
 */
export function ScreensEditor({ screens, activities, onChange, disabled }: { screens: Screen[]; activities: Activity[]; onChange: (screens: Screen[]) => void; disabled: boolean }) {
  const { t } = useTranslation();
  const set = (index: number, screen: Screen) => onChange(screens.map((s, i) => (i === index ? screen : s)));
  const activityChoices = activities.map((a) => ({ value: a.id, label: a.name ? `${a.name} (${a.id})` : a.id }));
  return (
    <Stack gap="sm">
      {screens.length === 0 && <Text size="sm">{t('engagements.screens.none')}</Text>}
      {screens.map((screen, index) => {
        const components = screen.components ?? [];
        const shown = components.filter(isActivity).map((c) => String(c.activity_id));
        const conditions = screen.gate?.conditions ?? [];
        return (
          <Card withBorder p="sm" key={index} data-testid={`screen-${screen.id}`}>
            <Stack gap="xs">
              <Group justify="space-between">
                <Title order={4} size="h6">
                  {t('engagements.screens.screen', { name: screen.name || screen.id })}
                </Title>
                {!disabled && (
                  <Button variant="outline" color="red.9" size="compact-sm" onClick={() => onChange(screens.filter((_s, i) => i !== index))}>
                    {t('engagements.screens.remove', { name: screen.name || screen.id })}
                  </Button>
                )}
              </Group>
              <SimpleGrid cols={{ base: 1, sm: 2 }}>
                <TextInput label={t('engagements.screens.id')} value={screen.id} onChange={(e) => set(index, { ...screen, id: e.currentTarget.value })} disabled={disabled} />
                <TextInput label={t('engagements.screens.name')} value={screen.name ?? ''} onChange={(e) => set(index, { ...screen, name: e.currentTarget.value })} disabled={disabled} />
              </SimpleGrid>
              <Checkbox.Group
                label={t('engagements.screens.activities')}
                value={shown}
                onChange={(ids) => set(index, { ...screen, components: [...components.filter((c) => !isActivity(c)), ...ids.map((id) => ({ type: 'activity', activity_id: id }))] })}
              >
                <Group gap="md" mt={4}>
                  {activityChoices.length === 0 && <Text size="sm">{t('engagements.noActivities')}</Text>}
                  {activityChoices.map((choice) => (
                    <Checkbox key={choice.value} value={choice.value} label={choice.label} disabled={disabled} />
                  ))}
                </Group>
              </Checkbox.Group>
              <Textarea
                label={t('engagements.screens.gate')}
                description={t('engagements.screens.gateHelp')}
                autosize
                minRows={1}
                value={conditions.join('\n')}
                onChange={(e) => {
                  const lines = e.currentTarget.value.split('\n');
                  const { gate: _gate, ...rest } = screen;
                  const kept = lines.map((line) => line.trim());
                  // Empty lines are kept while typing; an all-empty gate is no gate.
                  set(index, kept.some(Boolean) ? { ...rest, gate: { ...screen.gate, conditions: lines } } : rest);
                }}
                disabled={disabled}
              />
              {conditions.length > 0 && (
                <TextInput
                  label={t('engagements.screens.hint')}
                  value={screen.gate?.unlock_hint ?? ''}
                  onChange={(e) => set(index, { ...screen, gate: { conditions, ...(e.currentTarget.value ? { unlock_hint: e.currentTarget.value } : {}) } })}
                  disabled={disabled}
                />
              )}
            </Stack>
          </Card>
        );
      })}
      {!disabled && (
        <Group>
          <Button
            variant="default"
            size="compact-sm"
            onClick={() => {
              const id = freshId('screen', screens.map((s) => s.id));
              onChange([...screens, { id, name: t('engagements.screens.newName', { n: screens.length + 1 }), components: [] }]);
            }}
          >
            {t('engagements.screens.add')}
          </Button>
        </Group>
      )}
    </Stack>
  );
}

/** Blank lines of gate conditions are dropped before the draft is sent. */
export function cleanScreens(screens: Screen[]): Screen[] {
  return screens.map((screen) => {
    if (!screen.gate) return screen;
    const conditions = screen.gate.conditions.map((c) => c.trim()).filter(Boolean);
    const { gate, ...rest } = screen;
    return conditions.length ? { ...rest, gate: { ...gate, conditions } } : rest;
  });
}
