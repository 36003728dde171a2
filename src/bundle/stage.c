/* SPDX-License-Identifier: MIT */
/* stage.c: copy into the bundle, make it read-only, verify it; clean up on failure. */
#include "stage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/fd.h"
#include "../lib/json.h"
#include "../lib/strv.h"

#define STAGE_CHUNK (1024 * 1024)

extern char **environ;

char *bundle_manifest_path(const char *dest)
{
	size_t n = strlen(dest);
	char *p;

	while (n > 1 && dest[n - 1] == '/')
		n--;
	return asprintf(&p, "%.*s.manifest.json", (int)n, dest) < 0 ? NULL : p;
}

static int open_beneath(int dirfd, const char *rel, int flags, mode_t mode)
{
	struct open_how how = { .flags = (unsigned long long)flags, .mode = mode,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	int fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));

	return fd < 0 ? -errno : fd;
}

/* Create every parent directory of rel under dirfd (0700 while staging). */
static int mkdir_parents(int dirfd, const char *rel)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s", rel) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	for (char *s = strchr(path, '/'); s; s = strchr(s + 1, '/')) {
		struct stat st;

		*s = '\0';
		if (mkdirat(dirfd, path, 0700) < 0 && errno != EEXIST)
			return -errno;
		if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
			return -ENOTDIR;
		*s = '/';
	}
	return 0;
}

/* Copy one file, hashing what is written; the hash must be the manifest's. */
static int copy_file(int srcfd, int destfd, const struct bundle_file *f, char *chunk, struct diag *d)
{
	char sum[SHA256_HEX_LEN + 1];
	struct sha256 h;
	struct stat st;
	int in, out, r;

	in = open_beneath(srcfd, f->rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0);
	if (in < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
		diag_error(d, "%s: changed between the walk and the copy (no longer a regular file reached "
			      "without symlinks)", f->rel);
		if (in >= 0)
			close(in);
		return -ESTALE;
	}
	out = open_beneath(destfd, f->rel, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0) {
		diag_error(d, "%s: cannot create in the bundle: %s", f->rel, strerror(-out));
		close(in);
		return out;
	}
	r = sha256_init(&h);
	while (r == 0) {
		ssize_t n = read(in, chunk, STAGE_CHUNK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : 0;
			break;
		}
		r = sha256_update(&h, chunk, (size_t)n);
		if (r == 0)
			r = fd_write_all(out, chunk, (size_t)n);
	}
	r = r == 0 ? sha256_final_hex(&h, sum) : (sha256_free(&h), r);
	close(in);
	if (close(out) < 0 && r == 0)
		r = -errno;
	if (r < 0)
		diag_error(d, "%s: copy failed: %s", f->rel, strerror(-r));
	else if (strcmp(sum, f->sha256)) {
		diag_error(d, "%s: changed between the walk and the copy (its SHA-256 is not the manifest's)", f->rel);
		r = -ESTALE;
	}
	return r;
}

/* A test seam, documented in proctor-bundle(1): run PROCTOR_BUNDLE_TEST_HOOK (an absolute path,
 * no shell) after the walk and before the copy, so tests can change the source in between. */
static void test_hook(void)
{
	const char *hook = getenv("PROCTOR_BUNDLE_TEST_HOOK");
	char *argv[2] = { (char *)hook, NULL };
	pid_t pid;
	int st;

	if (hook && hook[0] == '/' && posix_spawn(&pid, hook, NULL, NULL, argv, environ) == 0)
		waitpid(pid, &st, 0);
}

/* Remove everything below dirfd (restoring write permission where we made it read-only). */
static void rm_below(int dirfd)
{
	DIR *dp;
	struct dirent *e;
	int dup_fd = dup(dirfd);

	if (dup_fd < 0 || !(dp = fdopendir(dup_fd))) {
		if (dup_fd >= 0)
			close(dup_fd);
		return;
	}
	fchmod(dirfd, 0700);
	while ((e = readdir(dp))) {
		struct stat st;
		int sub;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
			sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0) {
				rm_below(sub);
				close(sub);
			}
			unlinkat(dirfd, e->d_name, AT_REMOVEDIR);
		} else {
			unlinkat(dirfd, e->d_name, 0);
		}
	}
	closedir(dp);
}

