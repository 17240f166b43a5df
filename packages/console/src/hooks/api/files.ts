import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ResponseBody, Schemas } from '@loyalty/sdk';
import { client, postFile } from '../../api/client';
import { queryKeysFactory } from './query-keys';
import { ledgerKeys, participantKeys } from './participants';

/**
 * Files: participant and ledger exports (written by a background job, then
 * downloaded from `file_url`), and CSV imports of participants or point grants
 * with a dry run first (`POST /admin/imports/dry-run` checks the file as the
 * import would apply it and keeps nothing). Uploads go through `postFile`:
 * the SDK's JSON client does not send files.
 */
export const exportKeys = queryKeysFactory('exports');
export const importKeys = queryKeysFactory('imports');

export type FileExport = ResponseBody<'getExport'>;
export type FileImport = ResponseBody<'getImport'>;
export type ImportKind = 'participants' | 'point_grants';

/** The answer of a dry run (the operation is outside the SDK, which does not send files; its schema is in the document). */
export type ImportDryRun = Schemas['ImportDryRun'];

export function useStartExport() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (kind: 'participants' | 'ledger') => client.files.createExport({ body: { kind, format: 'csv' } }),
    onSuccess: (started) => queryClient.setQueryData(exportKeys.detail(started.export_id), started),
  });
}

/** An export's progress, asked again every second until its file is written. */
export function useExport(exportId: string | undefined) {
  return useQuery({
    queryKey: exportKeys.detail(exportId ?? ''),
    queryFn: () => client.files.getExport({ path: { export_id: exportId! } }),
    enabled: exportId !== undefined,
    refetchInterval: (query) => (query.state.data?.status === 'completed' ? false : 1_000),
  });
}

const CSV = 'text/csv';

export function useImportDryRun() {
  return useMutation({
    mutationFn: ({ kind, file }: { kind: ImportKind; file: Blob }) => postFile<ImportDryRun>('/api/v1/admin/imports/dry-run', { kind, format: 'csv' }, file, CSV),
  });
}

export function useStartImport() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ kind, file }: { kind: ImportKind; file: Blob }) => postFile<FileImport>('/api/v1/admin/imports', { kind, format: 'csv' }, file, CSV),
    onSuccess: (started) => queryClient.setQueryData(importKeys.detail(started.import_id), started),
  });
}

/**
 * An import's progress, asked again every second until it is completed; then
 * the participants and the ledger it changed are read again.
 */
export function useImport(importId: string | undefined) {
  const queryClient = useQueryClient();
  return useQuery({
    queryKey: importKeys.detail(importId ?? ''),
    queryFn: async () => {
      const found = await client.files.getImport({ path: { import_id: importId! } });
      if (found.status === 'completed') {
        await Promise.all([queryClient.invalidateQueries({ queryKey: participantKeys.all }), queryClient.invalidateQueries({ queryKey: ledgerKeys.all })]);
      }
      return found;
    },
    enabled: importId !== undefined,
    refetchInterval: (query) => (query.state.data?.status === 'completed' ? false : 1_000),
  });
}

/** The rows a finished import refused. */
export function useImportErrors(importId: string | undefined, enabled: boolean) {
  return useQuery({
    queryKey: importKeys.detail(importId ?? '', 'errors'),
    queryFn: () => client.files.listImportErrors({ path: { import_id: importId! }, query: { limit: 100 } }),
    enabled: importId !== undefined && enabled,
  });
}
