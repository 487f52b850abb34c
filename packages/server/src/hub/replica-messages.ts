/**
 * @module hub/replica-messages
 * What replicas tell each other over the bus: on a replica's own channel, the frames, requests,
 * replies and disconnects for hosts connected to it; on the presence channel, who connected where
 * and which replicas came and went. Validated on receipt: a replica of another version, or a row
 * written by hand into the outbox, must not crash a listener.
 */
import { type Static, Type } from "typebox";
import { Compile } from "typebox/compile";

const Text = Type.String({ minLength: 1, maxLength: 200 });

const ReplicaMessage = Type.Union([
  Type.Object({ t: Type.Literal("send"), host: Text, frame: Type.String() }),
  Type.Object({
    t: Type.Literal("request"),
    host: Text,
    frame: Type.String(),
    id: Text,
    reply_type: Text,
    from: Text,
    timeout_ms: Type.Integer({ minimum: 1, maximum: 600_000 }),
  }),
  Type.Object({ t: Type.Literal("reply"), id: Text, envelope: Type.Object({ id: Text, type: Text }) }),
  Type.Object({ t: Type.Literal("fail"), id: Text, reason: Type.String({ maxLength: 500 }) }),
  Type.Object({
    t: Type.Literal("disconnect"),
    host: Text,
    code: Type.Integer({ minimum: 1000, maximum: 4999 }),
    reason: Type.String({ maxLength: 123 }),
  }),
  Type.Object({ t: Type.Literal("evict"), host: Text, connection: Text }),
]);

const PresenceMessage = Type.Union([
  Type.Object({ t: Type.Literal("up"), host: Text, replica: Text, connection: Text }),
  Type.Object({ t: Type.Literal("down"), host: Text, connection: Text }),
  Type.Object({ t: Type.Literal("gone"), replica: Text }),
  Type.Object({ t: Type.Literal("joined"), replica: Text }),
]);

export type ReplicaMessage = Static<typeof ReplicaMessage>;
export type PresenceMessage = Static<typeof PresenceMessage>;
/** A reply as relayed: the replica holding the socket checked it; the rest travels untouched. */
export type ReplicaReplyEnvelope = { id: string; type: string };

export const checkReplicaMessage = Compile(ReplicaMessage);
export const checkPresenceMessage = Compile(PresenceMessage);

/** The channel every replica listens on for presence. */
export const PRESENCE = "presence";

/** The channel a replica listens on for messages addressed to it. */
export function replicaChannel(replicaId: string): string {
  return `hub_${replicaId.toLowerCase()}`;
}
