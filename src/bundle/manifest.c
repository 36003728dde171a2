/* SPDX-License-Identifier: MIT */
/* manifest.c: walk a plugin checkout into a manifest, and the manifest's own format.
 *
 * Every directory is opened relative to its parent's fd with O_NOFOLLOW, so a symlink swapped in
 * for a directory mid-walk is never followed. A symlink is accepted only when its target is
 * relative, resolves lexically inside the allowed entries, and, opened on disk with
 * openat2(RESOLVE_BENEATH) from SRC, exists and lands inside them too. */
#include "manifest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../lib/cleanup.h"
#include "../lib/json.h"
#include "../lib/strv.h"
#include "../lib/util.h"

const char *const bundle_default_allow[] = { "skills", "commands", "agents", ".claude-plugin", "hooks" };
const size_t bundle_default_nallow = 5;
const char *const bundle_default_deny[] = { "resolution.md", "check_*.py", "tests/" };
const size_t bundle_default_ndeny = 3;
const struct bundle_rules bundle_default_rules = { bundle_default_allow, 5, bundle_default_deny, 3 };

const char *bundle_denied(const struct bundle_rules *rules, const char *name, bool is_dir)
{
	for (size_t i = 0; i < rules->ndeny; i++) {
		const char *p = rules->deny[i];
		size_t n = strlen(p);
		char pat[NAME_MAX + 2];

		if (n && p[n - 1] == '/') {
			if (!is_dir || n - 1 >= sizeof(pat))
				continue;
			memcpy(pat, p, n - 1);
			pat[n - 1] = '\0';
			p = pat;
		}
		if (fnmatch(p, name, FNM_CASEFOLD | FNM_PERIOD) == 0)
			return rules->deny[i];
	}
	return NULL;
}

static bool allowed_top(const struct bundle_rules *rules, const char *name, size_t n)
{
	for (size_t i = 0; i < rules->nallow; i++)
		if (strlen(rules->allow[i]) == n && !memcmp(rules->allow[i], name, n))
			return true;
	return false;
}

int bundle_link_lexical(const struct bundle_rules *rules, const char *link_rel, const char *target, char **ret,
			const char **ret_why)
{
	struct strv parts = { 0 };
	const char *slash = strrchr(link_rel, '/');
	char *joined = NULL, *save = NULL, *out;
	size_t len = 0;
	int r = -EINVAL;

	*ret_why = NULL;
	if (target[0] == '/') {
		*ret_why = "absolute symlink";
		return -EINVAL;
	}
	if (asprintf(&joined, "%.*s/%s", slash ? (int)(slash - link_rel) : 0, link_rel, target) < 0)
		return -ENOMEM;
	for (char *c = strtok_r(joined, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, "..")) {
			if (!parts.n) {
				*ret_why = "symlink escapes the source tree";
				goto out;
			}
			free(parts.v[--parts.n]);
			parts.v[parts.n] = NULL;
			continue;
		}
		if (strv_push(&parts, c) < 0) {
			r = -ENOMEM;
			goto out;
		}
	}
	if (!parts.n || !allowed_top(rules, parts.v[0], strlen(parts.v[0]))) {
		*ret_why = "symlink points outside the allowed entries";
		goto out;
	}
	for (size_t i = 0; i < parts.n; i++)
		len += strlen(parts.v[i]) + 1;
	out = malloc(len);
	if (!out) {
		r = -ENOMEM;
		goto out;
	}
	out[0] = '\0';
	for (size_t i = 0; i < parts.n; i++) {
		if (i)
			strcat(out, "/");
		strcat(out, parts.v[i]);
	}
	*ret = out;
	r = 0;
out:
	free(joined);
	strv_free(&parts);
	return r;
}

/* ---- manifest container ------------------------------------------------------------------ */

