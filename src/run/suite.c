/* SPDX-License-Identifier: MIT */
/* suite.c: suites for schedulers (suite.h): the index and where it came from, the suite's task
 * order, and OUT/<id>/ kept idempotent across restarts of the same index. A pod or array job
 * may start twice: a final result is never redone, a retryable one is kept aside, and a lock
 * per task id keeps a new start from moving a directory a terminating start still writes. */
#include "suite.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../lib/buf.h"
#include "../lib/fd.h"
#include "../lib/path.h"
#include "../lib/util.h"
#include "run.h"

static const char *env_get(char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (; env && *env; env++)
		if (!strncmp(*env, name, n) && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

int suite_index_pick(const char *flag, char *const *env, unsigned long *ret_index, const char **ret_source,
		     char why[SUITE_WHY_SIZE])
{
	const char *val = flag, *src = "--index";
	unsigned long v;

	if (!val && (val = env_get(env, SUITE_ENV_K8S)))
		src = SUITE_ENV_K8S;
	if (!val && (val = env_get(env, SUITE_ENV_SLURM)))
		src = SUITE_ENV_SLURM;
	if (!val) {
		snprintf(why, SUITE_WHY_SIZE, "no task index: give --index N, or set %s or %s", SUITE_ENV_K8S,
			 SUITE_ENV_SLURM);
		return -ENOENT;
	}
	if (parse_ulong(val, 0, SUITE_MAX_TASKS - 1, &v) < 0) {
		char *e = str_escape(val);

		snprintf(why, SUITE_WHY_SIZE, "%s: '%.64s' is not a task index (a decimal integer, 0 to %d)", src,
			 e ? e : "?", SUITE_MAX_TASKS - 1);
		free(e);
		return -EINVAL;
	}
	*ret_index = v;
	*ret_source = src;
	return 0;
}

void suite_free(struct suite *s)
{
	free(s->path);
	strv_free(&s->tasks);
	*s = (struct suite){ 0 };
}

static bool name_is_task(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && n > 5 && !strcmp(name + n - 5, ".json");
}

static int load_dir(const char *path, struct suite *s, char why[SUITE_WHY_SIZE])
{
	char *real = realpath(path, NULL);
	DIR *d = real ? opendir(real) : NULL;
	struct dirent *e;
	int err = 0;

	if (!d) {
		err = -errno;
		snprintf(why, SUITE_WHY_SIZE, "%s: %s", path, strerror(errno));
		goto out;
	}
	while (!err && (e = readdir(d))) {
		struct stat st;
		char *full = NULL;

		if (!name_is_task(e->d_name) || fstatat(dirfd(d), e->d_name, &st, 0) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (s->tasks.n >= SUITE_MAX_TASKS) {
			snprintf(why, SUITE_WHY_SIZE, "%s: more than %d task files", path, SUITE_MAX_TASKS);
			err = -E2BIG;
		} else if (asprintf(&full, "%s/%s", real, e->d_name) < 0 || strv_push(&s->tasks, full) < 0) {
			err = -ENOMEM;
		}
		free(full);
	}
	/* Byte order of the names (not the locale's): the same on every host of a cluster. */
	strv_sort(&s->tasks);
out:
	if (d)
		closedir(d);
	free(real);
	return err;
}

static bool blank(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
			return false;
	return true;
}

/* One line of a JSON Lines suite: a non-empty JSON string, the path of a task file. */
static int load_line(const char *path, const char *base, const char *p, size_t n, unsigned long line, struct suite *s,
		     char why[SUITE_WHY_SIZE])
{
	json_t *j;
	const char *rel;
	char *full;
	int err;

	if (n > SUITE_MAX_LINE_BYTES) {
		snprintf(why, SUITE_WHY_SIZE, "%s:%lu: longer than %u bytes", path, line, SUITE_MAX_LINE_BYTES);
		return -EINVAL;
	}
	j = json_loadb(p, n, JSON_DECODE_ANY, NULL);
	rel = json_string_value(j);
	if (!rel || !rel[0] || strlen(rel) != json_string_length(j)) {
		snprintf(why, SUITE_WHY_SIZE, "%s:%lu: must be a JSON string naming a task file, like \"t1/task.json\"",
			 path, line);
		json_decref(j);
		return -EINVAL;
	}
	if (s->tasks.n >= SUITE_MAX_TASKS) {
		snprintf(why, SUITE_WHY_SIZE, "%s:%lu: more than %d tasks", path, line, SUITE_MAX_TASKS);
		json_decref(j);
		return -E2BIG;
	}
	full = path_relative_to_file(base, rel);
	err = full ? strv_push(&s->tasks, full) : -ENOMEM;
	free(full);
	json_decref(j);
	return err;
}

int suite_parse_lines(const char *name, const char *base, const char *data, size_t len, struct suite *ret,
		      char why[SUITE_WHY_SIZE])
{
	struct suite s = { 0 };
	unsigned long line = 0;
	int err = 0;

	if (len > SUITE_MAX_FILE_BYTES) {
		snprintf(why, SUITE_WHY_SIZE, "%s: larger than %u MiB", name, SUITE_MAX_FILE_BYTES >> 20);
		return -EFBIG;
	}
	if (!(s.path = strdup(name)))
		return -ENOMEM;
	for (size_t at = 0; at < len && err == 0;) {
		const char *p = data + at, *nl = memchr(p, '\n', len - at);
		size_t n = nl ? (size_t)(nl - p) : len - at;

		line++;
		if (!blank(p, n))
			err = load_line(name, base, p, n, line, &s, why);
		at += n + 1;
	}
	if (err == 0 && s.tasks.n == 0) {
		snprintf(why, SUITE_WHY_SIZE, "%s: no tasks (a suite file holds one JSON string per line)", name);
		err = -ENOENT;
	}
	if (err < 0) {
		suite_free(&s);
		return err;
	}
	*ret = s;
	return 0;
}

static int load_lines(const char *path, struct suite *ret, char why[SUITE_WHY_SIZE])
{
	char *base = realpath(path, NULL);
	struct buf b;
	int err;

	buf_init(&b, SUITE_MAX_FILE_BYTES);
	err = base ? fd_read_file(base, SUITE_MAX_FILE_BYTES, &b) : -errno;
	if (err < 0) {
		snprintf(why, SUITE_WHY_SIZE, "%s: %s", path, err == -EFBIG ? "larger than 64 MiB" : strerror(-err));
		goto out;
	}
	err = suite_parse_lines(path, base, b.data ? b.data : "", b.len, ret, why);
out:
	buf_free(&b);
	free(base);
	return err;
}

int suite_load(const char *path, struct suite *ret, char why[SUITE_WHY_SIZE])
{
	struct suite s = { 0 };
	struct stat st;
	int err;

	if (stat(path, &st) < 0) {
		snprintf(why, SUITE_WHY_SIZE, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode))
		return load_lines(path, ret, why);
	if (!(s.path = strdup(path)))
		return -ENOMEM;
	s.is_dir = true;
	err = load_dir(path, &s, why);
	if (err == 0 && s.tasks.n == 0) {
		snprintf(why, SUITE_WHY_SIZE, "%s: no tasks (a suite directory holds NAME.json task files)", path);
		err = -ENOENT;
	}
	if (err < 0) {
		suite_free(&s);
		return err;
	}
	*ret = s;
	return 0;
}

int suite_select(const struct suite *s, unsigned long index, const char *source, const char **ret_task,
		 char why[SUITE_WHY_SIZE])
{
	if (index >= s->tasks.n) {
		snprintf(why, SUITE_WHY_SIZE, "%s: index %lu is out of range: %s has %zu tasks (0 to %zu)", source,
			 index, s->path, s->tasks.n, s->tasks.n - 1);
		return -ERANGE;
	}
	*ret_task = s->tasks.v[index];
	return 0;
}

int suite_task_id(const char *task_file, char ret_id[TASK_MAX_ID_LEN + 1], char why[SUITE_WHY_SIZE])
{
	struct buf b;
	json_t *j = NULL;
	const char *id;
	int err;

	buf_init(&b, TASK_MAX_FILE_BYTES);
	if ((err = fd_read_file(task_file, TASK_MAX_FILE_BYTES, &b)) < 0) {
		snprintf(why, SUITE_WHY_SIZE, "%s: %s", task_file, strerror(-err));
		goto out;
	}
	j = json_loadb(b.data, b.len, 0, NULL);
	id = json_string_value(json_object_get(j, "id"));
	if (!id || !task_id_valid(id)) {
		snprintf(why, SUITE_WHY_SIZE,
			 "%s: id: %s (a suite's results are OUT/<id>/, so the id must be readable: 1 to %d of "
			 "A-Z a-z 0-9 . _ -, not starting with . or -)",
			 task_file,
			 !j  ? "the file is not JSON" :
			 !id ? "missing or not a string" :
			       "not a valid id",
			 TASK_MAX_ID_LEN);
		err = -EINVAL;
		goto out;
	}
	snprintf(ret_id, TASK_MAX_ID_LEN + 1, "%s", id);
out:
	json_decref(j);
	buf_free(&b);
	return err;
}

/* Take OUT/.locks/<id>.lock, waiting for a previous start that still tears down (a pod being
 * replaced gets SIGTERM and the grace period while its replacement may already start). */
static int lock_task(int outfd, const char *out, const char *id, int *ret_lock, char why[SUITE_WHY_SIZE])
{
	char rel[TASK_MAX_ID_LEN + 16];
	uint64_t end = now_mono_ms() + SUITE_LOCK_WAIT_MS;
	int fd;

	if (mkdirat(outfd, ".locks", 0700) < 0 && errno != EEXIST)
		goto fail;
	snprintf(rel, sizeof(rel), ".locks/%s.lock", id);
	if ((fd = openat(outfd, rel, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
		goto fail;
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK || now_mono_ms() >= end) {
			int err = errno;

			close(fd);
			snprintf(why, SUITE_WHY_SIZE, "%s/%s: %s", out, rel,
				 err == EWOULDBLOCK ? "another proctor run of this task held it for 60 s" :
						      strerror(err));
			return -err;
		}
		sleep_ms(50);
	}
	*ret_lock = fd;
	return 0;
fail:
	snprintf(why, SUITE_WHY_SIZE, "%s/.locks: %s", out, strerror(errno));
	return -errno;
}

/* What the last start left in OUT/<id>/result.json: 1 and the exit code and status when it is
 * a result of this task file, 0 when there is none or it is unreadable, -EEXIST for another
 * task file's result. */
static int prior_result(int outfd, const char *out, const char *id, const char *task_file, int *ret_exit,
			char ret_status[32], char why[SUITE_WHY_SIZE])
{
	char rel[TASK_MAX_ID_LEN + 16];
	struct buf b;
	json_t *j = NULL, *code;
	const char *tf, *st;
	int fd, r = 0;

	snprintf(rel, sizeof(rel), "%s/result.json", id);
	buf_init(&b, SUITE_MAX_RESULT_BYTES);
	if ((fd = openat(outfd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		goto out;
	for (ssize_t n = 1; n > 0;) {
		char chunk[65536];

		if ((n = read(fd, chunk, sizeof(chunk))) > 0 && buf_append(&b, chunk, (size_t)n) < 0)
			n = -1;
		if (n < 0)
			b.len = 0; /* unreadable or over the limit: as if absent (moved aside) */
	}
	close(fd);
	j = b.len ? json_loadb(b.data, b.len, 0, NULL) : NULL;
	code = json_object_get(j, "exit_code");
	tf = json_string_value(json_object_get(j, "task_file"));
	st = json_string_value(json_object_get(j, "status"));
	if (!json_is_integer(code) || !tf || !st)
		goto out;
	if (strcmp(tf, task_file) != 0) {
		snprintf(why, SUITE_WHY_SIZE,
			 "%s/%s is the result of %s, not of %s: two tasks of the suite have the id '%s'", out, rel, tf,
			 task_file, id);
		r = -EEXIST;
		goto out;
	}
	*ret_exit = (int)json_integer_value(code);
	snprintf(ret_status, 32, "%s", st);
	r = 1;
out:
	json_decref(j);
	buf_free(&b);
	return r;
}

static bool dir_empty_or_absent(int outfd, const char *id)
{
	int fd = openat(outfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *e;
	bool empty = true;

	if (fd < 0)
		return errno == ENOENT;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return false;
	}
	while (empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	return empty;
}

/* Move OUT/<id> to OUT/.attempts/<id>-<ms>, or <id>-<ms>.N when a start in the same
 * millisecond took that name: an earlier attempt is never replaced. */
static int move_aside(int outfd, const char *out, const char *id, char why[SUITE_WHY_SIZE])
{
	char rel[TASK_MAX_ID_LEN + 64];
	long long ms = (long long)now_epoch_ms();
	int r = -1;

	if (mkdirat(outfd, ".attempts", 0755) < 0 && errno != EEXIST) {
		snprintf(why, SUITE_WHY_SIZE, "%s/.attempts: %s", out, strerror(errno));
		return -errno;
	}
	for (unsigned n = 0; r < 0 && n < SUITE_MAX_ATTEMPT_NAMES; n++) {
		if (n == 0)
			snprintf(rel, sizeof(rel), ".attempts/%s-%lld", id, ms);
		else
			snprintf(rel, sizeof(rel), ".attempts/%s-%lld.%u", id, ms, n);
		r = renameat2(outfd, id, outfd, rel, RENAME_NOREPLACE);
		if (r < 0 && errno == EINVAL) /* a file system without RENAME_NOREPLACE */
			r = renameat(outfd, id, outfd, rel);
		if (r < 0 && errno != EEXIST && errno != ENOTEMPTY)
			break;
	}
	if (r < 0) {
		snprintf(why, SUITE_WHY_SIZE, "%s/%s: cannot move it to %s/%s: %s", out, id, out, rel, strerror(errno));
		return -errno;
	}
	snprintf(why, SUITE_WHY_SIZE, "%s/%s", out, rel);
	return 0;
}

int suite_prepare_out(const char *out, const char *id, const char *task_file, int *ret_lock, int *ret_exit,
		      char ret_status[32], char why[SUITE_WHY_SIZE])
{
	int outfd, lock = -1, r;

	if (mkdir(out, 0755) < 0 && errno != EEXIST) {
		snprintf(why, SUITE_WHY_SIZE, "%s: %s", out, strerror(errno));
		return -errno;
	}
	if ((outfd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		snprintf(why, SUITE_WHY_SIZE, "%s: %s", out, strerror(errno));
		return -errno;
	}
	if ((r = lock_task(outfd, out, id, &lock, why)) < 0)
		goto out;
	if ((r = prior_result(outfd, out, id, task_file, ret_exit, ret_status, why)) < 0)
		goto out;
	/* A result with exit 0 or 4 is final: the same task would give the same answer. Exit 3
	 * asked for a retry; no result at all means the last start died before it wrote one. */
	if (r == 1 && (*ret_exit == RUN_EXIT_FINAL || *ret_exit == RUN_EXIT_INVALID)) {
		r = SUITE_DONE;
	} else if (dir_empty_or_absent(outfd, id)) {
		r = SUITE_FRESH;
	} else if ((r = move_aside(outfd, out, id, why)) == 0) {
		r = SUITE_MOVED;
	}
out:
	close(outfd);
	if (r < 0 && lock >= 0)
		close(lock);
	else
		*ret_lock = lock;
	return r;
}
