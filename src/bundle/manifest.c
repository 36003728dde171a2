/* SPDX-License-Identifier: MIT */
/* manifest.c: walk a plugin checkout into a manifest, and the manifest's own format.
 *
 * Every directory is opened relative to its parent's fd with O_NOFOLLOW, so a symlink swapped in
 * for a directory mid-walk is never followed. A symlink is accepted only when its target is
 * relative, resolves lexically inside the allowed entries, and, opened on disk with
 * openat2(RESOLVE_BENEATH) from SRC, exists and lands inside them too. That check of the live
 * checkout only gives early, precise errors: a link is checked against the tree as it is while
 * the walk passes, so the authority is bundle_verify() on the staged tree (stage.c).
 * Limits are checked from each entry's metadata before any byte of it is read. */
#include "manifest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
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

void bundle_limits_resolve(const struct bundle_limits *lim, struct bundle_limits *ret)
{
	struct bundle_limits l = { 0 };

	if (lim)
		l = *lim;
	if (!l.max_file_bytes)
		l.max_file_bytes = BUNDLE_DEFAULT_MAX_FILE_BYTES;
	if (!l.max_total_bytes)
		l.max_total_bytes = BUNDLE_DEFAULT_MAX_TOTAL_BYTES;
	if (!l.max_files)
		l.max_files = BUNDLE_DEFAULT_MAX_FILES;
	if (!l.max_depth)
		l.max_depth = BUNDLE_DEFAULT_MAX_DEPTH;
	if (l.max_depth > BUNDLE_MAX_DEPTH)
		l.max_depth = BUNDLE_MAX_DEPTH;
	if (!l.rules)
		l.rules = &bundle_default_rules;
	*ret = l;
}

/* ---- escaping names for messages --------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (1..4) and its code point, or 0 when invalid. */
static size_t utf8_seq(const unsigned char *s, uint32_t *ret_cp)
{
	size_t n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
	uint32_t cp = s[0] & (0x3f >> (n - (n > 0)));

	if (!n || s[0] > 0xf4)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 2 && cp < 0x80) || (n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	*ret_cp = cp;
	return n;
}

/* C1 controls (an 8-bit CSI is U+009B), line separators and bidirectional overrides. */
static bool cp_hidden(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x200e || cp == 0x200f || cp == 0x2028 || cp == 0x2029 ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

char *bundle_escape(const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	char *out = malloc(strlen(s) * 4 + 1), *o = out; /* \xHH is the widest per byte */
	uint32_t cp = 0;
	size_t n = 0;

	if (!out)
		return NULL;
	while (*p) {
		if (*p == '\\' || *p == '\n' || *p == '\t' || *p == '\r') {
			*o++ = '\\';
			*o++ = *p == '\n' ? 'n' : *p == '\t' ? 't' : *p == '\r' ? 'r' : '\\';
			p++;
		} else if (*p >= 0x20 && *p < 0x7f) {
			*o++ = (char)*p++;
		} else if (*p >= 0x80 && (n = utf8_seq(p, &cp)) && !cp_hidden(cp)) {
			memcpy(o, p, n);
			o += n;
			p += n;
		} else if (*p >= 0x80 && n) {
			o += sprintf(o, "\\u%04x", (unsigned)cp); /* 6 bytes for a 2- or 3-byte sequence */
			p += n;
		} else {
			*o++ = '\\';
			*o++ = 'x';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 15];
			p++;
		}
	}
	*o = '\0';
	return out;
}

void bundle_diag(struct diag *d, const char *fmt, ...)
{
	char *text = NULL, *esc;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	esc = n < 0 ? NULL : bundle_escape(text);
	/* Out of memory still counts as an error: the verdict never depends on the text. */
	diag_error(d, "%s", esc ? esc : "out of memory while describing a problem");
	free(text);
	free(esc);
}

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
	struct bundle_file *f;

	if (m->nfiles == m->capf) {
		size_t ncap = m->capf ? m->capf * 2 : 64;
		struct bundle_file *v = realloc(m->files, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		m->files = v;
		m->capf = ncap;
	}
	f = &m->files[m->nfiles];
	memset(f, 0, sizeof(*f));
	f->rel = strdup(rel);
	if (!f->rel)
		return -ENOMEM;
	snprintf(f->sha256, sizeof(f->sha256), "%s", sha256);
	m->nfiles++;
	return 0;
}

