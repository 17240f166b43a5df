import { Table, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { ArmResult } from '../../../../hooks/api/experiments';
import type { Format } from '../../../../lib/format';
import { IntervalChart, type Scale } from './interval-chart';

/** A signed figure: "+0.42", "−0.10", "0". */
export function signed(f: Format, value: number, digits = 2): string {
  const rounded = Number(value.toFixed(digits));
  const text = f.number(Math.abs(rounded));
  return rounded > 0 ? `+${text}` : rounded < 0 ? `−${text}` : text;
}

function percent(f: Format, value: number): string {
  return `${signed(f, value * 100, 1)}%`;
}

/** The service's warning codes as string keys (a key may not end in a plural suffix such as `_zero`). */
const WARNINGS: Record<string, string> = { too_few_participants: 'tooFewParticipants', no_variation: 'noVariation', control_mean_zero: 'controlMeanIsZero', relative_unreliable: 'relativeUnreliable' };

/** One arm of the results: a variant against the control, the control itself, or the holdout (whose difference is the control's against it). */
export function ResultRow({ arm, role, scale, f }: { arm: ArmResult; role: 'control' | 'variant' | 'holdout'; scale: Scale; f: Format }) {
  const { t } = useTranslation();
  const d = arm.difference;
  const name = role === 'holdout' ? t('experimentResults.holdout') : arm.name;
  const label = d
    ? t(role === 'holdout' ? 'experimentResults.holdoutIntervalText' : 'experimentResults.intervalText', {
        variant: name,
        estimate: signed(f, d.absolute),
        low: signed(f, d.absolute_ci95[0]),
        high: signed(f, d.absolute_ci95[1]),
      })
    : '';
  return (
    <Table.Tr data-testid={`result-${arm.key}`}>
      <Table.Th scope="row">
        {name}
        {role !== 'variant' && (
          <Text size="xs" c="dimmed">
            {t(`experimentResults.roles.${role}`)}
          </Text>
        )}
      </Table.Th>
      <Table.Td>{f.number(arm.exposed)}</Table.Td>
      <Table.Td>
        {f.number(Number(arm.goal_per_participant.toFixed(2)))}
        <Text size="xs" c="dimmed">
          {t('experimentResults.goalTotal', { total: f.number(arm.goal_total) })}
        </Text>
      </Table.Td>
      <Table.Td>
        {f.number(arm.points_cost)}
        <Text size="xs" c="dimmed">
          {t('experimentResults.perParticipant', { value: f.number(Number(arm.points_per_participant.toFixed(1))) })}
        </Text>
      </Table.Td>
      <Table.Td>{f.number(arm.rewards_cost)}</Table.Td>
      <Table.Td>
        {d ? (
          <>
            <Text size="sm">{t('experimentResults.absolute', { estimate: signed(f, d.absolute), low: signed(f, d.absolute_ci95[0]), high: signed(f, d.absolute_ci95[1]) })}</Text>
            {d.relative !== null && d.relative_ci95 && (
              <Text size="xs" c="dimmed">
                {t('experimentResults.relative', { estimate: percent(f, d.relative), low: percent(f, d.relative_ci95[0]), high: percent(f, d.relative_ci95[1]) })}
              </Text>
            )}
          </>
        ) : (
          <Text size="sm">{role === 'control' ? t('experimentResults.isControl') : t('experimentResults.noInterval')}</Text>
        )}
        {arm.warnings.map((warning) => (
          <Text key={warning} size="xs" c="orange.9">
            {WARNINGS[warning] ? t(`experimentResults.warningCodes.${WARNINGS[warning]}`) : warning}
          </Text>
        ))}
      </Table.Td>
      <Table.Td>{d ? <IntervalChart difference={d} scale={scale} label={label} /> : '—'}</Table.Td>
      <Table.Td>{arm.cost_per_extra_goal === null ? '—' : f.number(Math.round(arm.cost_per_extra_goal))}</Table.Td>
    </Table.Tr>
  );
}
