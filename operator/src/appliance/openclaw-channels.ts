/**
 * The chat channels of the gateway's openclaw.json (OpenClaw 2026.9.6's channels.telegram and channels.discord),
 * from spec.gateway.channels and spec.household. The bot token never enters the config: it is an OpenClaw SecretRef
 * to an environment variable the gateway container takes from the user's Secret (children/gateway.ts), as the
 * escalation's cloud key is. Each bot answers direct messages from the household members' identities on its
 * channel and nobody else (dmPolicy allowlist; never pairing or open), no group chat, and no config writes from
 * chat events.
 */
import type { GatewayChannelsSpec, SupportedChannel } from "../api/v1alpha1/gateway-channels.js";
import { supportedChannels } from "../api/v1alpha1/gateway-channels.js";
import type { RemramApplianceSpec } from "../api/v1alpha1/remram-appliance.js";

/** The gateway container's variable holding each channel's bot token. */
export const channelTokenEnv: Record<SupportedChannel, string> = {
  telegram: "REMRAM_TELEGRAM_BOT_TOKEN",
  discord: "REMRAM_DISCORD_BOT_TOKEN",
};

/** The Secret key each configured channel's token comes from. */
export function channelTokenRefs(
  channels: GatewayChannelsSpec | undefined,
): { channel: SupportedChannel; ref: { name: string; key: string } }[] {
  if (channels === undefined) return [];
  const refs: Record<SupportedChannel, { name: string; key: string } | undefined> = {
    telegram: channels.telegram?.botTokenSecretRef,
    discord: channels.discord?.tokenSecretRef,
  };
  return supportedChannels.flatMap((channel) => {
    const ref = refs[channel];
    return ref === undefined ? [] : [{ channel, ref }];
  });
}

/** The configured channels whose token was found: only these are written into the config and the environment. */
export function activeChannels(
  channels: GatewayChannelsSpec | undefined,
  tokensFound: ReadonlySet<SupportedChannel> | readonly SupportedChannel[],
): SupportedChannel[] {
  const found = new Set(tokensFound);
  return channelTokenRefs(channels)
    .map(({ channel }) => channel)
    .filter((channel) => found.has(channel));
}

/** The household members' peers on a channel: the bot's allowlist. */
export function memberPeers(
  household: RemramApplianceSpec["household"],
  channel: SupportedChannel,
): string[] {
  return [
    ...new Set(
      (household?.members ?? []).flatMap((member) =>
        member.identities.filter((identity) => identity.channel === channel).map((identity) => identity.peer),
      ),
    ),
  ];
}

const envRef = (channel: SupportedChannel) => ({
  source: "env",
  provider: "default",
  id: channelTokenEnv[channel],
});

/** The household-only access every channel gets. */
function householdAccess(household: RemramApplianceSpec["household"], channel: SupportedChannel) {
  return {
    enabled: true,
    // Only the members: OpenClaw refuses an allowlist without entries, and admission refuses a channel no member is on.
    dmPolicy: "allowlist",
    allowFrom: memberPeers(household, channel),
    // Group chats would mix members in one session and let non-members in.
    groupPolicy: "disabled",
    configWrites: false,
  };
}

/** The `channels` section; undefined when no channel is active. */
export function channelsConfig(
  channels: GatewayChannelsSpec | undefined,
  household: RemramApplianceSpec["household"],
  active: readonly SupportedChannel[],
): Record<string, unknown> | undefined {
  if (channels === undefined || active.length === 0) return undefined;
  const section: Record<string, unknown> = {};
  if (active.includes("telegram") && channels.telegram) {
    section.telegram = {
      ...householdAccess(household, "telegram"),
      botToken: envRef("telegram"),
      ...(channels.telegram.apiRoot === undefined ? {} : { apiRoot: channels.telegram.apiRoot }),
    };
  }
  if (active.includes("discord") && channels.discord) {
    section.discord = { ...householdAccess(household, "discord"), token: envRef("discord") };
  }
  return section;
}

/**
 * With several agents OpenClaw wants an owner for each channel account (agents.ownership explicit): the first
 * agent, which owns the gateway's own work, takes every channel's default account.
 */
export function channelBindings(
  agentIds: readonly string[],
  active: readonly SupportedChannel[],
): Record<string, unknown>[] | undefined {
  if (agentIds.length < 2 || active.length === 0) return undefined;
  return active.map((channel) => ({ agentId: agentIds[0], match: { channel, accountId: "default" } }));
}
