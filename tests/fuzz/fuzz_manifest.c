/* SPDX-License-Identifier: MIT */
/* fuzz_manifest.c: the bundle manifest reader (<bundle>.manifest.json). A manifest it accepts
 * written back out loads again with the same digest. So that fuzzed names and lists get past the
 * digest check, each input is loaded twice: as it is, and with its "digest" replaced by the one
 * the manifest code computes for what it declares. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/bundle/manifest.h"
#include "../../src/lib/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int write_tmp(char *path, const char *data, size_t size)
{
	int fd = mkstemp(path);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, data, size) == (ssize_t)size;
	close(fd);
	if (!ok)
		unlink(path);
	return ok ? 0 : -1;
}

/* Load `text`; when it loads, write it back and load that: same digest, same entries. */
static void load_roundtrip(const char *text, size_t len)
{
	char path[] = "/tmp/proctor-fuzz-XXXXXX", again[] = "/tmp/proctor-fuzz-XXXXXX";
	struct manifest *m = NULL, *m2 = NULL;
	struct diag d;
	char *out = NULL;
	json_t *j;

	if (write_tmp(path, text, len) < 0)
		return;
	diag_init(&d);
	if (manifest_load(path, &d, &m) == 0) {
		for (size_t i = 0; i < m->nfiles; i++)
			if (manifest_file(m, m->files[i].rel) != &m->files[i])
				abort();
		for (size_t i = 0; i < m->nlinks; i++)
			if (manifest_link(m, m->links[i].rel) != &m->links[i])
				abort();
		j = manifest_json(m);
		out = j ? json_dumps(j, JSON_SORT_KEYS | JSON_INDENT(2)) : NULL;
		if (out && write_tmp(again, out, strlen(out)) == 0) {
			if (manifest_load(again, &d, &m2) < 0 || strcmp(m->digest, m2->digest) ||
			    m->nfiles != m2->nfiles || m->nlinks != m2->nlinks)
				abort();
			manifest_free(m2);
			unlink(again);
		}
		free(out);
		json_decref(j);
		manifest_free(m);
	} else if (!d.errors) {
		abort(); /* a refusal always says why */
	}
	diag_free(&d);
	unlink(path);
}

/* The digest of what `root` declares, computed by the manifest code; NULL when it declares
 * something the code cannot hold (the reader refuses that on its own). */
static char *declared_digest(json_t *root)
{
	json_t *files = json_object_get(root, "files"), *links = json_object_get(root, "symlinks");
	json_t *v, *exec = json_object_get(root, "executable");
	struct manifest *m = calloc(1, sizeof(*m));
	const char *k;
	char *r = NULL;
	size_t i;

	if (!m)
		return NULL;
	json_object_foreach(files, k, v)
		if (!json_is_string(v) || manifest_add_file(m, k, json_string_value(v)) < 0)
			goto out;
	json_object_foreach(links, k, v)
		if (!json_is_string(v) || manifest_add_link(m, k, json_string_value(v)) < 0)
			goto out;
	manifest_sort(m);
	json_array_foreach(exec, i, v) {
		struct bundle_file *f =
			(struct bundle_file *)manifest_file(m, json_is_string(v) ? json_string_value(v) : "");

		if (f)
			f->exec = true;
	}
	if (manifest_digest(m) == 0)
		r = strdup(m->digest);
out:
	manifest_free(m);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *root;
	char *digest, *text;

	load_roundtrip((const char *)data, size);
	root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	if (json_is_object(root) && (digest = declared_digest(root))) {
		json_object_set_new(root, "digest", json_string(digest));
		if ((text = json_dumps(root, JSON_SORT_KEYS)))
			load_roundtrip(text, strlen(text));
		free(text);
		free(digest);
	}
	json_decref(root);
	return 0;
}
