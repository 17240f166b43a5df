import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RequestBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';

export const participantKeys = queryKeysFactory('participants');
export const ledgerKeys = queryKeysFactory('ledger');

export const PAGE_SIZE = 25;

export interface ParticipantFilters {
  /** Search: the tenant's own id of the participant, or an email (matched through its hash, never shown). */
  external_id?: string;
  email?: string;
  country_code?: string;
  cursor?: string;
}

/** The list when no search is given, the search otherwise; either way masked (no `read:pii` in the console). */
export function useParticipants(filters: ParticipantFilters) {
  return useQuery({
    queryKey: participantKeys.list(filters),
    queryFn: () => {
      const { external_id, email, country_code, cursor } = filters;
      if (external_id || email) return client.participants.search({ query: { external_id: external_id || undefined, email: email || undefined, limit: PAGE_SIZE, cursor } });
      return client.participants.list({ query: { country_code: country_code || undefined, limit: PAGE_SIZE, cursor } });
    },
    placeholderData: keepPreviousData,
  });
}

export function useParticipantProfile(participantId: string) {
  return useQuery({ queryKey: participantKeys.detail(participantId, 'profile'), queryFn: () => client.participants.getProfile({ path: { participant_id: participantId } }) });
}

export function useParticipantState(participantId: string) {
  return useQuery({
    queryKey: participantKeys.detail(participantId, 'state'),
    queryFn: () => client.state.getParticipantState({ path: { participant_id: participantId }, query: { include: 'points,tier,badges,streaks,rewards' } }),
  });
}

export function useLedger(participantId: string, cursor: string | undefined) {
  return useQuery({
    queryKey: ledgerKeys.list({ participantId, cursor }),
    queryFn: () => client.points.getHistory({ query: { participant_id: participantId, limit: PAGE_SIZE, cursor } }),
    placeholderData: keepPreviousData,
  });
}

export type PointsAdjustment = { direction: 'grant' | 'deduct' } & Pick<RequestBody<'grantPoints'>, 'participant_id' | 'amount' | 'reason' | 'memo'>;

/** A manual grant or deduction; it changes the balance, the ledger and the overview's figures. */
export function useAdjustPoints() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ direction, ...body }: PointsAdjustment) => (direction === 'grant' ? client.points.grant({ body }) : client.points.deduct({ body })),
    onSuccess: (_result, { participant_id }) => {
      void queryClient.invalidateQueries({ queryKey: participantKeys.detail(participant_id) });
      void queryClient.invalidateQueries({ queryKey: ledgerKeys.all });
      void queryClient.invalidateQueries({ queryKey: ['analytics'] });
    },
  });
}

export interface RevealedField {
  field: string;
  value: unknown;
}

/** One personal-data field in clear, with the reason recorded in the audit log; never cached. */
export function useRevealField(participantId: string) {
  return useMutation({
    mutationFn: async (body: { field: string; reason: string }) => (await client.participants.revealField({ path: { participant_id: participantId }, body })) as RevealedField,
  });
}

/** Erasure (`DELETE …?anonymize=true` keeps the ledger's figures, without the person). */
export function useEraseParticipant() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: { participantId: string; anonymize: boolean }) =>
      client.participants.delete({ path: { participant_id: input.participantId }, query: { anonymize: input.anonymize } }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: participantKeys.all });
      void queryClient.invalidateQueries({ queryKey: ledgerKeys.all });
    },
  });
}