int manifest_add_link(struct manifest *m, const char *rel, const char *target)
{
	struct bundle_link *l;

	if (m->nlinks == m->capl) {
		size_t ncap = m->capl ? m->capl * 2 : 16;
		struct bundle_link *v = realloc(m->links, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		m->links = v;
		m->capl = ncap;
	}
	l = &m->links[m->nlinks];
	l->rel = strdup(rel);
	l->target = strdup(target);
	if (!l->rel || !l->target) {
		free(l->rel);
		free(l->target);
		return -ENOMEM;
	}
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

/* Add one member; the reference to v is always consumed. Fails (never drops) on ENOMEM and on
 * what jansson refuses, such as a key that is not UTF-8. */
static int body_set(json_t *obj, const char *key, json_t *v)
{
	return obj && json_object_set_new(obj, key, v) == 0 ? 0 : (obj ? -EINVAL : (json_decref(v), -ENOMEM));
}

/* {"files","symlinks"[,"executable"]}; every entry or none. The manifest must be sorted, without
 * duplicates (checked: a duplicate would silently collapse into one key). */
static int manifest_body(const struct manifest *m, json_t **ret)
{
	json_t *body = json_object(), *files = json_object(), *links = json_object(), *exec = json_array();
	size_t nexec = 0;
	int r = body && files && links && exec ? 0 : -ENOMEM;

	for (size_t i = 0; r == 0 && i < m->nfiles; i++) {
		const struct bundle_file *f = &m->files[i];

		if (!f->sha256[0] || (i && strcmp(m->files[i - 1].rel, f->rel) >= 0))
			r = -EINVAL; /* unhashed, unsorted or a duplicate */
		if (r == 0)
			r = body_set(files, f->rel, json_string(f->sha256));
		if (r == 0 && f->exec && ++nexec)
			r = json_array_append_new(exec, json_string(f->rel)) == 0 ? 0 : -ENOMEM;
	}
	for (size_t i = 0; r == 0 && i < m->nlinks; i++) {
		if (i && strcmp(m->links[i - 1].rel, m->links[i].rel) >= 0)
			r = -EINVAL;
		if (r == 0)
			r = body_set(links, m->links[i].rel, json_string(m->links[i].target));
	}
	if (r == 0 && (json_object_size(files) != m->nfiles || json_object_size(links) != m->nlinks))
		r = -EINVAL;
	/* Only when there is one: manifests from before the key keep their digest. */
	if (r == 0 && nexec)
		r = body_set(body, "executable", json_incref(exec));
	if (r == 0)
		r = body_set(body, "files", json_incref(files));
	if (r == 0)
		r = body_set(body, "symlinks", json_incref(links));
	json_decref(files);
	json_decref(links);
	json_decref(exec);
	if (r < 0) {
		json_decref(body);
		return r;
	}
	*ret = body;
	return 0;
}

int manifest_canonical(const struct manifest *m, char **ret_text)
{
	json_t *body;
	int r = manifest_body(m, &body);

	if (r < 0)
		return r;
	/* The contract: compact, keys sorted, UTF-8 as is. json_dump_str, not json_dumps: jansson
	 * 2.14's can return damaged text (a key's quote dropped) when an allocation fails in it. */
	r = json_dump_str(body, JSON_COMPACT | JSON_SORT_KEYS, ret_text);
	json_decref(body);
	return r;
}

/* On failure m->digest is left empty: an earlier or half-written digest must not vouch for it. */
int manifest_digest(struct manifest *m)
{
	char *text;
	int r = manifest_canonical(m, &text);

	if (r == 0) {
		r = sha256_hex(text, strlen(text), m->digest);
		free(text);
	}
	if (r < 0)
		m->digest[0] = '\0';
	return r;
}

json_t *manifest_json(const struct manifest *m)
{
	json_t *doc = NULL;

	if (manifest_body(m, &doc) < 0)
		return NULL;
	if (body_set(doc, "source", json_string(m->source ? m->source : "")) < 0 ||
	    body_set(doc, "digest", json_string(m->digest)) < 0) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

/* ---- the walk ---------------------------------------------------------------------------- */

#define BUNDLE_READ_CHUNK (256 * 1024)

struct walker {
	struct bundle_limits lim;
	bool hash;
	int srcfd;
	char src_real[PATH_MAX];
	struct manifest *m;
	struct diag *d;
	uint64_t entries, total;
	char *chunk;
	bool oom, over, stop; /* over: a limit was exceeded; stop: a global one, walk no further */
};

static int openat2_beneath(int dirfd, const char *path, int flags, unsigned long long resolve)
{
	struct open_how how = { .flags = (unsigned long long)flags, .resolve = resolve };

	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/* Hash exactly `size` bytes of fd: -ESTALE when the file turns out shorter or longer. */
static int hash_fd(int fd, uint64_t size, char *chunk, char *out)
{
	struct sha256 h;
	uint64_t left = size;
	int r = sha256_init(&h);

	while (r == 0) {
		/* Ask for one byte more than is left, so a file that grew is seen without reading on. */
		size_t want = left < BUNDLE_READ_CHUNK ? (size_t)left + 1 : BUNDLE_READ_CHUNK;
		ssize_t n = read(fd, chunk, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			r = -errno;
		else if ((uint64_t)n > left || (n == 0 && left))
			r = -ESTALE;
		if (n <= 0 || r < 0)
			break;
		left -= (uint64_t)n;
		r = sha256_update(&h, chunk, (size_t)n);
	}
	if (r < 0) {
		sha256_free(&h);
		return r;
	}
	return sha256_final_hex(&h, out);
}

/* A limit was exceeded (the caller said where); a global one (count, total) stops the walk. */
static void over_limit(struct walker *w, bool global)
{
	w->over = true;
	w->stop = w->stop || global;
}

static bool same_inode(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size;
}

static void walk_file(struct walker *w, int dirfd, const char *name, const char *rel, const struct stat *st)
{
	char sum[SHA256_HEX_LEN + 1] = "";
	struct bundle_file *f;
	struct stat fst;
	int fd, r;

	/* Another name of the same inode may lie outside the bundle's source (or in it, where the
	 * agent can write): its content could change between the walk and the copy, unseen. */
	if (st->st_nlink > 1) {
		bundle_diag(w->d,
			    "%s: hard-linked file (%ju links) is not allowed: it can be changed through "
			    "another name",
			    rel, (uintmax_t)st->st_nlink);
		return;
	}
	if ((uint64_t)st->st_size > w->lim.max_file_bytes) {
		bundle_diag(w->d, "%s: %ju bytes, over the file size limit of %ju (--max-file-size)", rel,
			    (uintmax_t)st->st_size, (uintmax_t)w->lim.max_file_bytes);
		over_limit(w, false);
		return;
	}
	w->total += (uint64_t)st->st_size;
	if (w->total > w->lim.max_total_bytes) {
		bundle_diag(w->d,
			    "%s: the files add up to more than the total size limit of %ju bytes "
			    "(--max-total-size)",
			    rel, (uintmax_t)w->lim.max_total_bytes);
		over_limit(w, true);
		return;
	}
	if (w->hash) {
		fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0) {
			r = errno;
			bundle_diag(w->d, "%s: cannot open: %s", rel, strerror(r));
			return;
		}
		r = fstat(fd, &fst) < 0   ? -errno :
		    !same_inode(st, &fst) ? -ESTALE :
					    hash_fd(fd, (uint64_t)st->st_size, w->chunk, sum);
		close(fd);
		if (r < 0) {
			bundle_diag(w->d, "%s: %s", rel, r == -ESTALE ? "changed while it was walked" : strerror(-r));
			return;
		}
	}
	if (manifest_add_file(w->m, rel, sum) < 0) {
		w->oom = true;
		return;
	}
	f = &w->m->files[w->m->nfiles - 1];
	f->exec = (st->st_mode & S_IXUSR) != 0;
	f->walked = true;
	f->size = (uint64_t)st->st_size;
	f->dev = (uint64_t)st->st_dev;
	f->ino = (uint64_t)st->st_ino;
	f->mtime = st->st_mtim;
	f->ctime = st->st_ctim;
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
		return errno == ENOENT ? "broken symlink" :
		       errno == ELOOP  ? "symlink loop" :
		       errno == EXDEV  ? "symlink escapes the source tree on disk" :
					 strerror(errno);
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
	if (!allowed_top(w->lim.rules, inside, slash ? (size_t)(slash - inside) : strlen(inside)))
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
		int e = errno;

		bundle_diag(w->d, "%s: cannot read symlink: %s", rel, strerror(e));
		return;
	}
	target[n] = '\0';
	if (!utf8_valid(target, (size_t)n)) {
		bundle_diag(w->d, "%s: symlink target is not valid UTF-8 (-> %s)", rel, target);
		return;
	}
	if (bundle_link_lexical(w->lim.rules, rel, target, &lex, &why) == 0)
		why = link_on_disk(w, rel, where, sizeof(where));
	else if (!why)
		w->oom = true;
	free(lex);
	if (why)
		bundle_diag(w->d, "%s: %s (-> %s)", rel, why, target);
	else if (!w->oom && manifest_add_link(w->m, rel, target) < 0)
		w->oom = true;
}

static void walk_dir(struct walker *w, int dirfd, const char *rel, unsigned depth);

/* One entry of a directory (dirfd), named `name`, at `rel` from SRC. */
static void walk_entry(struct walker *w, int dirfd, const char *name, const char *rel, unsigned depth)
{
	const char *pat;
	struct stat st;
	int fd, e;

	if (w->stop)
		return;
	if (++w->entries > w->lim.max_files) {
		bundle_diag(w->d, "%s: more than %ju entries (files, symlinks and directories; --max-files)", rel,
			    (uintmax_t)w->lim.max_files);
		over_limit(w, true);
		return;
	}
	if (!utf8_valid(name, strlen(name))) {
		bundle_diag(w->d, "%s: name is not valid UTF-8", rel);
		return;
	}
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		e = errno;
		bundle_diag(w->d, "%s: %s", rel, strerror(e));
		return;
	}
	if ((pat = bundle_denied(w->lim.rules, name, S_ISDIR(st.st_mode)))) {
		bundle_diag(w->d, "%s: hidden grading material is not allowed (matches '%s')", rel, pat);
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		if (depth >= w->lim.max_depth) {
			bundle_diag(w->d, "%s: nested deeper than %u directories (--max-depth)", rel, w->lim.max_depth);
			over_limit(w, false);
			return;
		}
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			e = errno;
			bundle_diag(w->d, "%s: %s", rel, strerror(e));
			return;
		}
		walk_dir(w, fd, rel, depth + 1); /* takes fd */
	} else if (S_ISREG(st.st_mode)) {
		walk_file(w, dirfd, name, rel, &st);
	} else if (S_ISLNK(st.st_mode)) {
		walk_link(w, dirfd, name, rel);
	} else {
		bundle_diag(w->d, "%s: special file (fifo, socket or device) is not allowed", rel);
	}
}

static void walk_dir(struct walker *w, int dirfd, const char *rel, unsigned depth)
{
	struct strv names = { 0 };
	struct dirent *e;
	DIR *dp = fdopendir(dirfd);

	if (!dp) {
		int err = errno;

		bundle_diag(w->d, "%s: %s", rel, strerror(err));
		close(dirfd);
		return;
	}
	/* Read no more names than the entry limit leaves room for (plus one, to report it). */
	while (!w->oom && (e = readdir(dp)) && w->entries + names.n <= w->lim.max_files)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strv_push(&names, e->d_name) < 0)
			w->oom = true;
	strv_sort(&names);
	for (size_t i = 0; i < names.n && !w->oom && !w->stop; i++) {
		char *child = NULL;

		if (asprintf(&child, "%s/%s", rel, names.v[i]) < 0) {
			w->oom = true;
			break;
		}
		walk_entry(w, dirfd, names.v[i], child, depth);
		free(child);
	}
	strv_free(&names);
	closedir(dp);
}

