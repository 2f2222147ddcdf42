import { readFileSync } from "node:fs";
import { Service } from "kubernetes-models/v1/Service";
import { Secret } from "kubernetes-models/v1/Secret";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { configFromText } from "../helpers/harness.js";

/**
 * examples/kubernetes/kaiawatch.yaml by the Kubernetes API's own schemas (the npm package
 * kubernetes-models: validators generated from the API's OpenAPI document, run in process;
 * kubeconform and kubeval are on neither the npm registry nor Debian, and kubectl validates only
 * against a cluster). They check types, required fields and enums; they do not refuse an
 * unknown key. Then what the schemas cannot know: the probes' paths, the Service finds the
 * pods, and the config in the ConfigMap passes kaiawatch's checks with the Secret's keys.
 */

const text = readFileSync(new URL("../../examples/kubernetes/kaiawatch.yaml", import.meta.url), "utf8");
const docs = parseAllDocuments(text).map((doc) => doc.toJS() as { kind: string; metadata: { name: string } });
const MODELS = { Secret, ConfigMap, Deployment, Service } as const;
const of = <K extends keyof typeof MODELS>(kind: K) => new MODELS[kind](docs.find((doc) => doc.kind === kind) as never) as InstanceType<(typeof MODELS)[K]>;

describe("examples/kubernetes/kaiawatch.yaml", () => {
  it("holds a Secret, a ConfigMap, a Deployment and a Service, each valid by the Kubernetes API schema", () => {
    expect(docs.map((doc) => doc.kind).sort()).toEqual(["ConfigMap", "Deployment", "Secret", "Service"]);
    for (const kind of Object.keys(MODELS) as Array<keyof typeof MODELS>) expect(() => of(kind).validate(), kind).not.toThrow();
    // The schema catches a wrong type where a misspelling would otherwise deploy.
    const bad = structuredClone(docs.find((doc) => doc.kind === "Deployment")) as unknown as { spec: { replicas: unknown } };
    bad.spec.replicas = "two";
    expect(() => new Deployment(bad as never).validate()).toThrow(/replicas/);
  });

  it("probes /healthz and /readyz on the status port, and the Service selects the pods", () => {
    const deployment = of("Deployment");
    const container = deployment.spec!.template.spec!.containers[0]!;
    expect(deployment.spec!.replicas).toBeGreaterThanOrEqual(2);
    expect(container.livenessProbe?.httpGet?.path).toBe("/healthz");
    expect(container.readinessProbe?.httpGet?.path).toBe("/readyz");
    expect(container.ports?.map((port) => port.containerPort)).toEqual([9464]);
    expect(container.envFrom?.[0]?.secretRef?.name).toBe(of("Secret").metadata!.name);
    const service = of("Service");
    expect(service.spec!.selector).toEqual(deployment.spec!.template.metadata!.labels);
    expect(service.spec!.publishNotReadyAddresses).toBe(true);
  });

  it("carries a config that passes kaiawatch's checks with the Secret's keys, and allows the Service's names", () => {
    const secret = of("Secret").stringData!;
    const config = configFromText(of("ConfigMap").data!["config.yaml"]!, { ...secret, KW_REPLICA_ID: "kaiawatch-5d9c7-abcde" });
    expect(config.status.listen).toEqual({ host: "0.0.0.0", port: 9464 });
    const name = of("Service").metadata!.name!;
    expect(config.status.allowed_hosts).toEqual(expect.arrayContaining([name, `${name}.kaiawatch.svc`]));
  });
});
