import { describe, expect, it } from "vitest";
import { remramApplianceSpec } from "../api/v1alpha1/remram-appliance.js";
import type { ApplianceContext } from "./children/shared.js";
import { gatewayCortexTokenFile, gatewayWorkspaceDir } from "./openclaw-config.js";
import { gatewayConfigFor } from "./testing/context.js";

const alice = {
  id: "alice",
  identities: [
    { channel: "telegram", peer: "123456789" },
    { channel: "whatsapp", peer: "+4712345678" },
  ],
};
const bob = { id: "bob", identities: [{ channel: "telegram", peer: "987654321" }] };

function configFor(specInput: unknown, overrides: Partial<ApplianceContext> = {}) {
  return gatewayConfigFor(specInput, overrides) as {
    session: Record<string, unknown>;
    gateway: { trustedProxies?: string[] };
    tools: Record<string, unknown>;
    agents: {
      ownership?: string;
      defaults: { workspace: string; systemAgent?: { agentId: string } };
      entries: Record<string, { model?: string; workspace?: string }>;
    };
    plugins: { entries: { "remram-hooks": { config: Record<string, unknown> } } };
  };
}

describe("the gateway config for a household", () => {
  it("links each member's channel identities to the member, so two channels are one person", () => {
    const config = configFor({ household: { id: "home", members: [alice, bob] } });
    expect(config.session).toEqual({
      dmScope: "per-channel-peer",
      identityLinks: {
        alice: ["telegram:123456789", "whatsapp:+4712345678"],
        bob: ["telegram:987654321"],
      },
    });
  });

  it("tells the plugin the household, its members and their identities, for the Cortex principal", () => {
    const config = configFor({
      gateway: { dmScope: "per-peer" },
      household: { id: "home", members: [alice, bob, { id: "carol" }] },
    });
    expect(config.session.dmScope).toBe("per-peer");
    expect(config.plugins.entries["remram-hooks"].config.principals).toEqual({
      householdId: "home",
      members: ["alice", "bob", "carol"],
      identities: {
        "telegram:123456789": "alice",
        "whatsapp:+4712345678": "alice",
        "telegram:987654321": "bob",
      },
    });
    // A member without identities has nothing to link (OpenClaw would ignore an empty list).
    expect(config.session.identityLinks).not.toHaveProperty("carol");
  });

  it("leaves identity links and principals out without a household", () => {
    const config = configFor({});
    expect(config.session).toEqual({ dmScope: "per-channel-peer" });
    expect(config.plugins.entries["remram-hooks"].config).not.toHaveProperty("principals");
  });
});

describe("the gateway behind the Ingress", () => {
  const traefik = {
    ingressProxies: { service: "kube-system/traefik", addresses: ["10.42.0.7", "10.42.0.9"] },
  };
  const ingress = (extra: Record<string, unknown> = {}) => ({
    gateway: { expose: { type: "Ingress", ingress: { host: "moltbox.home.arpa", ...extra } } },
  });

  it("trusts X-Forwarded-For only from the ingress controller's pods, and only when exposed through an Ingress", () => {
    expect(configFor(ingress(), traefik).gateway.trustedProxies).toEqual(["10.42.0.7", "10.42.0.9"]);
    // The spec's list replaces what the operator found.
    expect(configFor(ingress({ trustedProxies: ["192.168.1.10"] }), traefik).gateway.trustedProxies).toEqual([
      "192.168.1.10",
    ]);
    // Nothing found: trusted from nobody (GatewayExposed says why), never a guess such as the pod network.
    expect(configFor(ingress()).gateway.trustedProxies).toBeUndefined();
    expect(
      configFor({ gateway: { expose: { type: "NodePort" } } }, traefik).gateway.trustedProxies,
    ).toBeUndefined();
    expect(configFor({}, traefik).gateway.trustedProxies).toBeUndefined();
  });

  it("refuses a trusted proxy that is not an address", () => {
    expect(() => remramApplianceSpec.parse(ingress({ trustedProxies: ["anyone"] }))).toThrowError(
      /an IP address or CIDR/,
    );
    expect(() => remramApplianceSpec.parse(ingress({ trustedProxies: [] }))).toThrowError();
  });
});

describe("compaction", () => {
  it("keeps a session answering when a local model's summary misses OpenClaw's quality audit", () => {
    const config = configFor({}) as unknown as { agents: { defaults: { compaction?: unknown } } };
    expect(config.agents.defaults.compaction).toEqual({
      mode: "safeguard",
      qualityGuard: { enabled: false },
    });
  });
});