/* Modes 0444/0555 below and at dirfd, owner root:root when we are root; directories last, so
 * the walk can still enter them. */
static int make_readonly(int dirfd)
{
	struct dirent *e;
	int dup_fd = dup(dirfd), r = 0;
	DIR *dp = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	bool root = geteuid() == 0;

	if (!dp) {
		if (dup_fd >= 0)
			close(dup_fd);
		return -errno;
	}
	while (r == 0 && (e = readdir(dp))) {
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (root && fchownat(dirfd, e->d_name, 0, 0, AT_SYMLINK_NOFOLLOW) < 0)
			r = -errno;
		if (r == 0 && S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			r = sub < 0 ? -errno : make_readonly(sub);
			if (sub >= 0)
				close(sub);
		} else if (r == 0 && S_ISREG(st.st_mode) && fchmodat(dirfd, e->d_name, BUNDLE_FILE_MODE, 0) < 0) {
			r = -errno;
		}
	}
	closedir(dp);
	if (r == 0 && root && fchown(dirfd, 0, 0) < 0)
		r = -errno;
	if (r == 0 && fchmod(dirfd, BUNDLE_DIR_MODE) < 0)
		r = -errno;
	return r;
}

static int write_manifest(const char *path, const struct manifest *m)
{
	json_t *doc = manifest_json(m);
	char *text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
	int fd, r = -ENOMEM;

	json_decref(doc);
	if (!text)
		return r;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	r = fd < 0 ? -errno : fd_write_all(fd, text, strlen(text));
	if (r == 0)
		r = fd_write_all(fd, "\n", 1);
	if (r == 0 && geteuid() == 0 && fchown(fd, 0, 0) < 0)
		r = -errno;
	if (r == 0 && (fchmod(fd, BUNDLE_FILE_MODE) < 0 || fsync(fd) < 0))
		r = -errno;
	if (fd >= 0)
		close(fd);
	free(text);
	return r;
}

