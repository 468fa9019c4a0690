import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { del, get, page as fetchPage, post, put, query, withMeta } from '../../api';
import type { Body, Data, Environment, Meta, OperatorRole, Schemas } from '../../types';

export type OrganizationDetail = Data<'getOrganizationDetail'>;
export type AuditEntry = Data<'getWalletAudit'>[number];
export type AuditMeta = Meta<'getWalletAudit'>;
/** A wallet the audit page asked for. */
export interface AuditedWallet {
  organization: string;
  environment: string;
  asOf: string;
}

/** Every operator query starts with 'operator': a change of an organization reads them all again. */
export const operatorKeys = {
  all: ['operator'] as const,
  organizations: (search: string, status: string | null, page: number) => ['operator', 'organizations', search, status, page] as const,
  organization: (id: string) => ['operator', 'organization', id] as const,
  queue: ['operator', 'queue'] as const,
  operators: ['operator', 'operators'] as const,
  audit: (wallet: AuditedWallet | undefined) => ['operator', 'audit', wallet] as const,
  reconcile: (wallet: AuditedWallet | undefined) => ['operator', 'reconcile', wallet] as const,
  projections: ['operator', 'projections'] as const,
};

export function useRefreshOperator() {
  const client = useQueryClient();
  return () => client.invalidateQueries({ queryKey: operatorKeys.all });
}

export const useOrganizations = (search: string, status: string | null, page: number, pageSize: number) =>
  useQuery({
    queryKey: operatorKeys.organizations(search, status, page),
    queryFn: ({ signal }) => fetchPage<Data<'listOrganizations'>[number]>(`/operator/organizations${query({ search, status, page, pageSize })}`, signal),
    placeholderData: keepPreviousData,
  });

const organizationPath = (id: string) => `/operator/organizations/${encodeURIComponent(id)}`;

export const useOrganizationDetail = (id: string) =>
  useQuery({ queryKey: operatorKeys.organization(id), queryFn: ({ signal }) => get<OrganizationDetail>(organizationPath(id), signal) });

/** An organization's changes; the page reads the operator queries again after each (useRefreshOperator). */
export function organizationRequests(id: string) {
  const path = organizationPath(id);
  return {
    approve: () => post<Data<'approveOrganization'>>(`${path}/approve`),
    suspend: (reason: string) => post<Data<'suspendOrganization'>>(`${path}/suspend`, { reason } satisfies Body<'suspendOrganization'>),
    reinstate: () => post<Data<'reinstateOrganization'>>(`${path}/reinstate`),
    setScopes: (scopes: Body<'setOrganizationScopes'>['scopes']) => put<Data<'setOrganizationScopes'>>(`${path}/scopes`, { scopes }),
    setPrices: (prices: Body<'setOrganizationPrices'>) => put<Data<'setOrganizationPrices'>>(`${path}/prices`, prices),
    rename: (name: string) => put<Data<'renameOrganization'>>(`${path}/name`, { name } satisfies Body<'renameOrganization'>),
    setRateLimit: (requestsPerMinute: Body<'setOrganizationRateLimit'>['requestsPerMinute']) => put<Data<'setOrganizationRateLimit'>>(`${path}/rate-limit`, { requestsPerMinute }),
    setProvider: (configuration: Body<'setOrganizationProvider'>) => put<Data<'setOrganizationProvider'>>(`${path}/provider`, configuration),
    fund: (environment: Environment, funding: Body<'fundWallet'>) => post<Data<'fundWallet'>>(`${path}/wallets/${environment}/fundings`, funding),
    issueKey: (key: Body<'issueOrganizationKey'>) => post<Data<'issueOrganizationKey'>>(`${path}/keys`, key),
    revokeKey: (keyId: string) => del<Data<'revokeOrganizationKey'>>(`/operator/keys/${encodeURIComponent(keyId)}`),
  };
}

export const useApprovalQueue = () => useQuery({ queryKey: operatorKeys.queue, queryFn: ({ signal }) => get<Data<'getApprovalQueue'>>('/operator/approval-queue', signal) });

export function useApprove() {
  const refresh = useRefreshOperator();
  return useMutation({ mutationFn: (id: string) => organizationRequests(id).approve(), onSuccess: () => refresh() });
}

