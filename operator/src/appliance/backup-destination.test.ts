import { describe, expect, it } from "vitest";
import { backupDestinationProblem, destinationMissingCondition } from "./backup-destination.js";
import type { BackupSpec } from "./backups.js";

/** A client that knows these objects by API path. */
const clientWith = (objects: Record<string, unknown>) => ({
  get: async <T>(path: string) => objects[path] as T | undefined,
});
const claimPath = "/api/v1/namespaces/home/persistentvolumeclaims/usb-disk";
const secretPath = "/api/v1/namespaces/home/secrets/nas-s3";
const base64 = (text: string) => Buffer.from(text).toString("base64");
const onVolume = { volume: { claimName: "usb-disk" }, schedule: "30 3 * * *", keep: 7 } as BackupSpec;
const onS3 = {
  s3: {
    endpoint: "https://nas.lan:9000",
    bucket: "household",
    prefix: "",
    region: "us-east-1",
    credentialsSecretRef: { name: "nas-s3" },
  },
  schedule: "30 3 * * *",
  keep: 7,
} as BackupSpec;

describe("spec.backup's destination, checked before Cortex is given it", () => {
  it("is no problem without spec.backup", async () => {
    expect(await backupDestinationProblem(clientWith({}), "home", undefined)).toBeUndefined();
  });

  it("names a claim that does not exist, or that lost its volume; a Pending one is fine", async () => {
    expect(await backupDestinationProblem(clientWith({}), "home", onVolume)).toBe(
      "PersistentVolumeClaim usb-disk (spec.backup.volume.claimName) does not exist in namespace home",
    );
    const claim = (phase: string) => ({ [claimPath]: { metadata: { name: "usb-disk" }, status: { phase } } });
    expect(await backupDestinationProblem(clientWith(claim("Lost")), "home", onVolume)).toBe(
      "PersistentVolumeClaim usb-disk (spec.backup.volume.claimName) lost its volume",
    );
    for (const phase of ["Pending", "Bound"])
      expect(await backupDestinationProblem(clientWith(claim(phase)), "home", onVolume)).toBeUndefined();
  });

  it("names a Secret that does not exist, or each key it lacks", async () => {
    expect(await backupDestinationProblem(clientWith({}), "home", onS3)).toBe(
      "Secret nas-s3 (spec.backup.s3.credentialsSecretRef) does not exist in namespace home",
    );
    const secret = (data: Record<string, string>) => ({
      [secretPath]: { metadata: { name: "nas-s3" }, data },
    });
    expect(await backupDestinationProblem(clientWith(secret({})), "home", onS3)).toBe(
      "Secret nas-s3 has no access-key-id and no secret-access-key",
    );
    expect(
      await backupDestinationProblem(
        clientWith(secret({ "access-key-id": base64("AKIA"), "secret-access-key": base64(" \n") })),
        "home",
        onS3,
      ),
    ).toBe("Secret nas-s3 has no secret-access-key");
    expect(
      await backupDestinationProblem(
        clientWith(secret({ "access-key-id": base64("AKIA"), "secret-access-key": base64("s3cret") })),
        "home",
        onS3,
      ),
    ).toBeUndefined();
  });

  it("says so in BackedUp, without any value of the Secret", () => {
    expect(destinationMissingCondition("Secret nas-s3 has no secret-access-key")).toEqual({
      type: "BackedUp",
      status: "False",
      reason: "BackupDestinationMissing",
      message: "Secret nas-s3 has no secret-access-key: Cortex runs without backups until it is there",
    });
  });
});
