import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { type BackupsResponse, gatewayStateAttachmentName as gatewayStateAttachment } from "@remram/contract";
import { testbedEndpoints } from "@remram/test-harness/vitest";
import { Decrypter, generateX25519Identity, identityToRecipient } from "age-encryption";
import { extract } from "tar-fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../../test/harness/src/wait.js";
import { bearer, type FullCortex, startFullCortex } from "../../test/helpers.js";

// REMRAM_TESTBED=opensearch. The gateway's folder (sessions, pairings with their credentials, config) in every
// backup, encrypted to the household's age key: the file opens with that key, holds the folder as it was, and is
// not there at all without a key to seal it to. About 3 s.
const { url: opensearchUrl } = testbedEndpoints("opensearch");

const gatewayFiles: Record<string, string> = {
  "openclaw.json": JSON.stringify({ gateway: { port: 18789 } }),
  "devices/paired.json": JSON.stringify({ phone: { token: "paired-device-secret-0123456789" } }),
  "state/openclaw.sqlite": "SQLite format 3\u0000 (the gateway's sessions)",
  "agents/main/agent/openclaw-agent.sqlite": "SQLite format 3\u0000 (the agent's transcripts)",
  "remram-hooks/queue/capture/0001.json": JSON.stringify({ kind: "turn", text: "Where is the ladder?" }),
};

describe("the gateway's state in Cortex's backups", () => {
  let scratch: string;
  let stateDir: string;
  const started: FullCortex[] = [];

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), "remram-gateway-state-"));
    stateDir = join(scratch, "openclaw");
    for (const [name, content] of Object.entries(gatewayFiles)) {
      await mkdir(join(stateDir, name, ".."), { recursive: true });
      await writeFile(join(stateDir, name), content);
    }
    // OpenClaw keeps its pairings private to its user; Cortex runs as the same user.
    await chmod(join(stateDir, "devices/paired.json"), 0o600);
    // Its copies of the plugins it loaded and its UI's unpacked assets, made again at every start.
    for (const made of ["tmp/plugin-captures/remram/index.js", "cache/control-ui-assets/app.js"]) {
      await mkdir(join(stateDir, made, ".."), { recursive: true });
      await writeFile(join(stateDir, made), "export {};");
    }
  });
  afterAll(async () => {
    for (const cortex of started) await cortex.stop();
    await rm(scratch, { recursive: true, force: true });
  });

  const backUp = async (cortex: FullCortex) => {
    const headers = bearer("operator");
    const response = await cortex.app.inject({ method: "POST", url: "/admin/backups", headers });
    expect(response.statusCode, response.body).toBe(202);
    const { id } = response.json<{ id: string }>();
    return waitFor(
      async () => {
        const list = (
          await cortex.app.inject({ method: "GET", url: "/admin/backups", headers })
        ).json<BackupsResponse>();
        if (list.lastFailure?.id === id) throw new Error(list.lastFailure.error);
        return list.running === undefined ? list.backups.find((backup) => backup.id === id) : undefined;
      },
      { what: `backup ${id}`, timeoutMs: 60_000 },
    );
  };

  it("is sealed to the household's key and opens with it to the folder as it was", async () => {
    const household = await generateX25519Identity();
    const destination = join(scratch, "backups");
    const cortex = await startFullCortex({
      opensearchUrl,
      backupDir: destination,
      gatewayStateDir: stateDir,
      backupAgeRecipients: [await identityToRecipient(household)],
    });
    started.push(cortex);
    const backup = await backUp(cortex);
    expect(backup.attachments).toEqual([gatewayStateAttachment]);

    const sealed = await readFile(join(destination, backup.id, gatewayStateAttachment));
    // Nothing of it readable without the key.
    expect(sealed.includes(Buffer.from("paired-device-secret"))).toBe(false);
    const decrypter = new Decrypter();
    decrypter.addIdentity(household);
    const tarball = Buffer.from(await decrypter.decrypt(sealed));
    const restored = join(scratch, "restored");
    await pipeline(Readable.from([tarball]), createGunzip(), extract(restored));
    for (const [name, content] of Object.entries(gatewayFiles)) {
      expect(await readFile(join(restored, name), "utf8")).toBe(content);
    }
    for (const made of ["tmp/plugin-captures/remram/index.js", "cache/control-ui-assets/app.js"]) {
      await expect(readFile(join(restored, made))).rejects.toThrow(/ENOENT/);
    }

    const stranger = new Decrypter();
    stranger.addIdentity(await generateX25519Identity());
    await expect(stranger.decrypt(sealed)).rejects.toThrow();
  }, 90_000);

  it("is left out without a key to seal it to, never written in clear", async () => {
    const destination = join(scratch, "backups-unsealed");
    const cortex = await startFullCortex({
      opensearchUrl,
      backupDir: destination,
      gatewayStateDir: stateDir,
    });
    started.push(cortex);
    const backup = await backUp(cortex);
    expect(backup.attachments ?? []).toEqual([]);
  }, 90_000);
});
