/**
 * `event_store.client.server_features.ServerFeatures` as a KurrentDB 25 node answers it
 * (kurrent-io/KurrentDB src/KurrentDB.Core/Services/Transport/Grpc/ServerFeatures.cs): the node's
 * version to three parts, and every gRPC method of the client services it hosts, names lower-cased,
 * with the features the server attaches (`position`/`events` on Streams.Read, `deadline_duration`
 * on Streams.BatchAppend, `stream`/`all` on every persistent-subscription method,
 * `track_emitted_streams` on Projections.Create).
 *
 * The client reads this once per connection and then appends through Streams.BatchAppend, as it
 * does against production. The list names what a node hosts, not what this test server serves: a
 * method it does not serve (persistent subscriptions, users, operations, gossip, monitoring,
 * projections) answers UNIMPLEMENTED when called, which the client reports as an error, never as
 * "not supported". A node also lists its Redaction service and, from 25.0, the v2 multi-stream
 * append; the client ships no definition of either and never asks for them, so they are left out.
 */
import gossipGrpc from '@eventstore/db-client/generated/gossip_grpc_pb.js';
import monitoringGrpc from '@eventstore/db-client/generated/monitoring_grpc_pb.js';
import operationsGrpc from '@eventstore/db-client/generated/operations_grpc_pb.js';
import persistentGrpc from '@eventstore/db-client/generated/persistent_grpc_pb.js';
import projectionsGrpc from '@eventstore/db-client/generated/projections_grpc_pb.js';
import serverFeaturesGrpc from '@eventstore/db-client/generated/serverfeatures_grpc_pb.js';
import serverFeaturesPb from '@eventstore/db-client/generated/serverfeatures_pb.js';
import streamsGrpc from '@eventstore/db-client/generated/streams_grpc_pb.js';
import usersGrpc from '@eventstore/db-client/generated/users_grpc_pb.js';
import type { SupportedMethods } from '@eventstore/db-client/generated/serverfeatures_pb.js';

/** The version a KurrentDB 25.1 node reports (VersionInfo.Version cut to three parts). */
export const SERVER_VERSION = '25.1.0';

type ServiceDefinition = Record<string, { path: string }>;

const HOSTED: readonly ServiceDefinition[] = [
  streamsGrpc.StreamsService,
  persistentGrpc.PersistentSubscriptionsService,
  operationsGrpc.OperationsService,
  usersGrpc.UsersService,
  gossipGrpc.GossipService,
  monitoringGrpc.MonitoringService,
  serverFeaturesGrpc.ServerFeaturesService,
  projectionsGrpc.ProjectionsService,
] as unknown as readonly ServiceDefinition[];

/** ServerFeatures.GetSupportedMethods' feature rules, on the method's service and method names as the server spells them. */
function featuresOf(serviceName: string, methodName: string): string[] {
  if (serviceName.includes('PersistentSubscriptions')) return ['stream', 'all'];
  if (serviceName.includes('Streams') && methodName.includes('Read')) return ['position', 'events'];
  if (serviceName.includes('Streams') && methodName.includes('BatchAppend')) return ['deadline_duration'];
  if (serviceName.includes('Projections') && methodName.includes('Create')) return ['track_emitted_streams'];
  return [];
}

export function supportedMethods(): SupportedMethods {
  const answer = new serverFeaturesPb.SupportedMethods();
  answer.setEventStoreServerVersion(SERVER_VERSION);
  for (const service of HOSTED) {
    for (const { path } of Object.values(service)) {
      const [, serviceName, methodName] = path.split('/') as [string, string, string];
      const method = new serverFeaturesPb.SupportedMethod();
      method.setServiceName(serviceName.toLowerCase());
      method.setMethodName(methodName.toLowerCase());
      method.setFeaturesList(featuresOf(serviceName, methodName));
      answer.addMethods(method);
    }
  }
  return answer;
}
