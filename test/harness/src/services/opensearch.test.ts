import { describe, expect, it } from "vitest";
import {
  launchCommand,
  lostPortRace,
  parseInstallationEnv,
  pinnedOpenSearchVersion,
  renderJvmOptions,
  renderNodeConfig,
} from "./opensearch.js";

const installation = {
  home: "/var/lib/remram/opensearch-2.19.1",
  javaHome: "/usr/lib/jvm/jdk-17",
  runAs: "remram",
};

describe("the OpenSearch node's opensearch.yml", () => {
  const yml = renderNodeConfig({
    httpPort: 40001,
    transportPort: 40002,
    dataDir: "/d",
    logsDir: "/l",
    snapshotsDir: "/s",
  });
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
      "path.repo": "/s",
    });
  });

  it("switches the disk watermarks off, so a full test disk leaves shards assignable", () => {
    expect(settings["cluster.routing.allocation.disk.threshold_enabled"]).toBe("false");
  });
});

describe("the OpenSearch node's jvm.options", () => {
  // The relevant lines of the 2.19 distribution's config/jvm.options.
  const distribution = [
    "-Xms1g",
    "-XX:+HeapDumpOnOutOfMemoryError",
    "-XX:HeapDumpPath=data",
    "-XX:ErrorFile=logs/hs_err_pid%p.log",
    "8:-Xloggc:logs/gc.log",
    "9-:-Xlog:gc*,gc+age=trace,safepoint:file=logs/gc.log:utctime,pid,tags:filecount=32,filesize=64m",
  ].join("\n");
  const rendered = renderJvmOptions(distribution, {
    httpPort: 1,
    transportPort: 2,
    dataDir: "/run/node/data",
    logsDir: "/run/node/logs",
    snapshotsDir: "/run/node/snapshots",
  });

  it("sends the GC log, heap dumps and crash logs to the node's own dirs", () => {
    expect(rendered).toContain("-XX:HeapDumpPath=/run/node/data");
    expect(rendered).toContain("-XX:ErrorFile=/run/node/logs/hs_err_pid%p.log");
    expect(rendered).toContain("8:-Xloggc:/run/node/logs/gc.log");
    expect(rendered).toContain("file=/run/node/logs/gc.log:utctime");
  });

  it("leaves no path relative to the shared installation and every other line as it was", () => {
    expect(rendered).not.toMatch(/[=:]logs\/|=data$/m);
    expect(rendered.split("\n")).toHaveLength(6);
    expect(rendered.split("\n").slice(0, 2)).toEqual(["-Xms1g", "-XX:+HeapDumpOnOutOfMemoryError"]);
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
    expect(launchCommand(installation, true, "/run/node/opensearch.pid")).toEqual({
      command: "setpriv",
      args: [
        "--reuid=remram",
        "--regid=remram",
        "--init-groups",
        "--",
        `${installation.home}/bin/opensearch`,
        "-p",
        "/run/node/opensearch.pid",
      ],
    });
  });

  it("runs the start script directly otherwise", () => {
    expect(launchCommand(installation, false, "/run/node/opensearch.pid")).toEqual({
      command: `${installation.home}/bin/opensearch`,
      args: ["-p", "/run/node/opensearch.pid"],
    });
  });
});

describe("a failed start", () => {
  it("counts as a lost port race only when the bind failed", () => {
    expect(lostPortRace("BindTransportException[Failed to bind to 127.0.0.1:40002]")).toBe(true);
    expect(lostPortRace("java.lang.IllegalStateException: Could not load plugin descriptor")).toBe(false);
  });
});
