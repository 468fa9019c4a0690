import { Alert, Anchor, Paper, Stack, Text, Title } from '@mantine/core';
import { CodeBlock } from '../components/code';
import { when } from '../dates';
import { Failure, Loading } from '../components/common';
import { useMailbox } from '../features/account/api';

/** The development mailbox: the console's emails on the embedded default, where no SMTP server is set. */
export default function MailboxPage() {
  const messages = useMailbox(3_000);
  return (
    <Stack>
      <Title order={1} size="h2">
        Development mailbox
      </Title>
      <Text size="sm" c="dimmed">
        The emails the console sent, shown here because no SMTP server is configured (the embedded default only).
      </Text>
      {messages.isPending ? <Loading /> : null}
      {messages.error ? <Failure error={messages.error} /> : null}
      {messages.data?.length === 0 ? <Alert color="gray">No messages yet.</Alert> : null}
      {messages.data?.map((message) => (
        <Paper withBorder p="md" key={message.id} data-testid="mail">
          <Title order={2} size="h5">
            {message.subject}
          </Title>
          <Text size="sm" c="dimmed">
            to {message.to} · {when(message.createdAt)}
          </Text>
          {message.link ? (
            <Anchor href={message.link} size="sm" data-testid="mail-link">
              Open the link
            </Anchor>
          ) : null}
          <CodeBlock label={`The text of ${message.subject}`}>{message.text}</CodeBlock>
        </Paper>
      ))}
    </Stack>
  );
}
