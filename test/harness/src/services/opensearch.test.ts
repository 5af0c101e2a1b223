import { describe, expect, it } from "vitest";
import {
  launchCommand,
  lostPortRace,
  parseInstallationEnv,
  pinnedOpenSearchVersion,
  renderNodeConfig,
} from "./opensearch.js";

const installation = {
  home: "/var/lib/remram/opensearch-2.19.1",
  javaHome: "/usr/lib/jvm/jdk-17",
  runAs: "remram",
};

describe("the OpenSearch node's opensearch.yml", () => {
  const yml = renderNodeConfig({ httpPort: 40001, transportPort: 40002, dataDir: "/d", logsDir: "/l" });
  const settings = Object.fromEntries(
    yml
      .trimEnd()
      .split("\n")
      .map((line) => line.split(": ") as [string, string]),
  );

  it("binds a single-node cluster to loopback on the given ports and dirs", () => {
    expect(settings).toMatchObject({
      "discovery.type": "single-node",
      "network.host": "127.0.0.1",
      "http.port": "40001",
      "transport.port": "40002",
      "path.data": "/d",
      "path.logs": "/l",
    });
  });

  it("switches the disk watermarks off, so a full test disk leaves shards assignable", () => {
    expect(settings["cluster.routing.allocation.disk.threshold_enabled"]).toBe("false");
  });
});

describe("the installer's record", () => {
  it("names the JDK and the user the node runs as", () => {
    const text = "# comment\nOPENSEARCH_JAVA_HOME=/usr/lib/jvm/jdk-17\nOPENSEARCH_RUN_AS=remram\n";
    expect(parseInstallationEnv(installation.home, text)).toEqual(installation);
  });

  it("points at the installer when a key is missing", () => {
    expect(() => parseInstallationEnv("/x", "OPENSEARCH_JAVA_HOME=/j\n")).toThrow(
      /OPENSEARCH_RUN_AS.*install-opensearch/,
    );
  });

  it("takes the OpenSearch version from hack/versions.env", () => {
    expect(
      pinnedOpenSearchVersion(
        "NODE_VERSION=24\nOPENSEARCH_VERSION=2.19.1\nOPENSEARCH_KNN_VERSION=2.19.1.0\n",
      ),
    ).toBe("2.19.1");
  });
});

describe("the node's command line", () => {
  it("drops to the installer's user when the harness runs as root", () => {
    expect(launchCommand(installation, true)).toEqual({
      command: "setpriv",
      args: [
        "--reuid=remram",
        "--regid=remram",
        "--init-groups",
        "--",
        `${installation.home}/bin/opensearch`,
      ],
    });
  });

  it("runs the start script directly otherwise", () => {
    expect(launchCommand(installation, false)).toEqual({
      command: `${installation.home}/bin/opensearch`,
      args: [],
    });
  });
});

describe("a failed start", () => {
  it("counts as a lost port race only when the bind failed", () => {
    expect(lostPortRace("BindTransportException[Failed to bind to 127.0.0.1:40002]")).toBe(true);
    expect(lostPortRace("java.lang.IllegalStateException: Could not load plugin descriptor")).toBe(false);
  });
});
