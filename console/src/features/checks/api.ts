import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { get, page as fetchPage, post, query } from '../../api';
import type { Body, Data, Environment, VerificationStatus } from '../../types';
import { keysKeys } from '../keys/api';
import { walletKeys } from '../wallet/api';

export const checksKeys = {
  scopes: ['scopes'] as const,
  overview: (environment: Environment) => ['overview', environment] as const,
  verifications: ['verifications'] as const,
  verificationList: (environment: Environment, page: number, scope: string | null, status: string | null) => ['verifications', environment, page, scope, status] as const,
  verification: (environment: Environment, reference: string) => ['verification', environment, reference] as const,
};

/** The statuses a check can have, in the order the filter lists them; a status the server adds fails to compile here. */
const STATUS_ORDER: Record<VerificationStatus, number> = { found: 0, not_found: 1, failed: 2, pending: 3 };
export const VERIFICATION_STATUSES = (Object.keys(STATUS_ORDER) as VerificationStatus[]).sort((a, b) => STATUS_ORDER[a] - STATUS_ORDER[b]);

export const useScopes = () => useQuery({ queryKey: checksKeys.scopes, queryFn: ({ signal }) => get<Data<'listScopes'>>('/scopes', signal) });

export const useOverview = (environment: Environment) =>
  useQuery({ queryKey: checksKeys.overview(environment), queryFn: ({ signal }) => get<Data<'getOverview'>>(`/overview${query({ environment })}`, signal) });

export const useVerifications = (environment: Environment, page: number, pageSize: number, scope: string | null, status: string | null) =>
  useQuery({
    queryKey: checksKeys.verificationList(environment, page, scope, status),
    queryFn: ({ signal }) => fetchPage<Data<'listVerifications'>[number]>(`/verifications${query({ environment, page, pageSize, scope, status })}`, signal),
    placeholderData: keepPreviousData,
  });

export const useVerification = (environment: Environment, reference: string) =>
  useQuery({
    queryKey: checksKeys.verification(environment, reference),
    queryFn: ({ signal }) => get<Data<'getVerification'>>(`/verifications/${encodeURIComponent(reference)}${query({ environment })}`, signal),
  });

export function useEraseVerification(environment: Environment, reference: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => post<Data<'eraseVerification'>>(`/verifications/${encodeURIComponent(reference)}/erasure${query({ environment })}`),
    onSuccess: (data) => {
      client.setQueryData(checksKeys.verification(environment, reference), data);
      void client.invalidateQueries({ queryKey: checksKeys.verifications });
    },
  });
}

/** A playground check; whatever its outcome, what it may have changed is read again. */
export function useRunPlaygroundCheck() {
  const client = useQueryClient();
  const touched: string[] = [checksKeys.verifications[0], checksKeys.overview('test')[0], walletKeys.wallets[0], walletKeys.transactions[0], keysKeys.all[0]];
  return useMutation({
    mutationFn: ({ scope, ...check }: Body<'runPlaygroundCheck'> & { scope: string }) => post<Data<'runPlaygroundCheck'>>(`/playground/${scope}`, check),
    onSettled: () => client.invalidateQueries({ predicate: (entry) => touched.includes(String(entry.queryKey[0])) }),
  });
}
