import { Anchor, Text } from '@mantine/core';
import { Link, useParams } from 'wouter';
import { Failure, Loading, PageTitle } from '../../components/common';
import { ReviewPanel, SessionSummary } from '../../components/session-review';
import { operatorSelfieUrl, useOperatorDecideSession, useOperatorSessionReview } from '../../features/flows/api';
import { readOnly, useSession } from '../../session';

/** A session of any organization for its review: the evidence and, but for auditors, the decision. */
export default function OperatorSessionPage() {
  const { id } = useParams<{ id: string }>();
  const { data: session } = useSession();
  const review = useOperatorSessionReview(id);
  const decide = useOperatorDecideSession(id);

  if (review.isPending) return <Loading />;
  if (review.error) return <Failure error={review.error} />;
  return (
    <>
      <PageTitle
        actions={
          <Anchor component={Link} href="/operator/sessions">
            Back to the sessions in review
          </Anchor>
        }
      >
        Session <span style={{ fontFamily: 'monospace', fontSize: '0.7em', wordBreak: 'break-all' }}>{review.data.session.id}</span>
      </PageTitle>
      <Text size="sm" mb="md">
        Organization{' '}
        <Anchor component={Link} href={`/operator/organizations/${review.data.organizationId}`} ff="monospace">
          {review.data.organizationId}
        </Anchor>
        , {review.data.session.environment}
      </Text>
      <SessionSummary review={review.data} checksLinked={false} />
      <ReviewPanel review={review.data} selfieUrl={operatorSelfieUrl(id)} decide={decide} mayDecide={!readOnly(session)} maySeeSelfie />
    </>
  );
}