export const useOperators = () => useQuery({ queryKey: operatorKeys.operators, queryFn: ({ signal }) => get<Data<'getOperators'>>('/operator/operators', signal) });

export const inviteOperator = (invitation: Body<'inviteOperator'>) => post<Data<'inviteOperator'>>('/operator/operators/invitations', invitation);

const walletPath = (wallet: AuditedWallet) => `${organizationPath(wallet.organization)}/wallets/${wallet.environment}`;

/** The audit's replay of a wallet as of a time: its entries and, in meta, the summary. */
export const useWalletAudit = (wallet: AuditedWallet | undefined, asOfIso: string | undefined) =>
  useQuery({
    queryKey: operatorKeys.audit(wallet),
    queryFn: ({ signal }) => withMeta<AuditEntry[], AuditMeta>(`${wallet === undefined ? '' : walletPath(wallet)}/audit${query({ asOf: asOfIso })}`, signal),
    enabled: wallet !== undefined,
  });

/** The audit's CSV download of a wallet (a link, not a query). */
export const walletAuditCsvUrl = (wallet: AuditedWallet, asOfIso: string | undefined) => `/console/api${walletPath(wallet)}/audit.csv${query({ asOf: asOfIso })}`;

/** The reconciliation, run only when asked for (refetch). */
export const useReconciliation = (wallet: AuditedWallet | undefined) =>
  useQuery({
    queryKey: operatorKeys.reconcile(wallet),
    queryFn: ({ signal }) => get<Data<'reconcileWallet'>>(`${wallet === undefined ? '' : walletPath(wallet)}/reconcile`, signal),
    enabled: false,
  });

export const useProjections = (refetchMs: number) =>
  useQuery({ queryKey: operatorKeys.projections, queryFn: ({ signal }) => get<Data<'getProjections'>>('/operator/projections', signal), refetchInterval: refetchMs });

/**
 * The server's lists the operators' forms choose from, each written as a record over the generated
 * type: a provider, status or role the server adds fails to compile here until it is labelled.
 */
export type Provider = Schemas['ProviderConfiguration']['provider'];
const PROVIDER_NAMES: Record<Provider, true> = { sandbox: true, dojah: true, prembly: true };
export const PROVIDERS = Object.keys(PROVIDER_NAMES) as Provider[];
/** A fallback is another upstream: the sandbox is none. */
export const FALLBACK_PROVIDERS = PROVIDERS.filter((provider) => provider !== 'sandbox');
const STATUS_NAMES: Record<Schemas['ConsoleOrganization']['status'], true> = { pending: true, approved: true, suspended: true };
export const ORGANIZATION_STATUSES = Object.keys(STATUS_NAMES);
export const OPERATOR_ROLE_LABELS: Record<OperatorRole, string> = { admin: 'admin: changes everything', auditor: 'auditor: reads, changes nothing' };

/** An organization's top-ups in one environment (newest first), for their receipts. */
export const useOrganizationTopUps = (id: string, environment: Environment) =>
  useQuery({
    queryKey: ['operator', 'topups', id, environment] as const,
    queryFn: ({ signal }) => fetchPage<Data<'listOrganizationTopUps'>[number]>(`${organizationPath(id)}/wallets/${environment}/topups${query({ page: 1, pageSize: 20 })}`, signal),
  });

export type PaymentAttention = Data<'listPaymentsNeedingAttention'>[number];

/** The top-ups across organizations that need an operator, the provider's figures beside ours. */
export const usePaymentsAttention = () =>
  useQuery({ queryKey: ['operator', 'payments'] as const, queryFn: ({ signal }) => get<Data<'listPaymentsNeedingAttention'>>('/operator/payments', signal) });

/** Credit (the provider's settled amount, once) or dismiss (for a reason of the list) a top-up; the operator queries are read again after. */
export function useResolveTopUp() {
  const refresh = useRefreshOperator();
  return useMutation({
    mutationFn: ({ reference, resolution }: { reference: string; resolution: Body<'resolveTopUp'> }) =>
      post<Data<'resolveTopUp'>>(`/operator/payments/${encodeURIComponent(reference)}/resolution`, resolution),
    onSuccess: refresh,
  });
}
