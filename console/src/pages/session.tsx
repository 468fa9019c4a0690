import { Anchor } from '@mantine/core';
import { Link, useParams } from 'wouter';
import { Failure, Loading, PageTitle } from '../components/common';
import { ReviewPanel, SessionSummary } from '../components/session-review';
import { selfieUrl, useDecideSession, useSessionReview } from '../features/flows/api';
import { useEnvironment, useSession } from '../session';

/** One session: status, history, decision, liveness, checks, and for its owners the review of a session in needs_review. */
export default function SessionPage() {
  const { id } = useParams<{ id: string }>();
  const { environment } = useEnvironment();
  const { data: session } = useSession();
  const review = useSessionReview(environment, id);
  const decide = useDecideSession(environment, id);
  const owner = session?.user?.role === 'owner';

  if (review.isPending) return <Loading />;
  if (review.error) return <Failure error={review.error} />;
  return (
    <>
      <PageTitle
        actions={
          <Anchor component={Link} href="/sessions">
            Back to the sessions
          </Anchor>
        }
      >
        Session <span style={{ fontFamily: 'monospace', fontSize: '0.7em', wordBreak: 'break-all' }}>{review.data.session.id}</span>
      </PageTitle>
      <SessionSummary review={review.data} checksLinked />
      <ReviewPanel review={review.data} selfieUrl={selfieUrl(environment, id)} decide={decide} mayDecide={owner} maySeeSelfie={owner} />
    </>
  );
}