describe("the agent's tool policy", () => {
  it("keeps file tools in the workspace and removes shell and control-plane tools, whatever the spec", () => {
    for (const spec of [
      {},
      { household: { id: "home", members: [alice] } },
      { gateway: { sandbox: "all" } },
      { gateway: { tools: { allow: ["read", "exec"] } } },
    ]) {
      const config = configFor(spec);
      expect(config.tools).toMatchObject({
        fs: { workspaceOnly: true },
        deny: ["group:runtime", "group:automation"],
        elevated: { enabled: false },
        // Reflection runs, the only subagents, get no tool at all.
        subagents: { tools: { deny: ["*"] } },
      });
      expect(config.agents.defaults.workspace).toBe(gatewayWorkspaceDir);
      // The token the plugin reads lies outside the only folder file tools reach.
      expect(gatewayCortexTokenFile.startsWith(`${gatewayWorkspaceDir}/`)).toBe(false);
    }
  });
});

describe("the gateway's agents", () => {
  it("are one main agent without ownership settings when the spec names none", () => {
    const { agents } = configFor({});
    expect(agents.entries).toEqual({ main: {} });
    expect(agents.ownership).toBeUndefined();
    expect(agents.defaults.systemAgent).toBeUndefined();
  });

  it("are owned explicitly when there are several, the first owning what names no agent", () => {
    const { agents } = configFor({
      gateway: { agents: [{ id: "home" }, { id: "reader", model: "smollm2-135m-fewshot" }] },
    });
    expect(agents.ownership).toBe("explicit");
    expect(agents.defaults.systemAgent).toEqual({ agentId: "home" });
    // The first agent works in the workspace root, any other in a folder of it (as OpenClaw would put it).
    expect(agents.entries).toEqual({
      home: {},
      reader: { model: "ollama/smollm2-135m-fewshot", workspace: `${gatewayWorkspaceDir}/reader` },
    });
  });
});

describe("spec.household validation (the same rules as the CRD's CEL)", () => {
  const issues = (specInput: unknown): string[] => {
    const result = remramApplianceSpec.safeParse(specInput);
    return result.success
      ? []
      : result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
  };

  it("accepts members with identities on several channels", () => {
    expect(issues({ household: { id: "home", members: [alice, bob] } })).toEqual([]);
  });

  it("refuses an identity claimed by two members, naming both", () => {
    const mallory = { id: "mallory", identities: [{ channel: "whatsapp", peer: "+4712345678" }] };
    expect(issues({ household: { id: "home", members: [alice, mallory] } })).toEqual([
      "household.members.1.identities.0: identity whatsapp:+4712345678 is claimed by members alice and mallory; a channel identity can belong to one member only",
    ]);
  });

  it("refuses a member id used twice and an identity listed twice for one member", () => {
    const twice = { id: "alice", identities: [{ channel: "telegram", peer: "1" }] };
    expect(issues({ household: { id: "home", members: [alice, twice] } })).toEqual([
      "household.members.1.id: member id alice is used twice",
    ]);
    const repeated = {
      id: "dora",
      identities: [bob.identities[0], bob.identities[0]].map((i) => ({ ...i })),
    };
    expect(issues({ household: { id: "home", members: [repeated] } })).toEqual([
      "household.members.0.identities.1: identity telegram:987654321 is listed twice for member dora",
    ]);
  });

  it("refuses peers in capitals and member ids that could be a numeric peer id", () => {
    expect(
      issues({
        household: {
          id: "home",
          members: [{ id: "bob", identities: [{ channel: "slack", peer: "U0ABC" }] }],
        },
      }),
    ).toEqual([
      "household.members.0.identities.0.peer: peer must be lowercase: OpenClaw compares channel identities in lowercase",
    ]);
    expect(issues({ household: { id: "home", members: [{ id: "42" }] } })).toHaveLength(1);
  });

  it("refuses a household whose direct messages would all share the main session", () => {
    expect(issues({ gateway: { dmScope: "main" }, household: { id: "home", members: [alice] } })).toEqual([
      "gateway.dmScope: a household needs gateway.dmScope per-peer, per-channel-peer or per-account-channel-peer: main puts every member's direct messages into one session",
    ]);
  });
});
