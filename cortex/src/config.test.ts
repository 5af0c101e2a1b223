import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config.js";

const token = "t".repeat(32);

describe("configuration", () => {
  it("reads CORTEX_* variables over defaults", () => {
    const config = loadConfig({
      CORTEX_OPENSEARCH_URL: "http://127.0.0.1:9200",
      CORTEX_GATEWAY_TOKEN: token,
      CORTEX_PORT: "9000",
    });
    expect(config.port).toBe(9000);
    expect(config.embedDimensions).toBe(384);
    expect(config.ollamaUrl).toBeUndefined();
  });

  it("reads the names the operator's Deployment sets, with CORTEX_* taking precedence", () => {
    const config = loadConfig({
      REMRAM_OPENSEARCH_URL: "http://opensearch:9200",
      REMRAM_OLLAMA_URL: "http://ollama:11434",
      CORTEX_OLLAMA_URL: "http://other:11434",
      REMRAM_WORKSPACE_DIR: "/workspace",
      GIT_AUTHOR_NAME: "Box",
      REMRAM_REFLECTION_MODEL: "qwen3:8b",
      CORTEX_GATEWAY_TOKEN: token,
    });
    expect(config.opensearchUrl).toBe("http://opensearch:9200");
    expect(config.ollamaUrl).toBe("http://other:11434");
    expect(config.workspaceDir).toBe("/workspace");
    expect(config.gitAuthorName).toBe("Box");
    expect(config.reflectionModel).toBe("qwen3:8b");
    expect(config.reflectionTimeoutMs).toBe(60_000);
  });

  it("reads an external OpenSearch's credentials from the mounted Secret and the candidates from REMRAM_TOP_K", () => {
    const files: Record<string, string> = {
      "/run/os/username": "remram\n",
      "/run/os/password": "s3cret-value\n",
    };
    const config = loadConfig(
      {
        REMRAM_OPENSEARCH_URL: "https://search.lan:9200",
        REMRAM_OPENSEARCH_CREDENTIALS_DIR: "/run/os",
        REMRAM_TOP_K: "24",
        CORTEX_GATEWAY_TOKEN: token,
      },
      (path) => files[path] ?? "",
    );
    expect(config.opensearchCredentials).toEqual({ username: "remram", password: "s3cret-value" });
    expect(config.opensearchCa).toBeUndefined();
    expect(config.retrieveCandidates).toBe(24);
    expect(() =>
      loadConfig(
        {
          CORTEX_OPENSEARCH_URL: "http://os:9200",
          CORTEX_GATEWAY_TOKEN: token,
          CORTEX_OPENSEARCH_CREDENTIALS_DIR: "/none",
        },
        () => {
          throw new Error("ENOENT");
        },
      ),
    ).toThrowError("OpenSearch credentials in /none: ENOENT");
  });

  it("reads an S3 backup bucket with its key from the mounted Secret, and refuses two destinations at once", () => {
    const files: Record<string, string> = {
      "/run/s3/access-key-id": "AKIAREMRAM\n",
      "/run/s3/secret-access-key": "backup-secret\n",
    };
    const env = {
      CORTEX_OPENSEARCH_URL: "http://os:9200",
      CORTEX_GATEWAY_TOKEN: token,
      CORTEX_BACKUP_S3_ENDPOINT: "https://nas.lan:9000",
      CORTEX_BACKUP_S3_BUCKET: "household",
      CORTEX_BACKUP_S3_PREFIX: "remram/moltbox",
      CORTEX_BACKUP_S3_CREDENTIALS_DIR: "/run/s3",
    };
    const read = (path: string) => {
      const content = files[path];
      if (content === undefined) throw new Error(`ENOENT: ${path}`);
      return content;
    };
    expect(loadConfig(env, read).backupS3).toEqual({
      endpoint: "https://nas.lan:9000",
      bucket: "household",
      prefix: "remram/moltbox",
      region: "us-east-1",
      accessKeyId: "AKIAREMRAM",
      secretAccessKey: "backup-secret",
      credentialsDir: "/run/s3",
    });
    expect(() => loadConfig({ ...env, CORTEX_BACKUP_DIR: "/backups" }, read)).toThrowError(
      /CORTEX_BACKUP_DIR and CORTEX_BACKUP_S3_ENDPOINT name two backup destinations/,
    );
    expect(() => loadConfig({ ...env, CORTEX_BACKUP_S3_CREDENTIALS_DIR: "/none" }, read)).toThrowError(
      "S3 backup credentials in CORTEX_BACKUP_S3_CREDENTIALS_DIR (/none): ENOENT: /none/access-key-id",
    );
    expect(() => loadConfig({ ...env, CORTEX_BACKUP_S3_PREFIX: "/leading" }, read)).toThrowError(
      /no leading/,
    );
  });

  it("reads one credential per caller from the credentials folder, trimmed, ignoring the variables", () => {
    const files: Record<string, string> = {
      "/run/creds/gateway": `${token}\n`,
      "/run/creds/operator": "o".repeat(24),
    };
    const config = loadConfig(
      {
        CORTEX_OPENSEARCH_URL: "http://os:9200",
        CORTEX_GATEWAY_TOKEN: "ignored-ignored-ignored",
        CORTEX_ADMIN_TOKEN: "a".repeat(20),
        CORTEX_CREDENTIALS_DIR: "/run/creds",
      },
      (path) => {
        const text = files[path];
        if (text === undefined) throw Object.assign(new Error(`ENOENT ${path}`), { code: "ENOENT" });
        return text;
      },
    );
    expect(config.credentials).toEqual({ gateway: token, operator: "o".repeat(24) });
  });

  it("refuses two callers sharing one credential, and no credential at all", () => {
    expect(() =>
      loadConfig({
        CORTEX_OPENSEARCH_URL: "http://os:9200",
        CORTEX_GATEWAY_TOKEN: token,
        CORTEX_APP_TOKEN: token,
      }),
    ).toThrowError(/each caller needs its own credential/);
    expect(() => loadConfig({ CORTEX_OPENSEARCH_URL: "http://os:9200" })).toThrowError(
      /at least one caller needs a credential/,
    );
  });

  it("names every bad setting by its variable in one clear error", () => {
    expect(() =>
      loadConfig({ CORTEX_OPENSEARCH_URL: "not a url", CORTEX_GATEWAY_TOKEN: "short", CORTEX_PORT: "99999" }),
    ).toThrowError(ConfigError);
    expect(() =>
      loadConfig({ CORTEX_OPENSEARCH_URL: "not a url", CORTEX_GATEWAY_TOKEN: "short" }),
    ).toThrowError(
      /CORTEX_OPENSEARCH_URL: .*\n.*CORTEX_GATEWAY_TOKEN: a credential must be at least 16 characters/,
    );
  });

  it("reports an unreadable config file with its path", () => {
    expect(() =>
      loadConfig({ CORTEX_CONFIG_FILE: "/etc/cortex.json" }, () => {
        throw new Error("ENOENT");
      }),
    ).toThrowError("CORTEX_CONFIG_FILE /etc/cortex.json: ENOENT");
  });

  it("reads an external OpenSearch's CA bundle from the mounted file and refuses one that holds no certificate", () => {
    const pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    const env = { REMRAM_OPENSEARCH_URL: "https://search.lan:9200", CORTEX_GATEWAY_TOKEN: token };
    const config = loadConfig({ ...env, REMRAM_OPENSEARCH_CA_FILE: "/run/ca/ca.crt" }, (path) =>
      path === "/run/ca/ca.crt" ? pem : "",
    );
    expect(config.opensearchCa).toBe(pem);
    expect(() =>
      loadConfig({ ...env, REMRAM_OPENSEARCH_CA_FILE: "/run/ca/ca.crt" }, () => "not a pem"),
    ).toThrowError(/CORTEX_OPENSEARCH_CA_FILE: not a PEM certificate bundle/);
    expect(() =>
      loadConfig({ ...env, REMRAM_OPENSEARCH_CA_FILE: "/none" }, () => {
        throw new Error("ENOENT: no such file");
      }),
    ).toThrowError(/OpenSearch CA bundle \/none: ENOENT/);
  });
});
