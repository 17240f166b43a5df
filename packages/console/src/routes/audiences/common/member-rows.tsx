import { Anchor, Table } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import type { SegmentMember } from '../../../hooks/api/segments';
import { useFormat } from '../../../lib/format';

/** Members as the service shows them (personal fields masked unless the reader may see them): id, email, tier, points. */
export function MemberRows({ members }: { members: SegmentMember[] }) {
  const { t } = useTranslation();
  const f = useFormat();
  const text = (value: unknown) => (value === undefined || value === null || value === '' ? '—' : String(value));
  return (
    <>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>{t('segments.member.id')}</Table.Th>
          <Table.Th>{t('segments.member.email')}</Table.Th>
          <Table.Th>{t('segments.member.tier')}</Table.Th>
          <Table.Th>{t('segments.member.points')}</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {members.map((member) => {
          const id = String(member.participant_id ?? member.id ?? '');
          const points = member.available_points;
          return (
            <Table.Tr key={id}>
              <Table.Td>
                <Anchor component={Link} to={`/participants/${encodeURIComponent(id)}`}>
                  {id}
                </Anchor>
              </Table.Td>
              <Table.Td>{text(member.email)}</Table.Td>
              <Table.Td>{text(member.tier)}</Table.Td>
              <Table.Td>{typeof points === 'number' ? f.number(points) : '—'}</Table.Td>
            </Table.Tr>
          );
        })}
      </Table.Tbody>
    </>
  );
}
