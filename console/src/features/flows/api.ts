import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { get, page as fetchPage, post, query } from '../../api';
import type { Body, Data, Environment, Schemas } from '../../types';

export type Flow = Schemas['VerificationFlow'];
export type FlowInput = Body<'createFlow'>;
export type FlowLink = Schemas['VerificationFlowLink'];
export type VerificationSession = Schemas['VerificationSession'];
export type SessionStatus = VerificationSession['status'];
export type SessionReview = Schemas['VerificationSessionReview'];
export type ReviewInput = Body<'decideSessionReview'>;
export type QueueItem = Schemas['VerificationSessionInReview'];

/** The statuses a session can have, in the order the filter lists them; a status the server adds fails to compile here. */
const STATUS_ORDER: Record<SessionStatus, number> = {
  needs_review: 0,
  created: 1,
  in_progress: 2,
  submitted: 3,
  approved: 4,
  declined: 5,
  expired: 6,
  cancelled: 7,
};
export const SESSION_STATUSES = (Object.keys(STATUS_ORDER) as SessionStatus[]).sort((a, b) => STATUS_ORDER[a] - STATUS_ORDER[b]);

export const flowsKeys = {
  flows: ['flows'] as const,
  list: (environment: Environment, page: number) => ['flows', environment, 'list', page] as const,
  flow: (environment: Environment, id: string) => ['flows', environment, id] as const,
  links: (environment: Environment, id: string) => ['flow-links', environment, id] as const,
  sessions: ['sessions'] as const,
  sessionList: (environment: Environment, page: number, status: string | null) => ['sessions', environment, 'list', page, status] as const,
  session: (environment: Environment, id: string) => ['sessions', environment, id] as const,
  operatorSessions: ['operator-sessions'] as const,
  queue: (page: number) => ['operator-sessions', 'queue', page] as const,
  operatorSession: (id: string) => ['operator-sessions', id] as const,
};

const flowPath = (id: string) => `/verification_flows/${encodeURIComponent(id)}`;
const sessionPath = (id: string) => `/verification_sessions/${encodeURIComponent(id)}`;
const operatorSessionPath = (id: string) => `/operator/verification_sessions/${encodeURIComponent(id)}`;

export const useFlows = (environment: Environment, page: number, pageSize: number) =>
  useQuery({
    queryKey: flowsKeys.list(environment, page),
    queryFn: ({ signal }) => fetchPage<Flow>(`/verification_flows${query({ environment, page, pageSize })}`, signal),
    placeholderData: keepPreviousData,
  });

export const useFlow = (environment: Environment, id: string | undefined) =>
  useQuery({
    queryKey: flowsKeys.flow(environment, id ?? ''),
    queryFn: ({ signal }) => get<Data<'getFlow'>>(`${flowPath(id as string)}${query({ environment })}`, signal),
    enabled: id !== undefined,
  });

/** Creates the flow (no id) or publishes its next version; either way the flows are read again. */
export function useSaveFlow(environment: Environment, id: string | undefined) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: FlowInput) =>
      id === undefined
        ? post<Data<'createFlow'>>(`/verification_flows${query({ environment })}`, input)
        : post<Data<'publishFlowVersion'>>(`${flowPath(id)}/versions${query({ environment })}`, input),
    onSuccess: (flow) => {
      client.setQueryData(flowsKeys.flow(environment, flow.id), flow);
      void client.invalidateQueries({ queryKey: flowsKeys.flows });
    },
  });
}

export const useFlowLinks = (environment: Environment, id: string) =>
  useQuery({ queryKey: flowsKeys.links(environment, id), queryFn: ({ signal }) => get<Data<'listFlowLinks'>>(`${flowPath(id)}/links${query({ environment })}`, signal) });

export function useCreateFlowLink(environment: Environment, id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => post<Data<'createFlowLink'>>(`${flowPath(id)}/links${query({ environment })}`, {}),
    onSuccess: () => client.invalidateQueries({ queryKey: flowsKeys.links(environment, id) }),
  });
}

export const useSessions = (environment: Environment, page: number, pageSize: number, status: string | null) =>
  useQuery({
    queryKey: flowsKeys.sessionList(environment, page, status),
    queryFn: ({ signal }) => fetchPage<VerificationSession>(`/verification_sessions${query({ environment, page, pageSize, status })}`, signal),
    placeholderData: keepPreviousData,
  });

export const useSessionReview = (environment: Environment, id: string) =>
  useQuery({ queryKey: flowsKeys.session(environment, id), queryFn: ({ signal }) => get<Data<'getSessionReview'>>(`${sessionPath(id)}${query({ environment })}`, signal) });

/** The selfie's address for an `<img>`: the session cookie is its credential, and the answer is never cached. */
export const selfieUrl = (environment: Environment, id: string) => `/console/api${sessionPath(id)}/selfie${query({ environment })}`;

export function useDecideSession(environment: Environment, id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: ReviewInput) => post<Data<'decideSessionReview'>>(`${sessionPath(id)}/review${query({ environment })}`, input),
    onSettled: () => client.invalidateQueries({ queryKey: flowsKeys.sessions }),
  });
}

export const useReviewQueue = (page: number, pageSize: number) =>
  useQuery({
    queryKey: flowsKeys.queue(page),
    queryFn: ({ signal }) => fetchPage<QueueItem>(`/operator/verification_sessions/in_review${query({ page, pageSize })}`, signal),
    placeholderData: keepPreviousData,
  });

export const useOperatorSessionReview = (id: string) =>
  useQuery({ queryKey: flowsKeys.operatorSession(id), queryFn: ({ signal }) => get<Data<'operatorGetSessionReview'>>(operatorSessionPath(id), signal) });

export const operatorSelfieUrl = (id: string) => `/console/api${operatorSessionPath(id)}/selfie`;

export function useOperatorDecideSession(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: ReviewInput) => post<Data<'operatorDecideSessionReview'>>(`${operatorSessionPath(id)}/review`, input),
    onSettled: () => client.invalidateQueries({ queryKey: flowsKeys.operatorSessions }),
  });
}
