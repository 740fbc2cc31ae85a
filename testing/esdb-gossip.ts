/**
 * Gossip.Read of the EventStoreDB test double: the cluster's members as a client discovers them
 * (`esdb+discover://` or a connection string of several hosts). The double is a cluster of one node.
 */
import grpc from '@grpc/grpc-js';
import gossipPb from '@eventstore/db-client/generated/gossip_pb.js';
import type { IGossipServer } from '@eventstore/db-client/generated/gossip_grpc_pb.js';
import { uuidMessage } from './esdb-protocol.js';

const { ClusterInfo, EndPoint, MemberInfo } = gossipPb;

/**
 * What gossip answers:
 * - 'leader': the node, alive, as leader: discovery picks it;
 * - 'electing': the node in state PreLeader, as during an election (ClusterVNodeController.cs): no
 *   member a client may connect to, so each discovery attempt fails;
 * - 'unreachable': the call fails with UNAVAILABLE, as when no seed answers.
 */
export type GossipState = 'leader' | 'electing' | 'unreachable';

export interface GossipNode {
  readonly instanceId: string;
  readonly port: number;
  readonly gossip: GossipState;
  /** Gossip reads received. */
  gossipReads: number;
}

export function gossipService(node: GossipNode): IGossipServer {
  return {
    read: (_call, callback) => {
      node.gossipReads += 1;
      if (node.gossip === 'unreachable') {
        callback({ code: grpc.status.UNAVAILABLE, details: 'gossip of the EventStoreDB test double is unreachable' });
        return;
      }
      const state = node.gossip === 'leader' ? MemberInfo.VNodeState.LEADER : MemberInfo.VNodeState.PRELEADER;
      const member = new MemberInfo()
        .setInstanceId(uuidMessage(node.instanceId, false))
        .setTimeStamp(`${BigInt(Date.now()) * 10_000n}`)
        .setState(state)
        .setIsAlive(true)
        .setHttpEndPoint(new EndPoint().setAddress('127.0.0.1').setPort(node.port));
      callback(null, new ClusterInfo().setMembersList([member]));
    },
  };
}
