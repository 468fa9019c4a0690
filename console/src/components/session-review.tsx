import { Alert, Anchor, Badge, Button, Group, Image, Paper, Radio, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import type { UseMutationResult } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import { errorText } from '../api';
import { when } from '../dates';
import type { ReviewInput, SessionReview, VerificationSession } from '../features/flows/api';

const STATUS_COLOURS: Record<string, string> = { approved: '#237032', declined: 'red.9', needs_review: '#8a5a00', expired: 'gray.8', cancelled: 'gray.8' };

export function SessionStatusBadge({ status }: { status: string }) {
  return (
    <Badge color={STATUS_COLOURS[status] ?? 'blue.9'} variant="filled">
      {status.replace('_', ' ')}
    </Badge>
  );
}

/** The reasons as people read them; the codes are the server's fixed list. */
const REASON_TEXT: Record<string, string> = {
  identity_not_found: 'identity record not found',
  face_match_unavailable: 'no portrait to compare with',
  face_match_close: 'face match just below the threshold',
  face_mismatch: 'faces do not match',
  faces_match: 'the faces match',
  identity_confirmed_otherwise: 'identity confirmed another way',
  faces_differ: 'the faces differ',
  selfie_unusable: 'the selfie is unusable',
  suspected_spoof: 'suspected spoof (photo, screen, mask)',
  record_doubtful: 'the identity record is doubtful',
};
export const reasonText = (code: string) => REASON_TEXT[code] ?? code.replaceAll('_', ' ');

function Field({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <div>{children}</div>
    </div>
  );
}

/** A session's status, decision, liveness, checks and history. `checksLinked`: the checks link to the verification page (not in the operators' console). */
export function SessionSummary({ review, checksLinked }: { review: SessionReview; checksLinked: boolean }) {
  const session: VerificationSession = review.session;
  const check = (reference: string | null) =>
    reference === null ? (
      '—'
    ) : checksLinked ? (
      <Anchor component={Link} href={`/verifications/${reference}`} ff="monospace" size="sm" style={{ wordBreak: 'break-all' }}>
        {reference}
      </Anchor>
    ) : (
      <Text ff="monospace" size="sm" style={{ wordBreak: 'break-all' }}>
        {reference}
      </Text>
    );
  return (
    <SimpleGrid cols={{ base: 1, md: 2 }} mb="md">
      <Paper withBorder p="md">
        <SimpleGrid cols={{ base: 1, xs: 2 }}>
          <Field label="Status">
            <SessionStatusBadge status={session.status} />
          </Field>
          <Field label="Flow version">
            <Text>{session.flowVersion}</Text>
          </Field>
          <Field label="Decision reasons">
            <Text>{session.decision ? session.decision.reasons.map(reasonText).join(', ') || 'none' : '—'}</Text>
          </Field>
          <Field label="Face match confidence">
            <Text>{session.decision?.faceMatchConfidence ?? '—'}</Text>
          </Field>
          <Field label="Liveness seen">
            <Text>{session.liveness?.replace('_', ' ') ?? 'none'}</Text>
          </Field>
          <Field label="Identity number kind">
            <Text>{review.identityKind ?? '—'}</Text>
          </Field>
          <Field label="Identity check">{check(session.verifications.identity)}</Field>
          <Field label="Face match check">{check(session.verifications.faceMatch)}</Field>
          {session.decision?.review ? (
            <Field label="Review">
              <Text>
                {session.decision.review.decision} by {session.decision.review.reviewedBy === 'operator' ? 'an operator' : 'the organization'}:{' '}
                {reasonText(session.decision.review.reason)}
              </Text>
            </Field>
          ) : null}
        </SimpleGrid>
        {session.personalDataErasedAt ? (
          <Alert color="gray" mt="md">
            The personal data of this session was erased on {when(session.personalDataErasedAt)}.
          </Alert>
        ) : null}
      </Paper>
      <Paper withBorder p="md">
        <Title order={2} size="h4" mb="sm">
          History
        </Title>
        <Table aria-label="The session's steps">
          <Table.Tbody>
            {review.history.map((step, index) => (
              <Table.Tr key={`${step.step}-${index}`}>
                <Table.Th scope="row">{step.step.replaceAll('_', ' ')}</Table.Th>
                <Table.Td>{when(step.at)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Paper>
    </SimpleGrid>
  );
}

/**
 * The evidence side by side (the selfie the person took, the record's portrait, the face match's
 * confidence and reasons) and, while the session is in review and the viewer may decide, the
 * decision with a reason of the fixed list: no free text, which would invite personal data.
 */
export function ReviewPanel({
  review,
  selfieUrl,
  decide,
  mayDecide,
  maySeeSelfie,
}: {
  review: SessionReview;
  selfieUrl: string;
  decide: UseMutationResult<VerificationSession, Error, ReviewInput>;
  mayDecide: boolean;
  maySeeSelfie: boolean;
}) {
  const [choice, setChoice] = useState<string>('');
  const session = review.session;
  const options = [
    ...review.reviewReasons.approved.map((reason) => ({ value: `approved:${reason}`, label: `Approve: ${reasonText(reason)}` })),
    ...review.reviewReasons.declined.map((reason) => ({ value: `declined:${reason}`, label: `Decline: ${reasonText(reason)}` })),
  ];
  const inReview = session.status === 'needs_review' && session.personalDataErasedAt === null;
  return (
    <Paper withBorder p="md">
      <Title order={2} size="h4" mb="sm">
        Evidence
      </Title>
      <SimpleGrid cols={2} spacing="sm" mb="sm">
        <Stack gap={4} align="center">
          <Text size="sm" fw={600}>
            Selfie taken
          </Text>
          {!review.selfie ? (
            <Text c="dimmed">No selfie to show.</Text>
          ) : maySeeSelfie ? (
            <Image src={selfieUrl} alt="The selfie the person took" maw={260} w="100%" radius="sm" />
          ) : (
            <Text c="dimmed">Shown to its reviewers only.</Text>
          )}
        </Stack>
        <Stack gap={4} align="center">
          <Text size="sm" fw={600}>
            Portrait on record
          </Text>
          {review.portraitUrl ? (
            <Image src={review.portraitUrl} alt="The identity record's portrait" maw={260} w="100%" radius="sm" />
          ) : (
            <Text c="dimmed">No portrait on record.</Text>
          )}
        </Stack>
      </SimpleGrid>
      <Text size="sm" mb="md" data-testid="face-match">
        Face match confidence {session.decision?.faceMatchConfidence ?? '—'};{' '}
        {session.decision ? session.decision.reasons.map(reasonText).join(', ') || 'no reasons' : 'not decided'}.
      </Text>
      {inReview && mayDecide ? (
        <form
          aria-label="Decide the session"
          onSubmit={(event) => {
            event.preventDefault();
            const [decision, reason] = choice.split(':');
            if (decision === 'approved' || decision === 'declined') decide.mutate({ decision, reason } as ReviewInput);
          }}
        >
          <Radio.Group label="Decision and reason" value={choice} onChange={setChoice} required>
            <Stack gap="xs" mt="xs">
              {options.map((option) => (
                <Radio key={option.value} value={option.value} label={option.label} />
              ))}
            </Stack>
          </Radio.Group>
          <Group mt="md">
            <Button type="submit" disabled={choice === ''} loading={decide.isPending} color={choice.startsWith('declined') ? 'red.9' : undefined}>
              {choice.startsWith('declined') ? 'Decline the session' : 'Approve the session'}
            </Button>
          </Group>
          {decide.error ? (
            <Text c="red.9" size="sm" role="alert" mt="xs">
              {errorText(decide.error)}
            </Text>
          ) : null}
        </form>
      ) : inReview ? (
        <Text c="dimmed">Your role does not decide sessions in review.</Text>
      ) : null}
    </Paper>
  );
}
