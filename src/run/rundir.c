/* SPDX-License-Identifier: MIT */
/* rundir.c: run directory staging over directory fds (see rundir.h). */
#include "rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../lib/fd.h"
#include "../lib/hash.h"
#include "../lib/util.h"

#define COPY_CHUNK (256 * 1024)

int rundir_create(const char *path, int *ret_fd)
{
	struct dirent *e;
	DIR *d;
	int fd, n = 0;

	if (mkdir(path, 0711) < 0 && errno != EEXIST)
		return -errno;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fcntl(fd, F_DUPFD_CLOEXEC, 0));
	if (!d) {
		int err = -errno;

		close(fd);
		return err;
	}
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	if (n) {
		close(fd);
		return -EEXIST;
	}
	if (fchown(fd, 0, 0) < 0 || fchmod(fd, 0711) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	*ret_fd = fd;
	return 0;
}

int rundir_mkdir(int dirfd, const char *name, mode_t mode, uid_t uid, gid_t gid)
{
	if (mkdirat(dirfd, name, 0700) < 0)
		return -errno;
	if (fchownat(dirfd, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0 || fchmodat(dirfd, name, mode, 0) < 0)
		return -errno;
	return 0;
}

/* One component: made if missing (agent-owned), then opened without following a link. */
static int mkpath_step(int fd, const char *name, uid_t uid, gid_t gid)
{
	int next;

	if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	if (mkdirat(fd, name, 0700) == 0) {
		if (fchownat(fd, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
	} else if (errno != EEXIST) {
		return -errno;
	}
	next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return next < 0 ? -errno : next;
}

int rundir_mkpath(int dirfd, const char *rel, uid_t uid, gid_t gid, int *ret_fd)
{
	char *copy = strdup(rel), *name, *save = NULL;
	int fd = -1, err = 0;

	if (!copy)
		return -ENOMEM;
	if (!*rel || rel[0] == '/' || strstr(rel, "//") || rel[strlen(rel) - 1] == '/')
		err = -EINVAL;
	fd = err == 0 ? fcntl(dirfd, F_DUPFD_CLOEXEC, 0) : -1;
	if (err == 0 && fd < 0)
		err = -errno;
	for (name = strtok_r(copy, "/", &save); err == 0 && name; name = strtok_r(NULL, "/", &save)) {
		int next = mkpath_step(fd, name, uid, gid);

		close(fd);
		fd = next;
		err = next < 0 ? next : 0;
	}
	free(copy);
	if (err < 0)
		return err;
	if (ret_fd)
		*ret_fd = fd;
	else
		close(fd);
	return 0;
}

int rundir_symlink(int dirfd, const char *rel, const char *target, uid_t uid, gid_t gid)
{
	const char *slash = strrchr(rel, '/'), *leaf = slash ? slash + 1 : rel;
	char *parent = NULL;
	int fd = -1, err = 0;

	if (!*leaf || !strcmp(leaf, ".") || !strcmp(leaf, ".."))
		return -EINVAL;
	if (slash) {
		if (!(parent = strndup(rel, (size_t)(slash - rel))))
			return -ENOMEM;
		err = rundir_mkpath(dirfd, parent, uid, gid, &fd);
		free(parent);
	} else if ((fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0)) < 0) {
		err = -errno;
	}
	if (err == 0 && symlinkat(target, fd, leaf) < 0)
		err = -errno;
	if (fd >= 0)
		close(fd);
	return err;
}

static int open_new(int dirfd, const char *name, uid_t uid, gid_t gid)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	if (fchown(fd, uid, gid) < 0) {
		int err = -errno;

		close(fd);
		unlinkat(dirfd, name, 0);
		return err;
	}
	return fd;
}

int rundir_write(int dirfd, const char *name, const void *data, size_t len, mode_t mode, uid_t uid, gid_t gid)
{
	int fd = open_new(dirfd, name, uid, gid), r;

	if (fd < 0)
		return fd;
	r = fd_write_all(fd, data, len);
	if (r == 0 && fchmod(fd, mode) < 0)
		r = -errno;
	close(fd);
	if (r < 0)
		unlinkat(dirfd, name, 0);
	return r;
}

static int copy_fd(int in, int out, unsigned long long *budget)
{
	char *b = malloc(COPY_CHUNK);
	ssize_t n;
	int r = 0;

	if (!b)
		return -ENOMEM;
	while ((n = read(in, b, COPY_CHUNK)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (budget && (unsigned long long)n > *budget) {
			r = -EFBIG;
			break;
		}
		if (budget)
			*budget -= (unsigned long long)n;
		if ((r = fd_write_all(out, b, (size_t)n)) < 0)
			break;
	}
	free(b);
	return r;
}

int rundir_copy_file(const char *src, int dirfd, const char *name, mode_t mode, uid_t uid, gid_t gid)
{
	int in = open(src, O_RDONLY | O_CLOEXEC), out, r;
	struct stat st;

	if (in < 0)
		return -errno;
	r = fstat(in, &st) < 0 ? -errno : S_ISREG(st.st_mode) ? 0 : -EINVAL;
	if (r < 0) {
		close(in);
		return r;
	}
	out = open_new(dirfd, name, uid, gid);
	if (out < 0) {
		close(in);
		return out;
	}
	r = copy_fd(in, out, NULL);
	if (r == 0 && fchmod(out, mode) < 0)
		r = -errno;
	close(in);
	close(out);
	if (r < 0)
		unlinkat(dirfd, name, 0);
	return r;
}

struct copy {
	uid_t uid;
	gid_t gid;
	unsigned entries;
	unsigned long long budget;
	struct diag *d;
};

static int copy_dir(struct copy *c, int sfd, int dfd, const char *rel, unsigned depth);

/* errno is passed in, read before anything else can change it. */
static int copy_fail(struct copy *c, const char *path, int err)
{
	diag_error(c->d, "%s: %s", path, strerror(err));
	return -err;
}

static int copy_entry(struct copy *c, int sfd, int dfd, const char *name, const char *rel, unsigned depth)
{
	char path[4096], target[4096];
	struct stat st;
	ssize_t n;
	int in, out, r;

	snprintf(path, sizeof(path), "%s%s%s", rel, *rel ? "/" : "", name);
	if (++c->entries > RUN_TREE_MAX_ENTRIES)
		return diag_error(c->d, "%s: more than %u entries", path, RUN_TREE_MAX_ENTRIES), -EFBIG;
	if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return copy_fail(c, path, errno);
	if (S_ISLNK(st.st_mode)) {
		if ((n = readlinkat(sfd, name, target, sizeof(target) - 1)) < 0)
			return copy_fail(c, path, errno);
		target[n] = '\0';
		if (symlinkat(target, dfd, name) < 0 || fchownat(dfd, name, c->uid, c->gid, AT_SYMLINK_NOFOLLOW) < 0)
			return copy_fail(c, path, errno);
		return 0;
	}
	if (S_ISDIR(st.st_mode)) {
		if (depth >= RUN_TREE_MAX_DEPTH)
			return diag_error(c->d, "%s: deeper than %u levels", path, RUN_TREE_MAX_DEPTH), -EFBIG;
		if ((r = rundir_mkdir(dfd, name, 0700, c->uid, c->gid)) < 0)
			return copy_fail(c, path, -r);
		in = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		out = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		r = in < 0 || out < 0 ? copy_fail(c, path, errno) : copy_dir(c, in, out, path, depth + 1);
		if (r == 0 && fchmod(out, st.st_mode & 0777) < 0)
			r = -errno;
		if (in >= 0)
			close(in);
		if (out >= 0)
			close(out);
		return r;
	}
	if (!S_ISREG(st.st_mode))
		return diag_error(c->d, "%s: not a regular file, directory or symbolic link", path), -EINVAL;
	if ((in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return copy_fail(c, path, errno);
	if ((out = open_new(dfd, name, c->uid, c->gid)) < 0) {
		close(in);
		return copy_fail(c, path, -out);
	}
	r = copy_fd(in, out, &c->budget);
	if (r == 0 && fchmod(out, st.st_mode & 0777) < 0)
		r = -errno;
	if (r == -EFBIG)
		diag_error(c->d, "%s: the workspace is larger than %llu bytes", path, RUN_TREE_MAX_BYTES);
	else if (r < 0)
		diag_error(c->d, "%s: %s", path, strerror(-r));
	close(in);
	close(out);
	return r;
}

static int copy_dir(struct copy *c, int sfd, int dfd, const char *rel, unsigned depth)
{
	DIR *d = fdopendir(fcntl(sfd, F_DUPFD_CLOEXEC, 0));
	struct dirent *e;
	int r = 0;

	if (!d)
		return copy_fail(c, *rel ? rel : ".", errno);
	while (r == 0 && (errno = 0, e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			r = copy_entry(c, sfd, dfd, e->d_name, rel, depth);
	closedir(d);
	return r;
}

int rundir_copy_tree(const char *src, int dirfd, uid_t uid, gid_t gid, struct diag *d)
{
	struct copy c = { .uid = uid, .gid = gid, .budget = RUN_TREE_MAX_BYTES, .d = d };
	int sfd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

	if (sfd < 0) {
		r = -errno;
		diag_error(d, "%s: %s", src, strerror(-r));
		return r;
	}
	r = copy_dir(&c, sfd, dirfd, "", 0);
	close(sfd);
	return r;
}

int rundir_hash_file(int dirfd, const char *name, char out[65], off_t *ret_size)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY), r = 0;
	struct sha256 h;
	struct stat st;
	char *b;
	ssize_t n;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !(b = malloc(COPY_CHUNK))) {
		close(fd);
		return -EINVAL;
	}
	if (sha256_init(&h) < 0)
		r = -EIO;
	while (r == 0 && (n = read(fd, b, COPY_CHUNK)) != 0) {
		if (n < 0 && errno != EINTR)
			r = -errno;
		else if (n > 0 && sha256_update(&h, b, (size_t)n) < 0)
			r = -EIO;
	}
	if (r == 0 && sha256_final_hex(&h, out) < 0)
		r = -EIO;
	else if (r < 0)
		sha256_free(&h);
	free(b);
	close(fd);
	if (r == 0 && ret_size)
		*ret_size = st.st_size;
	return r;
}

struct scan {
	struct private_file *priv;
	size_t npriv;
	unsigned entries;
	unsigned long long bytes; /* hashed so far: at most RUN_TREE_MAX_BYTES */
	int truncated;
};

static void scan_dir(struct scan *s, int fd, const char *rel, unsigned depth);

static void scan_entry(struct scan *s, int fd, const char *name, const char *rel, unsigned depth)
{
	char path[4096], sum[65];
	struct stat st;
	bool wanted = false;
	int sub;

	snprintf(path, sizeof(path), "%s%s%s", rel, *rel ? "/" : "", name);
	if (++s->entries > RUN_TREE_MAX_ENTRIES) {
		s->truncated = 1;
		return;
	}
	/* The agent is gone by now, so nothing moves: a failure below means a part was not scanned,
	 * and the scan says so (incomplete) rather than reporting no leak there. */
	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		s->truncated = 1;
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		if (depth >= RUN_TREE_MAX_DEPTH) {
			s->truncated = 1;
			return;
		}
		if ((sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			s->truncated = 1;
			return;
		}
		scan_dir(s, sub, path, depth + 1);
		close(sub);
		return;
	}
	/* Only files of a private file's exact size are read: the agent decides how big the rest is. */
	for (size_t i = 0; i < s->npriv; i++)
		wanted |= S_ISREG(st.st_mode) && st.st_size == s->priv[i].size;
	if (!wanted)
		return;
	s->bytes += (unsigned long long)st.st_size;
	if (s->bytes > RUN_TREE_MAX_BYTES || rundir_hash_file(fd, name, sum, NULL) < 0) {
		s->truncated = 1;
		return;
	}
	for (size_t i = 0; i < s->npriv; i++)
		if (st.st_size == s->priv[i].size && !strcmp(sum, s->priv[i].sha256) &&
		    strv_push(&s->priv[i].leaked_into, path) < 0)
			s->truncated = 1;
}

static void scan_dir(struct scan *s, int fd, const char *rel, unsigned depth)
{
	int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *e;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		s->truncated = 1;
		return;
	}
	while (!s->truncated && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			scan_entry(s, fd, e->d_name, rel, depth);
	closedir(d);
}

int rundir_find_private(int ws_fd, struct private_file *priv, size_t npriv, int *ret_truncated)
{
	struct scan s = { .priv = priv, .npriv = npriv };

	if (npriv)
		scan_dir(&s, ws_fd, "", 0);
	*ret_truncated = s.truncated;
	return 0;
}

static int lock_id(unsigned id, int *ret_fd)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/id-%u.lock", RUN_LOCK_DIR, id);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return -EBUSY;
	}
	*ret_fd = fd;
	return 0;
}

/* All the slot's ids, or none. */
static int lock_slot(const unsigned base[RUN_SLOT_IDS], unsigned k, int fds[RUN_SLOT_IDS])
{
	int err = 0;

	for (int i = 0; i < RUN_SLOT_IDS; i++)
		fds[i] = -1;
	for (int i = 0; i < RUN_SLOT_IDS && err == 0; i++) {
		bool dup = false;

		for (int j = 0; j < i; j++)
			dup |= base[j] + k == base[i] + k;
		if (!dup)
			err = lock_id(base[i] + k, &fds[i]);
	}
	if (err < 0)
		for (int i = 0; i < RUN_SLOT_IDS; i++)
			if (fds[i] >= 0) {
				close(fds[i]);
				fds[i] = -1;
			}
	return err;
}

static int try_slots(const unsigned base[RUN_SLOT_IDS], unsigned slots, unsigned *ret_slot, int fds[RUN_SLOT_IDS])
{
	for (unsigned k = 0; k < slots; k++) {
		int err = lock_slot(base, k, fds);

		if (err == 0) {
			*ret_slot = k;
			return 0;
		}
		if (err != -EBUSY)
			return err;
	}
	return -EBUSY;
}

/* A signal of `stop` is pending (not taken: its reader still sees it). */
static bool stop_pending(const sigset_t *stop)
{
	sigset_t p;

	if (!stop || sigpending(&p) < 0)
		return false;
	for (int s = 1; s < NSIG; s++)
		if (sigismember(stop, s) == 1 && sigismember(&p, s) == 1)
			return true;
	return false;
}

int rundir_take_slot(const unsigned base[RUN_SLOT_IDS], unsigned slots, const sigset_t *stop, unsigned *ret_slot,
		     int ret_fds[RUN_SLOT_IDS])
{
	uint64_t end = now_mono_ms() + RUN_SLOT_WAIT_MS;
	int r;

	if ((r = fd_root_dir_ensure(RUN_LOCK_DIR)) < 0)
		return r; /* -EPERM: not ours, someone else could take or fake the locks */
	while ((r = try_slots(base, slots, ret_slot, ret_fds)) == -EBUSY && now_mono_ms() < end) {
		if (stop_pending(stop))
			return -EINTR;
		sleep_ms(100);
	}
	return r;
}
