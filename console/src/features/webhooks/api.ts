import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, del, get, page as fetchPage, post, query } from '../../api';
import type { Body, Data, Environment, Schemas } from '../../types';

export type Endpoint = Schemas['WebhookEndpoint'];
export type Delivery = Schemas['WebhookDelivery'];
export type EventType = Schemas['WebhookEventType'];

export const webhooksKeys = {
  endpoints: (environment: Environment) => ['webhook-endpoints', environment] as const,
  eventTypes: ['webhook-event-types'] as const,
  deliveries: (environment: Environment, endpointId: string) => ['webhook-deliveries', environment, endpointId] as const,
};

const endpointPath = (id: string) => `/webhooks/endpoints/${encodeURIComponent(id)}`;

export const useEndpoints = (environment: Environment) =>
  useQuery({ queryKey: webhooksKeys.endpoints(environment), queryFn: ({ signal }) => get<Data<'listWebhookEndpoints'>>(`/webhooks/endpoints${query({ environment })}`, signal) });

/** The event types are the server's one list; they do not change while the page is open. */
export const useEventTypes = () =>
  useQuery({ queryKey: webhooksKeys.eventTypes, queryFn: ({ signal }) => get<Data<'listWebhookEventTypes'>>('/webhooks/event_types', signal), staleTime: Infinity });

/** The endpoints' changes in one environment; each but the secret's rotation reads the list again. */
export function useEndpointChanges(
  environment: Environment,
  handlers: { created: (created: Data<'createWebhookEndpoint'>) => void; rotated: (rotated: Data<'rotateWebhookSecret'>, endpoint: Endpoint) => void },
) {
  const client = useQueryClient();
  const on = query({ environment });
  const refresh = () => client.invalidateQueries({ queryKey: webhooksKeys.endpoints(environment) });
  return {
    create: useMutation({
      mutationFn: (endpoint: Body<'createWebhookEndpoint'>) => post<Data<'createWebhookEndpoint'>>(`/webhooks/endpoints${on}`, endpoint),
      onSuccess: (created) => {
        handlers.created(created);
        void refresh();
      },
    }),
    toggle: useMutation({
      mutationFn: (endpoint: Endpoint) =>
        api<Data<'updateWebhookEndpoint'>>('PATCH', `${endpointPath(endpoint.id)}${on}`, { enabled: !endpoint.enabled } satisfies Body<'updateWebhookEndpoint'>),
      onSuccess: () => refresh(),
    }),
    remove: useMutation({ mutationFn: (id: string) => del<Data<'deleteWebhookEndpoint'>>(`${endpointPath(id)}${on}`), onSuccess: () => refresh() }),
    rotate: useMutation({
      mutationFn: (endpoint: Endpoint) => post<Data<'rotateWebhookSecret'>>(`${endpointPath(endpoint.id)}/rotate_secret${on}`, {}),
      onSuccess: (rotated, endpoint) => handlers.rotated(rotated, endpoint),
    }),
  };
}

/** An endpoint's latest deliveries, read again every `refetchMs` while shown. */
export const useDeliveries = (environment: Environment, endpointId: string, pageSize: number, refetchMs: number) =>
  useQuery({
    queryKey: webhooksKeys.deliveries(environment, endpointId),
    queryFn: ({ signal }) => fetchPage<Delivery>(`${endpointPath(endpointId)}/deliveries${query({ environment, pageSize })}`, signal),
    refetchInterval: refetchMs,
  });

export function useResendDelivery(environment: Environment, endpointId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => post<Data<'resendWebhookDelivery'>>(`${endpointPath(endpointId)}/deliveries/${encodeURIComponent(id)}/resend${query({ environment })}`, {}),
    onSuccess: () => client.invalidateQueries({ queryKey: webhooksKeys.deliveries(environment, endpointId) }),
  });
}