int manifest_add_file(struct manifest *m, const char *rel, const char *sha256)
{
	if (m->nfiles == m->capf) {
		size_t ncap = m->capf ? m->capf * 2 : 64;
		struct bundle_file *v = realloc(m->files, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		m->files = v;
		m->capf = ncap;
	}
	m->files[m->nfiles].rel = strdup(rel);
	if (!m->files[m->nfiles].rel)
		return -ENOMEM;
	memcpy(m->files[m->nfiles].sha256, sha256, SHA256_HEX_LEN + 1);
	m->nfiles++;
	return 0;
}

int manifest_add_link(struct manifest *m, const char *rel, const char *target)
{
	if (m->nlinks == m->capl) {
		size_t ncap = m->capl ? m->capl * 2 : 16;
		struct bundle_link *v = realloc(m->links, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		m->links = v;
		m->capl = ncap;
	}
	m->links[m->nlinks].rel = strdup(rel);
	m->links[m->nlinks].target = strdup(target);
	if (!m->links[m->nlinks].rel || !m->links[m->nlinks].target)
		return -ENOMEM;
	m->nlinks++;
	return 0;
}

static int file_cmp(const void *a, const void *b)
{
	return strcmp(((const struct bundle_file *)a)->rel, ((const struct bundle_file *)b)->rel);
}

static int link_cmp(const void *a, const void *b)
{
	return strcmp(((const struct bundle_link *)a)->rel, ((const struct bundle_link *)b)->rel);
}

void manifest_sort(struct manifest *m)
{
	if (m->nfiles)
		qsort(m->files, m->nfiles, sizeof(*m->files), file_cmp);
	if (m->nlinks)
		qsort(m->links, m->nlinks, sizeof(*m->links), link_cmp);
}

const struct bundle_file *manifest_file(const struct manifest *m, const char *rel)
{
	struct bundle_file key = { .rel = (char *)rel };

	return m->nfiles ? bsearch(&key, m->files, m->nfiles, sizeof(key), file_cmp) : NULL;
}

const struct bundle_link *manifest_link(const struct manifest *m, const char *rel)
{
	struct bundle_link key = { .rel = (char *)rel };

	return m->nlinks ? bsearch(&key, m->links, m->nlinks, sizeof(key), link_cmp) : NULL;
}

void manifest_free(struct manifest *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nfiles; i++)
		free(m->files[i].rel);
	for (size_t i = 0; i < m->nlinks; i++) {
		free(m->links[i].rel);
		free(m->links[i].target);
	}
	free(m->files);
	free(m->links);
	free(m->source);
	free(m);
}

static json_t *manifest_body(const struct manifest *m)
{
	json_t *files = json_object(), *links = json_object();

	for (size_t i = 0; files && i < m->nfiles; i++)
		json_object_set_new(files, m->files[i].rel, json_string(m->files[i].sha256));
	for (size_t i = 0; links && i < m->nlinks; i++)
		json_object_set_new(links, m->links[i].rel, json_string(m->links[i].target));
	return json_pack("{s:o,s:o}", "files", files, "symlinks", links);
}

int manifest_canonical(const struct manifest *m, char **ret_text)
{
	json_t *body = manifest_body(m);
	char *text;

	if (!body)
		return -ENOMEM;
	/* The contract: compact, keys sorted, UTF-8 as is. */
	text = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(body);
	if (!text)
		return -ENOMEM;
	*ret_text = text;
	return 0;
}

int manifest_digest(struct manifest *m)
{
	char *text;
	int r = manifest_canonical(m, &text);

	if (r < 0)
		return r;
	r = sha256_hex(text, strlen(text), m->digest);
	free(text);
	return r;
}

json_t *manifest_json(const struct manifest *m)
{
	json_t *doc = manifest_body(m);

	if (doc && (json_object_set_new(doc, "source", json_string(m->source ? m->source : "")) ||
		    json_object_set_new(doc, "digest", json_string(m->digest)))) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

/* ---- the walk ---------------------------------------------------------------------------- */

#define BUNDLE_READ_CHUNK (1024 * 1024)

struct walker {
	const struct bundle_rules *rules;
	int srcfd;
	char src_real[PATH_MAX];
	struct manifest *m;
	struct diag *d;
	size_t entries;
	char *chunk;
	int oom;
};

static int openat2_beneath(int dirfd, const char *path, int flags, unsigned long long resolve)
{
	struct open_how how = { .flags = (unsigned long long)flags, .resolve = resolve };

	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

static int hash_fd(int fd, char *chunk, char *out)
{
	struct sha256 h;
	int r = sha256_init(&h);

	while (r == 0) {
		ssize_t n = read(fd, chunk, BUNDLE_READ_CHUNK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			r = -errno;
		if (n <= 0)
			break;
		r = sha256_update(&h, chunk, (size_t)n);
	}
	if (r < 0) {
		sha256_free(&h);
		return r;
	}
	return sha256_final_hex(&h, out);
}

static void walk_file(struct walker *w, int dirfd, const char *name, const char *rel)
{
	char sum[SHA256_HEX_LEN + 1];
	struct stat st;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), r;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		diag_error(w->d, "%s: cannot open as a regular file: %s", rel, fd < 0 ? strerror(errno) : "changed type");
		if (fd >= 0)
			close(fd);
		return;
	}
	r = hash_fd(fd, w->chunk, sum);
	close(fd);
	if (r < 0)
		diag_error(w->d, "%s: cannot read: %s", rel, strerror(-r));
	else if (manifest_add_file(w->m, rel, sum) < 0)
		w->oom = 1;
}

/* On disk: open the link's target beneath SRC (never leaving it, following links) and require it
 * to exist, be a file or directory, and lie inside an allowed entry. */
static const char *link_on_disk(struct walker *w, const char *rel, char *where, size_t where_len)
{
	char proc[64];
	struct stat st;
	ssize_t n;
	size_t sl = strlen(w->src_real);
	const char *inside, *slash;
	int fd = openat2_beneath(w->srcfd, rel, O_PATH | O_CLOEXEC, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);

	if (fd < 0)
		return errno == ENOENT ? "broken symlink" : errno == ELOOP ? "symlink loop" :
		       errno == EXDEV ? "symlink escapes the source tree on disk" : strerror(errno);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, where, where_len - 1);
	if (n < 0 || fstat(fd, &st) < 0) {
		close(fd);
		return "cannot resolve symlink";
	}
	close(fd);
	where[n] = '\0';
	if (strncmp(where, w->src_real, sl) || where[sl] != '/')
		return "symlink escapes the source tree on disk";
	inside = where + sl + 1;
	slash = strchr(inside, '/');
	if (!allowed_top(w->rules, inside, slash ? (size_t)(slash - inside) : strlen(inside)))
		return "symlink resolves outside the allowed entries";
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return "symlink points to a special file";
	return NULL;
}

static void walk_link(struct walker *w, int dirfd, const char *name, const char *rel)
{
	char target[PATH_MAX], where[PATH_MAX];
	const char *why = NULL;
	char *lex = NULL;
	ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);

	if (n < 0) {
		diag_error(w->d, "%s: cannot read symlink: %s", rel, strerror(errno));
		return;
	}
	target[n] = '\0';
	if (!utf8_valid(target, (size_t)n)) {
		diag_error(w->d, "%s: symlink target is not valid UTF-8", rel);
		return;
	}
	if (bundle_link_lexical(w->rules, rel, target, &lex, &why) == 0)
		why = link_on_disk(w, rel, where, sizeof(where));
	free(lex);
	if (why)
		diag_error(w->d, "%s: %s (-> %s)", rel, why, target);
	else if (manifest_add_link(w->m, rel, target) < 0)
		w->oom = 1;
}

