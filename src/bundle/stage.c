/* SPDX-License-Identifier: MIT */
/* stage.c: copy into the bundle (hashing each byte once, as it is copied), make it read-only,
 * verify it; clean up on failure.
 *
 * The copy finds each file again as the very inode the walk saw (device, inode, size, mtime,
 * ctime; one link), reached beneath SRC without a symlink on the way, and copies at most the size
 * the walk saw, so what the limits allowed is what is written. Verification after staging is
 * structural (entries, types, sizes, modes, symlink targets, and where every symlink resolves
 * inside the staged tree) and does not hash again: the hashes are of the bytes written, in a
 * directory only we can write to. `proctor bundle verify` hashes everything. */
#include "stage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
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

/* Small enough that the bytes just read are still in cache when they are hashed and written. */
#define STAGE_CHUNK (256 * 1024)
/* Copiers working on contiguous shares of the sorted file list: hashing is most of the CPU time
 * of a copy, and a second core hides it. Fewer files than STAGE_FILES_PER_THREAD: one. */
#define STAGE_MAX_THREADS 4
#define STAGE_FILES_PER_THREAD 64

extern char **environ;

char *bundle_manifest_path(const char *dest)
{
	size_t n = strlen(dest);
	char *p;

	while (n > 1 && dest[n - 1] == '/')
		n--;
	return asprintf(&p, "%.*s.manifest.json", (int)n, dest) < 0 ? NULL : p;
}

static int openat2_fd(int dirfd, const char *rel, int flags, unsigned long long resolve)
{
	struct open_how how = { .flags = (unsigned long long)flags, .resolve = resolve };
	int fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));

	return fd < 0 ? -errno : fd;
}