int bundle_walk_limited(const char *src, const struct bundle_limits *lim, bool hash, struct diag *d,
			struct manifest **ret)
{
	struct walker w = { .hash = hash, .d = d, .srcfd = -1 };
	size_t errors_before = d->errors;
	int r = 0;

	bundle_limits_resolve(lim, &w.lim);
	w.m = calloc(1, sizeof(*w.m));
	w.chunk = hash ? malloc(BUNDLE_READ_CHUNK) : NULL;
	if (!w.m || (hash && !w.chunk)) {
		r = -ENOMEM;
		goto out;
	}
	w.srcfd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w.srcfd < 0 || !realpath(src, w.src_real)) {
		r = -errno;
		bundle_diag(d, "%s: %s", src, strerror(-r));
		goto out;
	}
	w.m->source = strdup(w.src_real);
	for (size_t i = 0; i < w.lim.rules->nallow && !w.oom && !w.stop; i++)
		if (faccessat(w.srcfd, w.lim.rules->allow[i], F_OK, AT_SYMLINK_NOFOLLOW) == 0)
			walk_entry(&w, w.srcfd, w.lim.rules->allow[i], w.lim.rules->allow[i], 0);
	if (w.oom || !w.m->source)
		r = -ENOMEM;
	else if (w.over)
		r = -EFBIG;
	else if (d->errors > errors_before)
		r = -EINVAL;
	if (r == 0)
		manifest_sort(w.m);
	if (r == 0 && hash)
		r = manifest_digest(w.m);
