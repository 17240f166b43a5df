import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RequestBody, ResponseBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';
import { PAGE_SIZE } from './participants';

export const destinationKeys = queryKeysFactory('webhook-destinations');
export const deliveryKeys = queryKeysFactory('webhook-deliveries');

export function useDestinations(cursor: string | undefined) {
  return useQuery({ queryKey: destinationKeys.list({ cursor }), queryFn: () => client.webhooks.list({ query: { limit: PAGE_SIZE, cursor } }), placeholderData: keepPreviousData });
}

export function useDestination(id: string) {
  return useQuery({ queryKey: destinationKeys.detail(id), queryFn: () => client.webhooks.get({ path: { destination_id: id } }) });
}

export type DeliveryStatus = NonNullable<NonNullable<Parameters<typeof client.webhooks.listLogs>[0]>['query']>['status'];

export function useDeliveries(id: string, filters: { status?: DeliveryStatus; event?: string; cursor?: string }) {
  return useQuery({
    queryKey: deliveryKeys.list({ id, ...filters }),
    queryFn: () => client.webhooks.listLogs({ path: { destination_id: id }, query: { limit: PAGE_SIZE, status: filters.status, event: filters.event || undefined, cursor: filters.cursor } }),
    placeholderData: keepPreviousData,
  });
}

export type Destination = ResponseBody<'getWebhook'>;
export type DestinationHealth = Destination['health'];
export type Delivery = ResponseBody<'sendWebhookTestEvent'>;

export function useEventCatalog() {
  return useQuery({ queryKey: ['event-catalog'], queryFn: () => client.webhooks.getEventCatalog(), staleTime: Infinity });
}

export function useCreateDestination() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: RequestBody<'createWebhook'>) => client.webhooks.create({ body }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: destinationKeys.lists() }),
  });
}

export function useUpdateDestination(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: RequestBody<'updateWebhook'>) => client.webhooks.update({ path: { destination_id: id }, body }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: destinationKeys.all }),
  });
}

export function useDeleteDestination() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => client.webhooks.delete({ path: { destination_id: id } }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: destinationKeys.all }),
  });
}

/** A new attempt changes the delivery log and the destination's health (computed from its attempts), in the list and the detail. */
async function attemptMade(queryClient: ReturnType<typeof useQueryClient>): Promise<void> {
  await Promise.all([queryClient.invalidateQueries({ queryKey: deliveryKeys.all }), queryClient.invalidateQueries({ queryKey: destinationKeys.all })]);
}

/** Sends a sample of a catalog event, signed and marked as a test, once; the answer is the delivery with its attempt. */
export function useSendTestEvent(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: RequestBody<'sendWebhookTestEvent'>) => client.webhooks.sendTestEvent({ path: { destination_id: id }, body }),
    onSuccess: () => attemptMade(queryClient),
  });
}

export function useReplayDelivery(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (logId: string) => client.webhooks.replayDelivery({ path: { destination_id: id, log_id: logId } }),
    onSuccess: () => attemptMade(queryClient),
  });
}

export const replayJobKeys = queryKeysFactory('webhook-replay-jobs');
/** How often a running replay job is asked about: often enough for a progress bar, rarely enough not to matter. */
const REPLAY_POLL_MS = 1_000;

export function useBulkReplay(id: string) {
  return useMutation({ mutationFn: (body: RequestBody<'replayWebhookDeliveries'>) => client.webhooks.replayDeliveries({ path: { destination_id: id }, body }) });
}

/** A bulk replay job, asked about every second until it completed or failed; its end makes the delivery log stale. */
export function useReplayJob(id: string, jobId: string | undefined) {
  const queryClient = useQueryClient();
  return useQuery({
    queryKey: replayJobKeys.detail(jobId ?? ''),
    enabled: jobId !== undefined,
    queryFn: async () => {
      const job = await client.webhooks.getReplayJob({ path: { destination_id: id, job_id: jobId! } });
      if (job.status === 'completed' || job.status === 'failed') void attemptMade(queryClient);
      return job;
    },
    refetchInterval: (query) => (query.state.data && (query.state.data.status === 'completed' || query.state.data.status === 'failed') ? false : REPLAY_POLL_MS),
  });
}