/* DEST must be absent (created, 0700 while staging) or an empty directory. */
static int dest_prepare(const char *dest, bool *ret_created, struct diag *d)
{
	struct stat st;
	DIR *dp;
	struct dirent *e;
	bool empty = true;

	*ret_created = false;
	if (lstat(dest, &st) < 0) {
		if (errno != ENOENT || mkdir(dest, 0700) < 0) {
			diag_error(d, "%s: %s", dest, strerror(errno));
			return -errno;
		}
		*ret_created = true;
		return 0;
	}
	if (!S_ISDIR(st.st_mode) || !(dp = opendir(dest))) {
		diag_error(d, "%s: exists and is not a directory", dest);
		return -ENOTDIR;
	}
	while ((e = readdir(dp)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = false;
	closedir(dp);
	if (!empty) {
		diag_error(d, "%s: exists and is not empty; refusing to stage into it", dest);
		return -ENOTEMPTY;
	}
	return 0;
}

static int stage_copy(int srcfd, int destfd, const struct manifest *m, struct diag *d)
{
	char *chunk = malloc(STAGE_CHUNK);
	int r = chunk ? 0 : -ENOMEM;

	test_hook();
	for (size_t i = 0; r == 0 && i < m->nfiles; i++) {
		r = mkdir_parents(destfd, m->files[i].rel);
		if (r == 0)
			r = copy_file(srcfd, destfd, &m->files[i], chunk, d);
		else
			diag_error(d, "%s: cannot create its directory: %s", m->files[i].rel, strerror(-r));
	}
	for (size_t i = 0; r == 0 && i < m->nlinks; i++) {
		r = mkdir_parents(destfd, m->links[i].rel);
		if (r == 0 && symlinkat(m->links[i].target, destfd, m->links[i].rel) < 0)
			r = -errno;
		if (r < 0)
			diag_error(d, "%s: cannot create the symlink: %s", m->links[i].rel, strerror(-r));
	}
	free(chunk);
	return r;
}

int bundle_stage(const char *src, const char *dest, const struct manifest *m, struct diag *d)
{
	char *mpath = bundle_manifest_path(dest);
	bool created = false, wrote_manifest = false;
	struct bundle_drift drift;
	int srcfd = -1, destfd = -1, r;

	if (!mpath)
		return -ENOMEM;
	if (access(mpath, F_OK) == 0 || errno != ENOENT) {
		diag_error(d, "%s: already exists; refusing to overwrite it", mpath);
		free(mpath);
		return -EEXIST;
	}
	r = dest_prepare(dest, &created, d);
	if (r < 0) {
		free(mpath);
		return r;
	}
	srcfd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	destfd = open(dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	r = srcfd < 0 || destfd < 0 ? -errno : stage_copy(srcfd, destfd, m, d);
	if (r == 0 && (r = write_manifest(mpath, m)) < 0)
		diag_error(d, "%s: cannot write: %s", mpath, strerror(-r));
	wrote_manifest = r == 0;
	if (r == 0 && (r = make_readonly(destfd)) < 0)
		diag_error(d, "%s: cannot make it read-only: %s", dest, strerror(-r));
	if (r == 0 && bundle_verify(dest, m, d, &drift) != 0)
		r = -EIO;
	if (r < 0 && destfd >= 0) {
		/* Nothing half written: the bundle goes (or is emptied, if it was there), and its manifest. */
		rm_below(destfd);
		if (created)
			rmdir(dest);
		else
			fchmod(destfd, 0755);
		if (wrote_manifest)
			unlink(mpath);
	}
	if (srcfd >= 0)
		close(srcfd);
	if (destfd >= 0)
		close(destfd);
	free(mpath);
	return r;
}

/* ---- verify ------------------------------------------------------------------------------ */

struct verify_run {
	const struct manifest *m;
	struct diag *d;
	struct bundle_drift *drift;
	struct strv seen_dirs; /* directories on disk, to find undeclared ones */
	char *chunk;
	size_t entries;
};

/* One drift finding: counted always, spelled out for the first few of its kind. */
static void drift_note(struct verify_run *v, size_t *counter, const char *kind, const char *rel, const char *extra)
{
	if ((*counter)++ < BUNDLE_DRIFT_EXAMPLES)
		diag_error(v->d, "%s: %s%s", kind, rel, extra ? extra : "");
}

/* Is `dir` a parent of something the manifest declares? Entries are sorted, so the first one
 * not below "dir/" in order tells (a binary search, not a scan per directory). */
static bool has_prefix_sorted(const void *base, size_t n, size_t size, const char *prefix)
{
	size_t lo = 0, hi = n, pl = strlen(prefix);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *rel = *(char *const *)((const char *)base + mid * size);

		if (strcmp(rel, prefix) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && !strncmp(*(char *const *)((const char *)base + lo * size), prefix, pl);
}

static bool declared_dir(const struct manifest *m, const char *dir)
{
	char prefix[PATH_MAX];

	if (snprintf(prefix, sizeof(prefix), "%s/", dir) >= (int)sizeof(prefix))
		return false;
	return has_prefix_sorted(m->files, m->nfiles, sizeof(*m->files), prefix) ||
	       has_prefix_sorted(m->links, m->nlinks, sizeof(*m->links), prefix);
}

static void verify_file(struct verify_run *v, int dirfd, const char *name, const char *rel, const struct stat *st)
{
	const struct bundle_file *f = manifest_file(v->m, rel);
	char sum[SHA256_HEX_LEN + 1];
	struct sha256 h;
	int fd, r;

	if (!f) {
		drift_note(v, &v->drift->undeclared, "undeclared", rel, manifest_link(v->m, rel) ?
			   " (a symlink replaced by a file)" : NULL);
		return;
	}
	if ((st->st_mode & 07777) != BUNDLE_FILE_MODE)
		drift_note(v, &v->drift->modes, "mode drift", rel, " (not 0444)");
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	r = fd < 0 ? -errno : sha256_init(&h);
	while (r == 0) {
		ssize_t n = read(fd, v->chunk, STAGE_CHUNK);

		if (n <= 0) {
			r = n < 0 ? -errno : 0;
			break;
		}
		r = sha256_update(&h, v->chunk, (size_t)n);
	}
	if (fd >= 0)
		r = r == 0 ? sha256_final_hex(&h, sum) : (sha256_free(&h), r);
	if (fd >= 0)
		close(fd);
	if (r < 0 || strcmp(sum, f->sha256))
		drift_note(v, &v->drift->changed, "changed", rel, r < 0 ? " (unreadable)" : NULL);
}

static void verify_link(struct verify_run *v, int dirfd, const char *name, const char *rel)
{
	const struct bundle_link *l = manifest_link(v->m, rel);
	char target[PATH_MAX];
	ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);

	if (!l) {
		drift_note(v, manifest_file(v->m, rel) ? &v->drift->changed : &v->drift->undeclared,
			   manifest_file(v->m, rel) ? "changed" : "undeclared", rel,
			   manifest_file(v->m, rel) ? " (a file replaced by a symlink)" : " (symlink)");
		return;
	}
	target[n < 0 ? 0 : n] = '\0';
	if (n < 0 || strcmp(target, l->target))
		drift_note(v, &v->drift->links, "symlink drift", rel, " (target changed)");
}

static void verify_dir(struct verify_run *v, int dirfd, const char *rel, int depth);

static void verify_entry(struct verify_run *v, int dirfd, const char *name, const char *rel, int depth)
{
	struct stat st;

	if (++v->entries > BUNDLE_MAX_ENTRIES || fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		int sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if ((st.st_mode & 07777) != BUNDLE_DIR_MODE)
			drift_note(v, &v->drift->modes, "mode drift", rel, " (directory not 0555)");
		if (manifest_file(v->m, rel) || manifest_link(v->m, rel))
			drift_note(v, &v->drift->changed, "changed", rel, " (replaced by a directory)");
		else if (!declared_dir(v->m, rel))
			drift_note(v, &v->drift->undeclared, "undeclared", rel, " (directory)");
		if (sub >= 0 && depth < BUNDLE_MAX_DEPTH)
			verify_dir(v, sub, rel, depth + 1); /* takes sub */
		else if (sub >= 0)
			close(sub);
	} else if (S_ISREG(st.st_mode)) {
		verify_file(v, dirfd, name, rel, &st);
	} else if (S_ISLNK(st.st_mode)) {
		verify_link(v, dirfd, name, rel);
	} else {
		drift_note(v, &v->drift->undeclared, "undeclared", rel, " (special file)");
	}
}

static void verify_dir(struct verify_run *v, int dirfd, const char *rel, int depth)
{
	DIR *dp = fdopendir(dirfd);
	struct dirent *e;

	if (!dp) {
		close(dirfd);
		return;
	}
	while ((e = readdir(dp))) {
		char *child = NULL;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (asprintf(&child, "%s%s%s", rel, *rel ? "/" : "", e->d_name) < 0)
			break;
		verify_entry(v, dirfd, e->d_name, child, depth);
		free(child);
	}
	closedir(dp);
}

/* Declared entries that are not on disk at all. */
static void verify_missing(struct verify_run *v, int destfd)
{
	struct stat st;

	for (size_t i = 0; i < v->m->nfiles; i++)
		if (fstatat(destfd, v->m->files[i].rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
			drift_note(v, &v->drift->missing, "missing", v->m->files[i].rel, NULL);
	for (size_t i = 0; i < v->m->nlinks; i++)
		if (fstatat(destfd, v->m->links[i].rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
			drift_note(v, &v->drift->missing, "missing", v->m->links[i].rel, " (symlink)");
}

int bundle_verify(const char *dest, const struct manifest *m, struct diag *d, struct bundle_drift *ret)
{
	struct verify_run v = { .m = m, .d = d, .drift = ret };
	struct stat st;
	int destfd = open(dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	memset(ret, 0, sizeof(*ret));
	if (destfd < 0) {
		diag_error(d, "%s: %s", dest, strerror(errno));
		return -errno;
	}
	v.chunk = malloc(STAGE_CHUNK);
	if (!v.chunk) {
		close(destfd);
		return -ENOMEM;
	}
	if (fstat(destfd, &st) == 0 && (st.st_mode & 07777) != BUNDLE_DIR_MODE)
		drift_note(&v, &ret->modes, "mode drift", ".", " (directory not 0555)");
	verify_missing(&v, destfd);
	verify_dir(&v, dup(destfd), "", 0);
	close(destfd);
	free(v.chunk);
	strv_free(&v.seen_dirs);
	return ret->missing + ret->undeclared + ret->changed + ret->links + ret->modes ? 1 : 0;
}
