import { Anchor, Table } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import type { SegmentMember } from '../../../hooks/api/segments';
import { useFormat } from '../../../lib/format';

/** Members as the service shows them (personal fields masked unless the reader may see them): id, name, email and, unless compact, when they joined. */
export function MemberRows({ members, compact = false }: { members: SegmentMember[]; compact?: boolean }) {
  const { t } = useTranslation();
  const f = useFormat();
  const text = (value: string | null | undefined) => (value ? value : '—');
  return (
    <>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>{t('segments.member.id')}</Table.Th>
          <Table.Th>{t('segments.member.name')}</Table.Th>
          <Table.Th>{t('segments.member.email')}</Table.Th>
          {!compact && <Table.Th>{t('segments.member.joined')}</Table.Th>}
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {members.map((member) => (
          <Table.Tr key={member.participant_id}>
            <Table.Td>
              <Anchor component={Link} to={`/participants/${encodeURIComponent(member.participant_id)}`}>
                {member.participant_id}
              </Anchor>
            </Table.Td>
            <Table.Td>{text(member.display_name ?? member.full_name)}</Table.Td>
            <Table.Td>{text(member.email)}</Table.Td>
            {!compact && <Table.Td style={{ whiteSpace: 'nowrap' }}>{member.created_at ? f.dateTime(member.created_at) : '—'}</Table.Td>}
          </Table.Tr>
        ))}
      </Table.Tbody>
    </>
  );
}
