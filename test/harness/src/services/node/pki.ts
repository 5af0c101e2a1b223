import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * A CA and the apiserver's client certificate for kubelets (openssl: Node's crypto cannot issue certificates). The
 * kubelet trusts the CA for x509 authentication; the certificate's group system:masters passes its webhook check.
 */
export async function writeKubeletClientPki(files: { ca: string; cert: string; key: string }): Promise<void> {
  const caKey = `${files.ca}.key`;
  const csr = `${files.cert}.csr`;
  const openssl = (args: string[]) => run("openssl", args);
  await openssl([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    caKey,
    "-out",
    files.ca,
    "-days",
    "30",
    "-subj",
    "/CN=remram-kubelet-client-ca",
  ]);
  await openssl([
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    files.key,
    "-out",
    csr,
    "-subj",
    "/O=system:masters/CN=kube-apiserver-kubelet-client",
  ]);
  await openssl([
    "x509",
    "-req",
    "-in",
    csr,
    "-CA",
    files.ca,
    "-CAkey",
    caKey,
    "-CAcreateserial",
    "-out",
    files.cert,
    "-days",
    "30",
  ]);
}
