// TLS material a household would bring for the gateway's Ingress (spec.gateway.expose.ingress.tls.secretName):
// made with openssl per run, so no certificate in the repository expires under a test.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * A CA and a serving certificate for `host` it signed (EC P-256, one day), as PEM files in a fresh folder: ca.crt,
 * ca.key, tls.crt, tls.key. The caller removes the folder.
 */
export async function householdCertificates(host: string): Promise<{ dir: string; ca: string }> {
  const dir = mkdtempSync(join(tmpdir(), "remram-gateway-tls-"));
  const file = (name: string) => join(dir, name);
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  await run("openssl", [
    "req",
    "-x509",
    ...ec,
    "-days",
    "1",
    "-subj",
    "/CN=Household test CA",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign",
    "-keyout",
    file("ca.key"),
    "-out",
    file("ca.crt"),
  ]);
  await run("openssl", [
    "req",
    ...ec,
    "-subj",
    `/CN=${host}`,
    "-keyout",
    file("tls.key"),
    "-out",
    file("tls.csr"),
  ]);
  await run("sh", [
    "-c",
    `printf 'subjectAltName=DNS:${host}\\nextendedKeyUsage=serverAuth\\n' > ${file("ext")}`,
  ]);
  await run("openssl", [
    "x509",
    "-req",
    "-in",
    file("tls.csr"),
    "-CA",
    file("ca.crt"),
    "-CAkey",
    file("ca.key"),
    "-CAcreateserial",
    "-days",
    "1",
    "-extfile",
    file("ext"),
    "-out",
    file("tls.crt"),
  ]);
  return { dir, ca: readFileSync(file("ca.crt"), "utf8") };
}
