// SPDX-License-Identifier: MIT
// k8s_validate.js SCHEMA_DIR FILE.json: validate Kubernetes objects (a JSON array of documents,
// as k8s_yaml.py prints them) offline against the Kubernetes API schemas of the npm package
// kubernetes-models (scripts/k8s-schema.sh installs it in SCHEMA_DIR): one ajv-compiled JSON
// Schema validator per API type, generated from the Kubernetes OpenAPI spec. Prints "ok ..." per
// document, or each error as "INDEX /json/pointer: message" and exits 1; 2 on usage errors.
//
// The Kubernetes schemas leave additionalProperties open (the API server prunes or rejects
// unknown fields itself), so a misspelt key such as "completionsMode" would pass them. A second,
// strict pass catches those: the document is validated through a Proxy that records every key the
// validator reads. A compiled validator reads each property its schema declares (and every key of
// a map type such as labels), so a key of the document that was never read is one the schema does
// not know: an error, as `kubectl apply --validate=strict` would make it.
'use strict';
const fs = require('fs');
const path = require('path');

if (process.argv.length !== 4) {
	process.stderr.write('usage: node k8s_validate.js SCHEMA_DIR FILE.json\n');
	process.exit(2);
}
const schemas = path.join(process.argv[2], 'node_modules', 'kubernetes-models', '_schemas');
const docs = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
let bad = 0;

// io.k8s.api.<group>.<version>.<Kind>: "batch/v1" -> IoK8sApiBatchV1, "v1" -> IoK8sApiCoreV1,
// "rbac.authorization.k8s.io/v1" -> IoK8sApiRbacV1.
function schemaFile(apiVersion, kind) {
	const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);
	const parts = String(apiVersion).split('/');
	const group = parts.length === 2 ? parts[0].replace(/\.k8s\.io$/, '').split('.')[0] : 'core';
	const version = parts[parts.length - 1];
	return path.join(schemas, 'IoK8sApi' + cap(group) + cap(version) + kind + '.js');
}

// watch(value, pointer, seen): a Proxy of value that adds the pointer of every key read to seen.
function watch(value, ptr, seen) {
	if (value === null || typeof value !== 'object')
		return value;
	return new Proxy(value, {
		get(target, key, receiver) {
			if (typeof key === 'string' && Object.prototype.hasOwnProperty.call(target, key)) {
				const p = ptr + '/' + key.replace(/~/g, '~0').replace(/\//g, '~1');
				seen.add(p);
				return watch(target[key], p, seen);
			}
			return Reflect.get(target, key, receiver);
		},
	});
}

// Every key pointer of value, depth first.
function keys(value, ptr, out) {
	if (value === null || typeof value !== 'object')
		return out;
	for (const k of Object.keys(value)) {
		const p = ptr + '/' + k.replace(/~/g, '~0').replace(/\//g, '~1');
		out.push(p);
		keys(value[k], p, out);
	}
	return out;
}

docs.forEach((doc, i) => {
	const where = (doc && doc.kind ? doc.apiVersion + ' ' + doc.kind : 'document') + ' #' + i;
	const file = doc && doc.apiVersion && doc.kind ? schemaFile(doc.apiVersion, doc.kind) : null;
	if (!file || !fs.existsSync(file)) {
		process.stdout.write(`${i} ${where}: no schema for this apiVersion and kind\n`);
		bad++;
		return;
	}
	const { validate } = require(file);
	const seen = new Set();
	const ok = validate(watch(doc, '', seen));
	for (const e of (ok ? [] : validate.errors)) {
		process.stdout.write(`${i} ${e.instancePath || '/'}: ${e.keyword}: ${e.message || JSON.stringify(e.params)}\n`);
		bad++;
	}
	// apiVersion and kind pick the schema; the schemas declare them, so they count as known.
	for (const p of keys(doc, '', [])) {
		if (!seen.has(p)) {
			process.stdout.write(`${i} ${p}: unknown field (not in the ${doc.apiVersion} ${doc.kind} schema)\n`);
			bad++;
		}
	}
	if (!bad)
		process.stdout.write(`ok ${where}${doc.metadata && doc.metadata.name ? ' ' + doc.metadata.name : ''}\n`);
});
process.exit(bad ? 1 : 0);
