// extract-openapi.mjs cuts the operations that ghfake serves out of GitHub's
// official OpenAPI description and writes a small, self-contained subset:
//
//   node extract-openapi.mjs <path to api.github.com.json> > openapi-subset.json
//
// See README.md beside this file for the exact package version and command.
//
// What is kept, per operation: operationId, parameters (component $refs
// inlined), the JSON request body schema, and every declared response status
// with its JSON body schema and header names. Schemas keep only validation
// keywords; descriptions and examples are dropped. Schema $refs stay as
// "#/components/schemas/NAME" and every schema reachable from an operation is
// copied into components.schemas, so the file needs nothing else.
import { readFileSync } from "node:fs";

// The operations ghfake serves. Keep in sync with ghfake's route table: a Go
// test (TestRoutesMatchSubset) fails when the two differ.
const OPERATIONS = [
  ["get", "/repos/{owner}/{repo}/actions/runs"],
  ["get", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs"],
  ["get", "/repos/{owner}/{repo}/actions/runs/{run_id}"],
  ["get", "/repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}"],
  ["get", "/repos/{owner}/{repo}/actions/runs/{run_id}/artifacts"],
  ["get", "/repos/{owner}/{repo}/actions/artifacts"],
  ["get", "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}"],
  ["get", "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}"],
  ["get", "/repos/{owner}/{repo}/pulls"],
  ["get", "/repos/{owner}/{repo}/pulls/{pull_number}"],
  ["get", "/repos/{owner}/{repo}/pulls/{pull_number}/files"],
  ["get", "/repos/{owner}/{repo}/commits/{commit_sha}/pulls"],
  ["get", "/repos/{owner}/{repo}/issues/{issue_number}/comments"],
  ["post", "/repos/{owner}/{repo}/issues/{issue_number}/comments"],
  ["patch", "/repos/{owner}/{repo}/issues/comments/{comment_id}"],
  ["delete", "/repos/{owner}/{repo}/issues/comments/{comment_id}"],
  ["get", "/repos/{owner}/{repo}/issues"],
  ["post", "/repos/{owner}/{repo}/issues"],
  ["patch", "/repos/{owner}/{repo}/issues/{issue_number}"],
  ["post", "/repos/{owner}/{repo}/check-runs"],
  ["patch", "/repos/{owner}/{repo}/check-runs/{check_run_id}"],
  ["get", "/repos/{owner}/{repo}/contents/{path}"],
  ["post", "/repos/{owner}/{repo}/statuses/{sha}"],
  ["get", "/user"],
];

// Schema keywords that the Go validator understands or that document a type.
const SCHEMA_KEYWORDS = new Set([
  "type", "format", "nullable", "enum", "required", "properties",
  "additionalProperties", "items", "oneOf", "anyOf", "allOf",
  "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum",
  "pattern",
]);

const file = process.argv[2];
if (!file) {
  console.error("usage: node extract-openapi.mjs path/to/api.github.com.json");
  process.exit(2);
}
const spec = JSON.parse(readFileSync(file, "utf8"));
const schemas = {};
const pending = [];

function resolve(ref) {
  if (!ref.startsWith("#/")) throw new Error(`external $ref ${ref}`);
  let node = spec;
  for (const part of ref.slice(2).split("/")) {
    node = node[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    if (node === undefined) throw new Error(`dangling $ref ${ref}`);
  }
  return node;
}

function deref(node) {
  while (node && node.$ref) node = resolve(node.$ref);
  return node;
}

function cleanSchema(s) {
  if (s === true || s === false) return s;
  if (s.$ref) {
    if (!s.$ref.startsWith("#/components/schemas/")) return cleanSchema(resolve(s.$ref));
    const name = s.$ref.slice("#/components/schemas/".length);
    if (!(name in schemas)) {
      schemas[name] = null; // placeholder breaks cycles
      pending.push(name);
    }
    return { $ref: s.$ref };
  }
  const out = {};
  for (const [k, v] of Object.entries(s)) {
    if (!SCHEMA_KEYWORDS.has(k)) continue;
    switch (k) {
      case "properties":
        out[k] = {};
        for (const [p, ps] of Object.entries(v)) out[k][p] = cleanSchema(ps);
        break;
      case "items":
        out[k] = cleanSchema(v);
        break;
      case "additionalProperties":
        out[k] = typeof v === "object" ? cleanSchema(v) : v;
        break;
      case "oneOf":
      case "anyOf":
      case "allOf":
        out[k] = v.map(cleanSchema);
        break;
      default:
        out[k] = v;
    }
  }
  return out;
}

function jsonSchemaOf(content) {
  if (!content) return undefined;
  for (const [type, media] of Object.entries(content)) {
    if (/json/.test(type) && media.schema) return cleanSchema(media.schema);
  }
  return undefined;
}

const paths = {};
for (const [method, path] of OPERATIONS) {
  const op = spec.paths[path]?.[method];
  if (!op) throw new Error(`operation ${method} ${path} not in the description`);
  const out = { operationId: op.operationId };
  out.parameters = (op.parameters ?? []).map((p) => {
    const param = deref(p);
    const o = { name: param.name, in: param.in, required: !!param.required };
    if (param.schema) o.schema = cleanSchema(param.schema);
    return o;
  });
  if (op.requestBody) {
    const body = deref(op.requestBody);
    out.requestBody = { required: !!body.required, schema: jsonSchemaOf(body.content) };
  }
  out.responses = {};
  for (const [status, r] of Object.entries(op.responses)) {
    const resp = deref(r);
    const o = {};
    const schema = jsonSchemaOf(resp.content);
    if (schema) o.schema = schema;
    if (resp.headers) o.headers = Object.keys(resp.headers).sort();
    out.responses[status] = o;
  }
  (paths[path] ??= {})[method] = out;
}

while (pending.length) {
  const name = pending.shift();
  schemas[name] = cleanSchema(spec.components.schemas[name]);
}

const sorted = Object.fromEntries(Object.keys(schemas).sort().map((k) => [k, schemas[k]]));
const subset = {
  openapi: spec.openapi,
  info: {
    title: "GitHub REST API subset served by ghfake",
    version: spec.info.version,
    source: "@octokit/openapi generated/api.github.com.json",
  },
  paths,
  components: { schemas: sorted },
};
process.stdout.write(JSON.stringify(subset, null, 1) + "\n");
