import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { del, get, post, put } from '../../api';
import type { Body, Data, Role } from '../../types';

export const teamKeys = { all: ['team'] as const };

/** What each role may do, as the invitation form says it; a role the server adds fails to compile here. */
export const ROLE_LABELS: Record<Role, string> = {
  owner: 'Owner: everything',
  developer: 'Developer: keys, checks, verifications',
  finance: 'Finance: wallet, transactions, exports',
};

export const useTeam = () => useQuery({ queryKey: teamKeys.all, queryFn: ({ signal }) => get<Data<'getTeam'>>('/team', signal) });

/** The owner's changes of the team; each refreshes it. */
export function useTeamChanges(onInvited: () => void) {
  const client = useQueryClient();
  const refresh = () => client.invalidateQueries({ queryKey: teamKeys.all });
  return {
    invite: useMutation({
      mutationFn: (invitation: Body<'inviteMember'>) => post<Data<'inviteMember'>>('/team/invitations', invitation),
      onSuccess: () => {
        onInvited();
        void refresh();
      },
    }),
    cancel: useMutation({ mutationFn: (id: string) => del(`/team/invitations/${encodeURIComponent(id)}`), onSuccess: refresh }),
    changeRole: useMutation({
      mutationFn: (change: { id: string; role: Role }) =>
        put<Data<'setMemberRole'>>(`/team/members/${encodeURIComponent(change.id)}`, { role: change.role } satisfies Body<'setMemberRole'>),
      onSuccess: refresh,
    }),
    remove: useMutation({ mutationFn: (id: string) => del(`/team/members/${encodeURIComponent(id)}`), onSuccess: refresh }),
  };
}
