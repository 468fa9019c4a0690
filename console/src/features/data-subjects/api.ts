import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { page as fetchPage, post, query } from '../../api';
import type { Data, Environment, Schemas } from '../../types';

/** A request as the owner's list and the operators' list show it (the latter with its organization). */
export type DataRequest = Schemas['DataSubjectRequest'] & Partial<Pick<Schemas['OperatorDataSubjectRequest'], 'organizationId'>>;
export type Hold = Schemas['Hold'];
export type Subject = Hold['subject'];

export const dataSubjectsKeys = {
  requests: (environment: Environment) => ['data-requests', environment] as const,
  holds: (environment: Environment) => ['data-holds', environment] as const,
  allRequests: ['operator-data-requests'] as const,
};

export const useDataRequests = (environment: Environment, pageSize: number) =>
  useQuery({
    queryKey: dataSubjectsKeys.requests(environment),
    queryFn: ({ signal }) => fetchPage<DataRequest>(`/data-subjects/requests${query({ environment, pageSize })}`, signal),
  });

export const useHolds = (environment: Environment, pageSize: number) =>
  useQuery({ queryKey: dataSubjectsKeys.holds(environment), queryFn: ({ signal }) => fetchPage<Hold>(`/data-subjects/holds${query({ environment, pageSize })}`, signal) });

export function useLiftHold(environment: Environment) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => post<Data<'liftHold'>>(`/data-subjects/holds/${encodeURIComponent(id)}/lift${query({ environment })}`),
    onSuccess: () => client.invalidateQueries({ queryKey: dataSubjectsKeys.holds(environment) }),
  });
}

/** Every organization's requests, for the operators. */
export const useAllDataRequests = (pageSize: number) =>
  useQuery({ queryKey: dataSubjectsKeys.allRequests, queryFn: ({ signal }) => fetchPage<DataRequest>(`/operator/data-subject-requests${query({ pageSize })}`, signal) });
