import { Decrypter, generateX25519Identity, identityToRecipient } from "age-encryption";
import { load } from "js-yaml";
import { describe, expect, it } from "vitest";
import { remramApplianceSpec } from "../api/v1alpha1/remram-appliance.js";
import {
  applianceSecrets,
  namedSecrets,
  portableSecret,
  sealedSecretsAttachment,
  secretsAttachmentName,
  secretsManifest,
} from "./secrets-bundle.js";

const base64 = (text: string) => Buffer.from(text).toString("base64");
const spec = (input: Record<string, unknown>) => remramApplianceSpec.parse(input);
const generated = {
  apiVersion: "v1",
  kind: "Secret",
  metadata: {
    name: "box-gateway-config",
    namespace: "home",
    uid: "u-1",
    resourceVersion: "42",
    creationTimestamp: "2026-11-01T00:00:00Z",
    labels: { "app.kubernetes.io/managed-by": "remram-operator", "remram.io/appliance": "box" },
    ownerReferences: [{ apiVersion: "remram.io/v1alpha1", kind: "RemramAppliance", name: "box", uid: "a-1" }],
    managedFields: [{ manager: "remram-operator" }],
  },
  type: "Opaque",
  data: { token: base64("gateway-token") },
};
const cloudKey = {
  apiVersion: "v1",
  kind: "Secret",
  metadata: {
    name: "cloud-key",
    namespace: "home",
    annotations: {
      "kubectl.kubernetes.io/last-applied-configuration": '{"stringData":{"apiKey":"sk-clear"}}',
      note: "the provider's key",
    },
  },
  data: { apiKey: base64("sk-secret") },
};
const cloudInput = {
  escalation: {
    cloud: {
      provider: "anthropic",
      api: "anthropic-messages",
      baseUrl: "https://api.anthropic.com",
      model: "claude",
      apiKeySecretRef: { name: "cloud-key", key: "apiKey" },
    },
  },
  backup: { volume: { claimName: "usb-disk" } },
};
const withCloud = spec(cloudInput);

describe("the appliance's Secrets in a backup", () => {
  it("names every Secret the spec refers to, once", () => {
    expect(namedSecrets(spec({}))).toEqual([]);
    expect(
      namedSecrets(
        spec({
          ...cloudInput,
          backup: {
            s3: {
              endpoint: "https://nas.lan:9000",
              bucket: "household",
              credentialsSecretRef: { name: "nas-s3" },
            },
          },
          household: {
            id: "home",
            members: [{ id: "bob", identities: [{ channel: "telegram", peer: "323456789" }] }],
          },
          gateway: { channels: { telegram: { botTokenSecretRef: { name: "cloud-key", key: "telegram" } } } },
        }),
      ),
    ).toEqual(["cloud-key", "nas-s3"]);
  });

  it("keeps what applies into another namespace: name, labels, type, data; never this cluster's bookkeeping", () => {
    expect(portableSecret(generated)).toEqual({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "box-gateway-config", labels: generated.metadata.labels },
      type: "Opaque",
      data: { token: base64("gateway-token") },
    });
    // kubectl's copy of the applied object repeats the value in clear; other annotations stay.
    expect(portableSecret(cloudKey).metadata).toEqual({
      name: "cloud-key",
      annotations: { note: "the provider's key" },
    });
  });

  it("reads the generated Secrets by label and the named ones by name, skipping a named one that is missing", async () => {
    const paths: string[] = [];
    const client = {
      get: async <T>(path: string) => {
        paths.push(path);
        if (path.includes("labelSelector=")) return { items: [generated] } as T;
        if (path.endsWith("/secrets/cloud-key")) return cloudKey as T;
        return undefined;
      },
    };
    const found = await applianceSecrets(client, "home", "box", {
      ...withCloud,
      backup: {
        ...withCloud.backup,
        s3: { endpoint: "x", bucket: "b", prefix: "", region: "r", credentialsSecretRef: { name: "gone" } },
      } as typeof withCloud.backup,
    });
    expect(found.map((secret) => secret.metadata.name)).toEqual(["box-gateway-config", "cloud-key"]);
    expect(decodeURIComponent(paths[0] ?? "")).toBe(
      "/api/v1/namespaces/home/secrets?labelSelector=app.kubernetes.io/managed-by=remram-operator,remram.io/appliance=box",
    );
  });

  it("is sealed to every recipient, and any one of their keys opens it as a List kubectl applies", async () => {
    const alice = await generateX25519Identity();
    const bob = await generateX25519Identity();
    const client = {
      get: async <T>(path: string) =>
        (path.includes("labelSelector=") ? { items: [generated] } : cloudKey) as T | undefined,
    };
    const sealingSpec = spec({
      ...cloudInput,
      backup: {
        volume: { claimName: "usb-disk" },
        secrets: { ageRecipients: [await identityToRecipient(alice), await identityToRecipient(bob)] },
      },
    });
    const [attachment, ...others] = await sealedSecretsAttachment(
      client,
      { namespace: "home", name: "box", spec: sealingSpec },
      new Date("2026-11-28T03:30:00Z"),
    );
    expect(others).toEqual([]);
    expect(attachment?.name).toBe(secretsAttachmentName);
    const sealed = Buffer.from(attachment?.contentBase64 ?? "", "base64");
    expect(sealed.includes(Buffer.from("sk-secret"))).toBe(false);
    expect(sealed.includes(Buffer.from(base64("sk-secret")))).toBe(false);
    for (const identity of [alice, bob]) {
      const decrypter = new Decrypter();
      decrypter.addIdentity(identity);
      const text = await decrypter.decrypt(sealed, "text");
      expect(text).toBe(
        secretsManifest(
          { namespace: "home", name: "box" },
          [generated, cloudKey],
          "2026-11-28T03:30:00.000Z",
        ),
      );
      const list = load(text) as {
        kind: string;
        items: { metadata: { name: string }; data: Record<string, string> }[];
      };
      expect(list.kind).toBe("List");
      expect(list.items.map((item) => item.metadata.name)).toEqual(["box-gateway-config", "cloud-key"]);
      expect(Buffer.from(list.items[1]?.data.apiKey ?? "", "base64").toString()).toBe("sk-secret");
    }
    // Someone else's key opens nothing.
    const stranger = new Decrypter();
    stranger.addIdentity(await generateX25519Identity());
    await expect(stranger.decrypt(sealed, "text")).rejects.toThrow();
  });

  it("is not made without recipients", async () => {
    const client = {
      get: async () => {
        throw new Error("no Secret is read");
      },
    };
    expect(
      await sealedSecretsAttachment(client, { namespace: "home", name: "box", spec: withCloud }, new Date()),
    ).toEqual([]);
  });
});