/* A directory below dirfd reached without any symlink on the way, never leaving dirfd. */
static int open_dir_beneath(int dirfd, const char *rel)
{
	return openat2_fd(dirfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
			  RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

/* A new open file description of the directory fd, close-on-exec. Not dup(): a duplicate shares
 * the directory offset, so after one readdir pass to the end (make_readonly, verify) the next
 * pass over a dup (rm_below, on failure) would see nothing and leave the bundle behind. */
static int reopen_dir(int fd)
{
	int r = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	return r < 0 ? -errno : r;
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

/* The copy's state: the roots, and the directories of the last entry on both sides (entries are
 * sorted, so most files share their directory with the one before). */
struct stager {
	int srcfd, destfd;
	struct diag *d;
	char *chunk;
	bool root;                 /* fchown each file to root:root */
	struct bundle_file *files; /* this copier's share */
	size_t nfiles;
	atomic_int *failed; /* any copier failed: the others stop */
	int r;
	char dir[PATH_MAX]; /* rel of the cached directories; "" for none */
	size_t dirlen;
	int src_dir, dest_dir; /* -1 when not open */
};

static void stager_close_dirs(struct stager *s)
{
	if (s->src_dir >= 0 && s->src_dir != s->srcfd)
		close(s->src_dir);
	if (s->dest_dir >= 0 && s->dest_dir != s->destfd)
		close(s->dest_dir);
	s->src_dir = s->dest_dir = -1;
	s->dir[0] = '\0';
	s->dirlen = 0;
}

/* Make the directories of `rel` current: created on the DEST side, opened on both (the SRC side
 * only when want_src). *ret_base is rel's last component. */
static int stager_enter(struct stager *s, const char *rel, bool want_src, const char **ret_base)
{
	const char *slash = strrchr(rel, '/');
	size_t n = slash ? (size_t)(slash - rel) : 0;
	int r;

	*ret_base = slash ? slash + 1 : rel;
	if (s->dest_dir >= 0 && n == s->dirlen && !memcmp(rel, s->dir, n) && (!want_src || s->src_dir >= 0))
		return 0;
	stager_close_dirs(s);
	if (n >= sizeof(s->dir))
		return -ENAMETOOLONG;
	memcpy(s->dir, rel, n);
	s->dir[n] = '\0';
	s->dirlen = n;
	if (!n) {
		s->src_dir = s->srcfd;
		s->dest_dir = s->destfd;
		return 0;
	}
	r = mkdir_parents(s->destfd, rel);
	if (r == 0)
		r = s->dest_dir = open_dir_beneath(s->destfd, s->dir);
	if (r >= 0 && want_src)
		r = s->src_dir = open_dir_beneath(s->srcfd, s->dir);
	if (r < 0)
		stager_close_dirs(s);
	return r < 0 ? r : 0;
}

static bool same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* Is `st` the inode the walk saw, unchanged since? */
static bool as_walked(const struct bundle_file *f, const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_nlink == 1 && (uint64_t)st->st_dev == f->dev &&
	       (uint64_t)st->st_ino == f->ino && (uint64_t)st->st_size == f->size &&
	       same_time(&st->st_mtim, &f->mtime) && same_time(&st->st_ctim, &f->ctime);
}

/* Copy exactly f->size bytes from in to out, hashing them. -ESTALE when the file is not that long. */
static int copy_bytes(struct stager *s, int in, int out, const struct bundle_file *f, char *sum)
{
	struct sha256 h;
	uint64_t left = f->size;
	int r = sha256_init(&h);

	while (r == 0) {
		/* One byte more than is left, so a file that grew is seen without reading on. */
		size_t want = left < STAGE_CHUNK ? (size_t)left + 1 : STAGE_CHUNK;
		ssize_t n = read(in, s->chunk, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if ((uint64_t)n > left || (n == 0 && left)) {
			r = -ESTALE;
			break;
		}
		left -= (uint64_t)n;
		r = sha256_update(&h, s->chunk, (size_t)n);
		if (r == 0)
			r = fd_write_all(out, s->chunk, (size_t)n);
		/* A short read that completes the size is the end: fstat after the copy catches growth. */
		if (n == 0 || (!left && (size_t)n < want))
			break;
	}
	if (r < 0) {
		sha256_free(&h);
		return r;
	}
	return sha256_final_hex(&h, sum);
}

static int copy_fail(struct stager *s, const struct bundle_file *f, int r)
{
	if (r == -ESTALE)
		bundle_diag(s->d,
			    "%s: changed between the walk and the copy (not the same unchanged regular file, "
			    "with one link, reached without symlinks)",
			    f->rel);
	else
		bundle_diag(s->d, "%s: copy failed: %s", f->rel, strerror(-r));
	return r;
}

/* Copy one file as the walk saw it, hashing what is written: into f->sha256 when it is empty,
 * else it must match. Mode 0444 (0555 when executable), owner root when we are root. */
static int copy_file(struct stager *s, struct bundle_file *f)
{
	char sum[SHA256_HEX_LEN + 1];
	const char *base;
	struct stat st;
	int in = -1, out = -1, r;

	if (!f->walked)
		return copy_fail(s, f, -EINVAL); /* no size to hold the copy to: never copy unbounded */
	r = stager_enter(s, f->rel, true, &base);
	if (r < 0)
		return copy_fail(s, f, r == -ELOOP || r == -ENOTDIR || r == -EXDEV || r == -ENOENT ? -ESTALE : r);
	in = openat(s->src_dir, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (in < 0 || fstat(in, &st) < 0 || !as_walked(f, &st)) {
		r = -ESTALE;
		goto out;
	}
	out = openat(s->dest_dir, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0) {
		r = -errno;
		goto out;
	}
	r = copy_bytes(s, in, out, f, sum);
	if (r == 0 && (fstat(in, &st) < 0 || !as_walked(f, &st)))
		r = -ESTALE; /* written to while we copied it */
	if (r == 0 && s->root && fchown(out, 0, 0) < 0)
		r = -errno;
	if (r == 0 && fchmod(out, f->exec ? BUNDLE_EXEC_MODE : BUNDLE_FILE_MODE) < 0)
		r = -errno;
out:
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) < 0 && r == 0)
		r = -errno;
	if (r < 0)
		return copy_fail(s, f, r);
	if (!f->sha256[0])
		memcpy(f->sha256, sum, sizeof(sum));
	else if (strcmp(sum, f->sha256))
		return copy_fail(s, f, -ESTALE);
	return 0;
}

static int make_link(struct stager *s, const struct bundle_link *l)
{
	const char *base;
	int r = stager_enter(s, l->rel, false, &base);

	if (r == 0 && symlinkat(l->target, s->dest_dir, base) < 0)
		r = -errno;
	if (r < 0)
		bundle_diag(s->d, "%s: cannot create the symlink: %s", l->rel, strerror(-r));
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
	int dup_fd = reopen_dir(dirfd);

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

/* Directories 0555, owner root when we are root, deepest first so the walk can still enter them
 * (files got their mode and owner as they were copied; symlinks are ours already). */
static int make_readonly(int dirfd, bool root)
{
	struct dirent *e;
	int dup_fd = reopen_dir(dirfd), r = 0;
	DIR *dp = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;

	if (!dp) {
		r = dup_fd < 0 ? dup_fd : -errno;
		if (dup_fd >= 0)
			close(dup_fd);
		return r;
	}
	while (r == 0 && (e = readdir(dp))) {
		struct stat st;
		int sub;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (e->d_type != DT_DIR &&
		    (e->d_type != DT_UNKNOWN || fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		     !S_ISDIR(st.st_mode)))
			continue;
		sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		r = sub < 0 ? -errno : make_readonly(sub, root);
		if (sub >= 0)
			close(sub);
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
	char *text = NULL;
	int fd, r = json_dump_str(doc, JSON_INDENT(2) | JSON_SORT_KEYS, &text);

	json_decref(doc);
	if (r < 0)
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
	int r;

	*ret_created = false;
	if (lstat(dest, &st) < 0) {
		r = errno == ENOENT && mkdir(dest, 0700) == 0 ? 0 : -errno;
		if (r < 0) {
			bundle_diag(d, "%s: %s", dest, strerror(-r));
			return r;
		}
		*ret_created = true;
		return 0;
	}
	if (!S_ISDIR(st.st_mode) || !(dp = opendir(dest))) {
		bundle_diag(d, "%s: exists and is not a directory", dest);
		return -ENOTDIR;
	}
	while ((e = readdir(dp)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = false;
	closedir(dp);
	if (!empty) {
		bundle_diag(d, "%s: exists and is not empty; refusing to stage into it", dest);
		return -ENOTEMPTY;
	}
	return 0;
}

static void *copier_run(void *arg)
{
	struct stager *s = arg;

	s->chunk = malloc(STAGE_CHUNK);
	s->r = s->chunk ? 0 : -ENOMEM;
	for (size_t i = 0; s->r == 0 && i < s->nfiles && !atomic_load(s->failed); i++)
		s->r = copy_file(s, &s->files[i]);
	if (s->r < 0)
		atomic_store(s->failed, 1);
	stager_close_dirs(s);
	free(s->chunk);
	return NULL;
}

/* As root, files must end up root:root. What we create under DEST already is, unless our group
 * is not 0 or DEST passes on another group (setgid, or its own group): then fchown each. */
static bool owner_needs_chown(int destfd)
{
	struct stat st;

	if (geteuid() != 0)
		return false;
	return getegid() != 0 || fstat(destfd, &st) < 0 || st.st_gid != 0 || (st.st_mode & S_ISGID);
}

static size_t copier_count(size_t nfiles)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = nfiles / STAGE_FILES_PER_THREAD;

	if (cpus > 0 && n > (size_t)cpus)
		n = (size_t)cpus;
	return n < 1 ? 1 : n > STAGE_MAX_THREADS ? STAGE_MAX_THREADS : n;
}

/* Copy the files with up to STAGE_MAX_THREADS copiers, each with its own diag (merged in file
 * order afterwards, diag is not thread-safe), then create the symlinks. */
static int stage_copy(int srcfd, int destfd, struct manifest *m, struct diag *d)
{
	struct stager cp[STAGE_MAX_THREADS];
	bool need_chown = owner_needs_chown(destfd);
	struct diag cd[STAGE_MAX_THREADS];
	pthread_t tid[STAGE_MAX_THREADS];
	bool started[STAGE_MAX_THREADS] = { false };
	size_t n = copier_count(m->nfiles), off = 0;
	atomic_int failed = 0;
	int r = 0;

	test_hook();
	for (size_t t = 0; t < n; t++) {
		size_t share = m->nfiles / n + (t < m->nfiles % n);

		diag_init(&cd[t]);
		cp[t] = (struct stager){ .srcfd = srcfd,
					 .destfd = destfd,
					 .d = &cd[t],
					 .root = need_chown,
					 .src_dir = -1,
					 .dest_dir = -1,
					 .files = m->files + off,
					 .nfiles = share,
					 .failed = &failed };
		off += share;
		if (t > 0 && pthread_create(&tid[t], NULL, copier_run, &cp[t]) == 0)
			started[t] = true;
		else if (t > 0)
			copier_run(&cp[t]); /* no thread: the work is still done, here */
	}
	copier_run(&cp[0]);
	for (size_t t = 0; t < n; t++) {
		if (started[t])
			pthread_join(tid[t], NULL);
		if (r == 0 && cp[t].r < 0)
			r = cp[t].r;
		for (size_t i = 0; i < cd[t].n; i++)
			diag_add(d, cd[t].msgs[i].level, "%s", cd[t].msgs[i].text);
		d->errors += cd[t].errors > cd[t].n ? cd[t].errors - cd[t].n : 0;
		diag_free(&cd[t]);
	}
	if (r == 0) {
		struct stager s = { .srcfd = srcfd, .destfd = destfd, .d = d, .src_dir = -1, .dest_dir = -1 };

		for (size_t i = 0; r == 0 && i < m->nlinks; i++)
			r = make_link(&s, &m->links[i]);
		stager_close_dirs(&s);
	}
	return r;
}

static int verify_tree(const char *dest, const struct manifest *m, bool hash, struct diag *d, struct bundle_drift *ret);

int bundle_stage(const char *src, const char *dest, struct manifest *m, struct diag *d)
{
	char *mpath = bundle_manifest_path(dest);
	bool created = false, wrote_manifest = false;
	struct bundle_drift drift;
	int srcfd = -1, destfd = -1, r;

	if (!mpath)
		return -ENOMEM;
	r = access(mpath, F_OK) == 0 ? -EEXIST : errno == ENOENT ? 0 : -errno;
	if (r < 0) {
		bundle_diag(d, "%s: %s; refusing to overwrite it", mpath,
			    r == -EEXIST ? "already exists" : strerror(-r));
		free(mpath);
		return r;
	}
	r = dest_prepare(dest, &created, d);
	if (r < 0) {
		free(mpath);
		return r;
	}
	srcfd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = srcfd < 0 ? -errno : 0;
	if (r < 0)
		bundle_diag(d, "%s: %s", src, strerror(-r));
	if (r == 0 && (destfd = open(dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		r = -errno;
		bundle_diag(d, "%s: %s", dest, strerror(-r));
	}
	if (r == 0)
		r = stage_copy(srcfd, destfd, m, d);
	/* The digest covers the hashes the copy just computed. */
	if (r == 0 && (r = manifest_digest(m)) < 0)
		bundle_diag(d, "%s: cannot compute the manifest's digest: %s", mpath, strerror(-r));
	if (r == 0 && (r = write_manifest(mpath, m)) < 0)
		bundle_diag(d, "%s: cannot write: %s", mpath, strerror(-r));
	wrote_manifest = r == 0;
	if (r == 0 && (r = make_readonly(destfd, geteuid() == 0)) < 0)
		bundle_diag(d, "%s: cannot make it read-only: %s", dest, strerror(-r));
	if (r == 0 && verify_tree(dest, m, false, d, &drift) != 0)
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
	} else if (r < 0 && created) {
		rmdir(dest);
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
	int rootfd;
	struct stat root;
	bool hash;
	char *chunk;
	size_t entries;
	size_t seen_files, seen_links; /* declared entries found where declared */
};

/* One drift finding: counted always, spelled out for the first few of its kind. */
static void drift_note(struct verify_run *v, size_t *counter, const char *kind, const char *rel, const char *extra)
{
	if ((*counter)++ < BUNDLE_DRIFT_EXAMPLES)
		bundle_diag(v->d, "%s: %s%s", kind, rel, extra ? extra : "");
}

/* The `rel` member (first in struct bundle_file and struct bundle_link) of entry i of `base`,
 * copied out rather than read through a cast of a byte pointer. */
static const char *entry_rel(const void *base, size_t i, size_t size)
{
	const char *rel;

	memcpy(&rel, (const char *)base + i * size, sizeof(rel));
	return rel;
}

/* Is `dir` a parent of something the manifest declares? Entries are sorted, so the first one
 * not below "dir/" in order tells (a binary search, not a scan per directory). */
static bool has_prefix_sorted(const void *base, size_t n, size_t size, const char *prefix)
{
	size_t lo = 0, hi = n, pl = strlen(prefix);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(entry_rel(base, mid, size), prefix) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && !strncmp(entry_rel(base, lo, size), prefix, pl);
}

static bool declared_dir(const struct manifest *m, const char *dir)
{
	char prefix[PATH_MAX];

	if (snprintf(prefix, sizeof(prefix), "%s/", dir) >= (int)sizeof(prefix))
		return false;
	return has_prefix_sorted(m->files, m->nfiles, sizeof(*m->files), prefix) ||
	       has_prefix_sorted(m->links, m->nlinks, sizeof(*m->links), prefix);
}

static int hash_file(struct verify_run *v, int dirfd, const char *name, char *sum)
{
	struct sha256 h;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	int r = fd < 0 ? -errno : sha256_init(&h);

	while (r == 0) {
		ssize_t n = read(fd, v->chunk, STAGE_CHUNK);

		if (n < 0 && errno == EINTR)
			continue;
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
	return r;
}

static void verify_file(struct verify_run *v, int dirfd, const char *name, const char *rel, const struct stat *st)
{
	const struct bundle_file *f = manifest_file(v->m, rel);
	char sum[SHA256_HEX_LEN + 1];
	int r;

	if (!f) {
		drift_note(v, &v->drift->undeclared, "undeclared", rel,
			   manifest_link(v->m, rel) ? " (a symlink replaced by a file)" : NULL);
		return;
	}
	v->seen_files++;
	if ((st->st_mode & 07777) != (f->exec ? BUNDLE_EXEC_MODE : BUNDLE_FILE_MODE))
		drift_note(v, &v->drift->modes, "mode drift", rel, f->exec ? " (not 0555)" : " (not 0444)");
	if (!v->hash) {
		if (!f->walked || (uint64_t)st->st_size != f->size)
			drift_note(v, &v->drift->changed, "changed", rel, " (size)");
		return;
	}
	r = hash_file(v, dirfd, name, sum);
	if (r < 0 || strcmp(sum, f->sha256))
		drift_note(v, &v->drift->changed, "changed", rel, r < 0 ? " (unreadable)" : NULL);
}

/* Where the link leads inside the bundle, following links but never above the bundle's root:
 * NULL when it reaches a file or directory below the root, else why not. The walk checked the
 * live source tree, which can change while it is walked; this is the check that counts. */
static const char *link_resolves(struct verify_run *v, const char *rel)
{
	int fd = openat2_fd(v->rootfd, rel, O_PATH | O_CLOEXEC, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
	struct stat st;
	const char *why = NULL;

	if (fd < 0)
		return fd == -EXDEV  ? " (escapes the bundle)" :
		       fd == -ENOENT ? " (broken)" :
		       fd == -ELOOP  ? " (symlink loop)" :
				       " (cannot be resolved)";
	if (fstat(fd, &st) < 0)
		why = " (cannot be resolved)";
	else if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		why = " (points to a special file)";
	else if (st.st_dev == v->root.st_dev && st.st_ino == v->root.st_ino)
		why = " (points to the bundle's root, outside the allowed entries)";
	close(fd);
	return why;
}

static void verify_link(struct verify_run *v, int dirfd, const char *name, const char *rel)
{
	const struct bundle_link *l = manifest_link(v->m, rel);
	char target[PATH_MAX];
	const char *why;
	ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);

	if (!l) {
		drift_note(v, manifest_file(v->m, rel) ? &v->drift->changed : &v->drift->undeclared,
			   manifest_file(v->m, rel) ? "changed" : "undeclared", rel,
			   manifest_file(v->m, rel) ? " (a file replaced by a symlink)" : " (symlink)");
		return;
	}
	v->seen_links++;
	target[n < 0 ? 0 : n] = '\0';
	if (n < 0 || strcmp(target, l->target))
		drift_note(v, &v->drift->links, "symlink drift", rel, " (target changed)");
	else if ((why = link_resolves(v, rel)))
		drift_note(v, &v->drift->links, "unsafe symlink", rel, why);
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
	DIR *dp = dirfd >= 0 ? fdopendir(dirfd) : NULL;
	struct dirent *e;

	if (!dp) {
		if (dirfd >= 0)
			close(dirfd);
		drift_note(v, &v->drift->missing, "unreadable", *rel ? rel : ".", " (directory)");
		return;
	}
	while ((e = readdir(dp))) {
		char *child = NULL;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (asprintf(&child, "%s%s%s", rel, *rel ? "/" : "", e->d_name) < 0) {
			drift_note(v, &v->drift->missing, "unreadable", *rel ? rel : ".", " (out of memory)");
			break;
		}
		verify_entry(v, dirfd, e->d_name, child, depth);
		free(child);
	}
	closedir(dp);
}

/* Declared entries that are not on disk at all. */
static void verify_missing(struct verify_run *v)
{
	struct stat st;

	for (size_t i = 0; i < v->m->nfiles; i++)
		if (fstatat(v->rootfd, v->m->files[i].rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
			drift_note(v, &v->drift->missing, "missing", v->m->files[i].rel, NULL);
	for (size_t i = 0; i < v->m->nlinks; i++)
		if (fstatat(v->rootfd, v->m->links[i].rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
			drift_note(v, &v->drift->missing, "missing", v->m->links[i].rel, " (symlink)");
}

static int verify_tree(const char *dest, const struct manifest *m, bool hash, struct diag *d, struct bundle_drift *ret)
{
	struct verify_run v = { .m = m, .d = d, .drift = ret, .hash = hash };
	int r;

	memset(ret, 0, sizeof(*ret));
	v.rootfd = open(dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (v.rootfd < 0 || fstat(v.rootfd, &v.root) < 0) {
		r = -errno;
		bundle_diag(d, "%s: %s", dest, strerror(-r));
		if (v.rootfd >= 0)
			close(v.rootfd);
		return r;
	}
	v.chunk = hash ? malloc(STAGE_CHUNK) : NULL;
	if (hash && !v.chunk) {
		close(v.rootfd);
		return -ENOMEM;
	}
	if ((v.root.st_mode & 07777) != BUNDLE_DIR_MODE)
		drift_note(&v, &ret->modes, "mode drift", ".", " (directory not 0555)");
	verify_dir(&v, reopen_dir(v.rootfd), "", 0);
	/* Every declared entry has one path: when the walk found them all, none is missing. */
	if (v.seen_files != m->nfiles || v.seen_links != m->nlinks)
		verify_missing(&v);
	close(v.rootfd);
	free(v.chunk);
	return ret->missing + ret->undeclared + ret->changed + ret->links + ret->modes ? 1 : 0;
}

int bundle_verify(const char *dest, const struct manifest *m, struct diag *d, struct bundle_drift *ret)
{
	return verify_tree(dest, m, true, d, ret);
}
