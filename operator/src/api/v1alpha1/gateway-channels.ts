/**
 * spec.gateway.channels of a RemramAppliance: the chat apps the household writes to the assistant from. Each bot's
 * token stays in the user's Secret: the gateway container gets it as an environment variable and openclaw.json names
 * that variable (an OpenClaw SecretRef), never the value. The bot answers direct messages from the household's
 * members only (their identities on that channel in spec.household), and no group chat.
 */
import { z } from "zod";
import { secretKeyRef } from "./common.js";

/** The channels the operator wires, as OpenClaw names them (channels.<id>, the plugin of the same id). */
export const supportedChannels = ["telegram", "discord"] as const;
export type SupportedChannel = (typeof supportedChannels)[number];

const tokenSecretRef = (what: string) =>
  secretKeyRef.describe(
    `The Secret key holding the ${what}. It reaches the gateway as an environment variable only; while the Secret or key is missing the channel stays off and ChannelsReady says why.`,
  );

const telegramChannel = z
  .object({
    botTokenSecretRef: tokenSecretRef("bot token from BotFather"),
    apiRoot: z
      .string()
      .min(1)
      .max(2048)
      .regex(/^https?:\/\/[^\s]+$/)
      .optional()
      .describe("A self-hosted Bot API server's root (no /bot<token>); unset: api.telegram.org."),
  })
  .strict();

const discordChannel = z
  .object({
    tokenSecretRef: tokenSecretRef("bot token from the Discord Developer Portal"),
  })
  .strict();

export const gatewayChannelsSpec = z
  .object({
    telegram: telegramChannel
      .optional()
      .describe(
        "A Telegram bot. It answers direct messages from the household members' telegram identities (numeric user ids) only.",
      ),
    discord: discordChannel
      .optional()
      .describe(
        "A Discord bot. It answers direct messages from the household members' discord identities (numeric user ids) only. The gateway image must carry OpenClaw's official plugin @openclaw/discord.",
      ),
  })
  .strict();

export type GatewayChannelsSpec = z.output<typeof gatewayChannelsSpec>;

/** Shown when a channel is configured but no household member has an identity there. */
export function channelWithoutMembersRefusal(channel: SupportedChannel): string {
  return `gateway.channels.${channel} needs a household member with a ${channel} identity (spec.household): the bot answers the household's members only`;
}

/** The root CEL rules: one per channel, a channel needs at least one member identity on it. */
export const channelsNeedMembers = supportedChannels.map((channel) => ({
  rule: `!has(self.gateway.channels) || !has(self.gateway.channels.${channel}) || (has(self.household) && self.household.members.exists(m, m.identities.exists(i, i.channel == '${channel}')))`,
  message: channelWithoutMembersRefusal(channel),
  fieldPath: `.gateway.channels.${channel}`,
}));
