import { PageTitle } from '../components/common';

export default function Page() {
  return <PageTitle>wallet</PageTitle>;
}
