import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { LoyaltyError, type RequestBody, type ResponseBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';

export const participantKeys = queryKeysFactory('participants');
export const ledgerKeys = queryKeysFactory('ledger');

export const PAGE_SIZE = 25;

export type ParticipantProfile = ResponseBody<'searchParticipants'>['participants'][number];
export type LedgerEntry = ResponseBody<'getPointsHistory'>['entries'][number];
export type StoredEvent = ResponseBody<'listParticipantEvents'>['events'][number];

/** What the one search box was given: an email (searched by its hash), a custom attribute `key:value`, or an id. */
export type SearchKind = 'email' | 'attribute' | 'id';

export function searchKindOf(text: string): SearchKind {
  const value = text.trim();
  if (/^[^\s@]+@[^\s@]+$/.test(value)) return 'email';
  if (/^[A-Za-z_][A-Za-z0-9_]*:.+$/.test(value)) return 'attribute';
  return 'id';
}

/**
 * The email's SHA-256 (hex) as the service keeps it: trimmed and lower-cased.
 * Computed in the browser, so the plain address never leaves it and the
 * search needs no `read:pii` (support searches by email and reads masked).
 */
export async function emailHash(email: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(email.trim().toLowerCase()));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

export interface SearchResult {
  participants: ParticipantProfile[];
  /** The participant whose own id is exactly the text, shown on top. */
  exact: string | null;
  kind: SearchKind;
}

const notFound = (error: unknown) => error instanceof LoyaltyError && error.status === 404;
const unknownAttribute = (error: unknown) => error instanceof LoyaltyError && error.status === 400 && /ATTRIBUTE|CUSTOM_FIELD/.test(error.code);

/** An id: the participant of that id (exact, on top) and those whose external id it is. */
async function searchById(id: string): Promise<SearchResult> {
  const [exact, byExternal] = await Promise.all([
    client.participants.getProfile({ path: { participant_id: id } }).catch((error: unknown) => {
      if (notFound(error)) return null;
      throw error;
    }),
    client.participants.search({ query: { external_id: id, limit: PAGE_SIZE } }),
  ]);
  const rest = byExternal.participants.filter((p) => p.participant_id !== exact?.participant_id);
  return { participants: exact ? [exact, ...rest] : rest, exact: exact?.participant_id ?? null, kind: 'id' };
}

/**
 * The search behind the one box: an email by its hash, `key:value` by a
 * custom attribute (text with a colon that names no custom field is taken as
 * an id), anything else as a participant id or external id. Masked answers.
 */
export function useParticipantSearch(text: string) {
  const value = text.trim();
  return useQuery({
    queryKey: participantKeys.list({ search: value }),
    enabled: value !== '',
    queryFn: async (): Promise<SearchResult> => {
      const kind = searchKindOf(value);
      if (kind === 'email') {
        const found = await client.participants.search({ query: { email_hash: await emailHash(value), limit: PAGE_SIZE } });
        return { participants: found.participants, exact: null, kind };
      }
      if (kind === 'attribute') {
        try {
          const found = await client.participants.search({ query: { attribute: [value], limit: PAGE_SIZE } });
          return { participants: found.participants, exact: null, kind };
        } catch (error) {
          if (!unknownAttribute(error)) throw error;
        }
      }
      return searchById(value);
    },
  });
}

/** The list without a search, newest pages by cursor; masked. */
/** `includeTest`: also the test participants of draft previews, which the list leaves out by default. */
export function useParticipants(cursor: string | undefined, includeTest = false) {
  return useQuery({
    queryKey: participantKeys.list({ cursor, includeTest }),
    queryFn: () => client.participants.list({ query: { limit: PAGE_SIZE, cursor, ...(includeTest ? { include_test: true } : {}) } }),
    placeholderData: keepPreviousData,
  });
}

export function useParticipantProfile(participantId: string) {
  return useQuery({ queryKey: participantKeys.detail(participantId, 'profile'), queryFn: () => client.participants.getProfile({ path: { participant_id: participantId } }) });
}

export function useParticipantState(participantId: string) {
  return useQuery({
    queryKey: participantKeys.detail(participantId, 'state'),
    queryFn: () => client.state.getParticipantState({ path: { participant_id: participantId }, query: { include: 'points,tier,badges,streaks,rewards,challenges' } }),
  });
}

/** The participant's events, newest first, with what processing did (points, rules). */
export function useParticipantEvents(participantId: string, cursor: string | undefined) {
  return useQuery({
    queryKey: participantKeys.detail(participantId, 'events', cursor),
    queryFn: () => client.participants.listEvents({ path: { participant_id: participantId }, query: { limit: 20, cursor } }),
    placeholderData: keepPreviousData,
  });
}

/** The participant's ledger, newest first, each entry with who caused it. */
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
    onSuccess: async (_result, { participant_id }) => {
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: participantKeys.detail(participant_id) }),
        queryClient.invalidateQueries({ queryKey: ledgerKeys.all }),
        queryClient.invalidateQueries({ queryKey: ['analytics'] }),
      ]);
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
