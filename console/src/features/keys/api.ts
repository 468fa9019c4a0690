import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { del, get, post } from '../../api';
import type { Body, Data } from '../../types';

export const keysKeys = { all: ['keys'] as const };

export const useKeys = () => useQuery({ queryKey: keysKeys.all, queryFn: ({ signal }) => get<Data<'listKeys'>>('/keys', signal) });

export function useIssueKey(onIssued: (key: Data<'issueKey'>) => void) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (key: Body<'issueKey'>) => post<Data<'issueKey'>>('/keys', key),
    onSuccess: (key) => {
      onIssued(key);
      void client.invalidateQueries({ queryKey: keysKeys.all });
    },
  });
}

export function useRevokeKey() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => del<Data<'revokeKey'>>(`/keys/${encodeURIComponent(id)}`),
    onSuccess: () => client.invalidateQueries({ queryKey: keysKeys.all }),
  });
}
