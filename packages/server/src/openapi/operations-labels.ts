/**
 * @module openapi/operations-labels
 * Hosts' labels (issue 37): one host's, and many hosts' at once by selector or ids.
 */
import {
  BulkLabelsAnswer,
  BulkLabelsBody,
  LabelsAnswer,
  PatchLabelsBody,
  PutLabelsBody,
} from "../labels/label-bodies.js";
import type { ApiOperation } from "./operation.js";

const HOST_ID = { id: "The host's id." };
const RULES =
  "A key is an optional lower-case DNS prefix and `/`, then 1 to 63 characters of letters, digits, `.`, `_` and `-` starting and ending with a letter or digit; a value is empty or the same; at most 32 labels per host. An error names the field and the label.";

export const LABEL_OPERATIONS: ApiOperation[] = [
  {
    id: "getHostLabels",
    method: "get",
    path: "/api/hosts/:id/labels",
    tag: "Hosts",
    summary: "A host's labels",
    access: "viewer",
    params: HOST_ID,
    responses: { 200: { description: "The host's labels, key to value.", schema: LabelsAnswer } },
  },
  {
    id: "putHostLabels",
    method: "put",
    path: "/api/hosts/:id/labels",
    tag: "Hosts",
    summary: "Replace a host's labels",
    description: `${RULES} Audited as host.labels with what was set and removed.`,
    access: "operator",
    params: HOST_ID,
    body: PutLabelsBody,
    responses: { 200: { description: "The host's labels now.", schema: LabelsAnswer } },
  },
  {
    id: "patchHostLabels",
    method: "patch",
    path: "/api/hosts/:id/labels",
    tag: "Hosts",
    summary: "Set and remove some of a host's labels",
    description: `\`set\` adds or overwrites, \`remove\` drops keys (a key may not be in both). ${RULES} Audited as host.labels.`,
    access: "operator",
    params: HOST_ID,
    body: PatchLabelsBody,
    responses: { 200: { description: "The host's labels now.", schema: LabelsAnswer } },
  },
  {
    id: "bulkHostLabels",
    method: "post",
    path: "/api/hosts/labels",
    tag: "Hosts",
    summary: "Set and remove labels of many hosts at once",
    description: `The hosts are a label selector (\`env=prod,role in (db,web),!staging\`; not empty) or up to 1000 ids, exactly one of the two. All or nothing: if any host would end up with more than 32 labels, nothing changes. ${RULES} One audit entry (hosts.labels_bulk) with the counts, not one per host.`,
    access: "operator",
    body: BulkLabelsBody,
    responses: { 200: { description: "How many hosts matched and changed.", schema: BulkLabelsAnswer } },
  },
];