static void walk_dir(struct walker *w, int dirfd, const char *rel, int depth);

/* One entry of a directory (dirfd), named `name`, at `rel` from SRC. */
static void walk_entry(struct walker *w, int dirfd, const char *name, const char *rel, int depth)
{
	const char *pat;
	struct stat st;
	int fd;

	if (++w->entries > BUNDLE_MAX_ENTRIES) {
		if (w->entries == BUNDLE_MAX_ENTRIES + 1)
			diag_error(w->d, "%s: more than %d entries", rel, BUNDLE_MAX_ENTRIES);
		return;
	}
	if (!utf8_valid(name, strlen(name))) {
		diag_error(w->d, "%s: name is not valid UTF-8", rel);
		return;
	}
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		diag_error(w->d, "%s: %s", rel, strerror(errno));
		return;
	}
	if ((pat = bundle_denied(w->rules, name, S_ISDIR(st.st_mode)))) {
		diag_error(w->d, "%s: hidden grading material is not allowed (matches '%s')", rel, pat);
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		if (depth >= BUNDLE_MAX_DEPTH) {
			diag_error(w->d, "%s: nested deeper than %d directories", rel, BUNDLE_MAX_DEPTH);
			return;
		}
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			diag_error(w->d, "%s: %s", rel, strerror(errno));
			return;
		}
		walk_dir(w, fd, rel, depth + 1); /* takes fd */
	} else if (S_ISREG(st.st_mode)) {
		walk_file(w, dirfd, name, rel);
	} else if (S_ISLNK(st.st_mode)) {
		walk_link(w, dirfd, name, rel);
	} else {
		diag_error(w->d, "%s: special file (fifo, socket or device) is not allowed", rel);
	}
}

