import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { get, post } from '../../api';
import type { Data } from '../../types';

export const organizationKeys = { organization: ['organization'] as const };

export const useOrganization = () => useQuery({ queryKey: organizationKeys.organization, queryFn: ({ signal }) => get<Data<'getOrganization'>>('/organization', signal) });

export function useRequestLiveAccess(onRequested: () => void) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => post<Data<'requestLiveAccess'>>('/organization/live-access'),
    onSuccess: (data) => {
      client.setQueryData(organizationKeys.organization, data);
      onRequested();
    },
  });
}

export const useResendVerification = () => useMutation({ mutationFn: () => post<Data<'resendVerification'>>('/email/resend') });