out:
	if (w.srcfd >= 0)
		close(w.srcfd);
	free(w.chunk);
	if (r < 0) {
		manifest_free(w.m);
		return r;
	}
	*ret = w.m;
	return 0;
}

int bundle_walk(const char *src, const struct bundle_rules *rules, struct diag *d, struct manifest **ret)
{
	struct bundle_limits lim = { .rules = rules };

	return bundle_walk_limited(src, &lim, true, d, ret);
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

/* A name the walk could have written: relative, no empty, "." or ".." component, no trailing
 * slash. Anything else would let a forged manifest point verify outside the bundle. */
static bool clean_rel(const char *rel)
{
	const char *c = rel;

	if (!*rel || *rel == '/')
		return false;
	for (;;) {
		size_t n = strcspn(c, "/");

		if (!n || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		if (!c[n])
			return true;
		c += n + 1;
	}
}

static int manifest_from_json(const char *path, json_t *root, struct diag *d, struct manifest *m)
{
	json_t *files = json_object_get(root, "files"), *links = json_object_get(root, "symlinks");
	json_t *digest = json_object_get(root, "digest"), *source = json_object_get(root, "source"), *v;
	const char *k;

	if (!json_is_object(files) || !json_is_object(links) || !json_is_string(digest) ||
	    !is_sha256_hex(json_string_value(digest)) || (source && !json_is_string(source))) {
		bundle_diag(d, "%s: not a bundle manifest: needs \"files\" and \"symlinks\" objects and a \"digest\"",
			    path);
		return -EINVAL;
	}
	json_object_foreach(files, k, v) {
		if (!clean_rel(k)) {
			bundle_diag(d, "%s: files[\"%s\"]: not a relative name inside the bundle", path, k);
			return -EINVAL;
		}
		if (!json_is_string(v) || !is_sha256_hex(json_string_value(v))) {
			bundle_diag(d, "%s: files[\"%s\"]: must be a SHA-256 in lowercase hex", path, k);
			return -EINVAL;
		}
		if (manifest_add_file(m, k, json_string_value(v)) < 0)
			return -ENOMEM;
	}
	json_object_foreach(links, k, v) {
		if (!clean_rel(k) || json_object_get(files, k)) {
			bundle_diag(d, "%s: symlinks[\"%s\"]: not a relative name inside the bundle, or also a file",
				    path, k);
			return -EINVAL;
		}
		if (!json_is_string(v)) {
			bundle_diag(d, "%s: symlinks[\"%s\"]: must be a string", path, k);
			return -EINVAL;
		}
		if (manifest_add_link(m, k, json_string_value(v)) < 0)
			return -ENOMEM;
	}
	m->source = strdup(source ? json_string_value(source) : "");
	return m->source ? 0 : -ENOMEM;
}

/* "executable" (optional; manifests before it have none): each a declared file. m is sorted. */
static int manifest_exec_from_json(const char *path, json_t *root, struct diag *d, struct manifest *m)
{
	json_t *exec = json_object_get(root, "executable"), *v;
	size_t i;

	if (exec && !json_is_array(exec)) {
		bundle_diag(d, "%s: executable: must be a list of file names", path);
		return -EINVAL;
	}
	json_array_foreach(exec, i, v) {
		struct bundle_file *f =
			json_is_string(v) ? (struct bundle_file *)manifest_file(m, json_string_value(v)) : NULL;

		if (!f) {
			bundle_diag(d, "%s: executable[%zu]: must name a file in \"files\"", path, i);
			return -EINVAL;
		}
		f->exec = true;
	}
	return 0;
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
		r = manifest_exec_from_json(path, root, d, m);
	}
	if (r == 0 && (r = manifest_digest(m)) < 0)
		bundle_diag(d, "%s: cannot compute the manifest's digest: %s", path, strerror(-r));
	if (r == 0 && strcmp(stored, m->digest)) {
		bundle_diag(d, "%s: the manifest's digest does not match its contents (was it edited?)", path);
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