static void walk_dir(struct walker *w, int dirfd, const char *rel, int depth)
{
	struct strv names = { 0 };
	struct dirent *e;
	DIR *dp = fdopendir(dirfd);

	if (!dp) {
		diag_error(w->d, "%s: %s", rel, strerror(errno));
		close(dirfd);
		return;
	}
	while ((e = readdir(dp)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strv_push(&names, e->d_name) < 0)
			w->oom = 1;
strv_sort(&names);
	for (size_t i = 0; i < names.n && !w->oom; i++) {
		char *child = NULL;

		if (asprintf(&child, "%s/%s", rel, names.v[i]) < 0) {
			w->oom = 1;
			break;
		}
		walk_entry(w, dirfd, names.v[i], child, depth);
		free(child);
	}
	strv_free(&names);
	closedir(dp);
}

int bundle_walk(const char *src, const struct bundle_rules *rules, struct diag *d, struct manifest **ret)
{
	struct walker w = { .rules = rules, .d = d };
	size_t errors_before = d->errors;
	int r = 0;

	w.m = calloc(1, sizeof(*w.m));
	w.chunk = malloc(BUNDLE_READ_CHUNK);
	if (!w.m || !w.chunk) {
		r = -ENOMEM;
		goto out;
	}
	w.srcfd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w.srcfd < 0 || !realpath(src, w.src_real)) {
		diag_error(d, "%s: %s", src, strerror(errno));
		r = -errno;
		goto out;
	}
	w.m->source = strdup(w.src_real);
	for (size_t i = 0; i < rules->nallow && !w.oom; i++)
		if (faccessat(w.srcfd, rules->allow[i], F_OK, AT_SYMLINK_NOFOLLOW) == 0)
			walk_entry(&w, w.srcfd, rules->allow[i], rules->allow[i], 0);
	if (w.oom || !w.m->source)
		r = -ENOMEM;
	else if (d->errors > errors_before)
		r = -EINVAL;
	if (r == 0) {
		manifest_sort(w.m);
		r = manifest_digest(w.m);
	}
out:
	if (w.srcfd > 0)
		close(w.srcfd);
	free(w.chunk);
	if (r < 0) {
		manifest_free(w.m);
		return r;
	}
	*ret = w.m;
	return 0;
}

/* ---- loading a manifest ------------------------------------------------------------------ */

static bool is_sha256_hex(const char *s)
{
	size_t n = strlen(s);

	if (n != SHA256_HEX_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static int manifest_from_json(const char *path, json_t *root, struct diag *d, struct manifest *m)
{
	json_t *files = json_object_get(root, "files"), *links = json_object_get(root, "symlinks");
	json_t *digest = json_object_get(root, "digest"), *source = json_object_get(root, "source"), *v;
	const char *k;

	if (!json_is_object(files) || !json_is_object(links) || !json_is_string(digest) ||
	    !is_sha256_hex(json_string_value(digest)) || (source && !json_is_string(source))) {
		diag_error(d, "%s: not a bundle manifest: needs \"files\" and \"symlinks\" objects and a \"digest\"", path);
		return -EINVAL;
	}
	json_object_foreach(files, k, v) {
		if (!json_is_string(v) || !is_sha256_hex(json_string_value(v))) {
			diag_error(d, "%s: files[\"%s\"]: must be a SHA-256 in lowercase hex", path, k);
			return -EINVAL;
		}
		if (manifest_add_file(m, k, json_string_value(v)) < 0)
			return -ENOMEM;
	}
	json_object_foreach(links, k, v) {
		if (!json_is_string(v)) {
			diag_error(d, "%s: symlinks[\"%s\"]: must be a string", path, k);
			return -EINVAL;
		}
		if (manifest_add_link(m, k, json_string_value(v)) < 0)
			return -ENOMEM;
	}
	m->source = strdup(source ? json_string_value(source) : "");
	return m->source ? 0 : -ENOMEM;
}

int manifest_load(const char *path, struct diag *d, struct manifest **ret)
{
	json_t *root = NULL;
	struct manifest *m = calloc(1, sizeof(*m));
	char stored[SHA256_HEX_LEN + 1];
	int r;

	if (!m)
		return -ENOMEM;
	r = json_load_path(path, BUNDLE_MANIFEST_MAX_BYTES, d, &root);
	if (r == 0)
		r = manifest_from_json(path, root, d, m);
	if (r == 0) {
		snprintf(stored, sizeof(stored), "%s", json_string_value(json_object_get(root, "digest")));
		manifest_sort(m);
		r = manifest_digest(m);
	}
	if (r == 0 && strcmp(stored, m->digest)) {
		diag_error(d, "%s: the manifest's digest does not match its contents (was it edited?)", path);
		r = -EINVAL;
	}
	json_decref(root);
	if (r < 0) {
		manifest_free(m);
		return r;
	}
	*ret = m;
	return 0;
}
