/* SPDX-License-Identifier: MIT */
/* spawn.c: the processes of a run and the channel to the worker. mockd is exec'd as root and
 * drops itself after loading, binding and opening its journal; the worker is dropped here (its
 * Landlock ruleset is the agent's) and exec'd as `proctor worker`, as pid 1 of its own pid
 * namespace where the host allows one. Frames from the worker are checked one by one: a bad
 * length, a foreign nonce, an unknown event or an unexpected response fails the run. */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "../lib/fd.h"
#include "../lib/json.h"
#include "../lib/util.h"
#include "../priv/drop.h"
#include "../priv/spawn.h"
#include "rundir.h"
#include "worker.h"

static const char *const system_dirs[] = { "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc" };
static const char *const dev_files[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom" };

char *run_path(const struct run *r, const char *rel)
{
	char *p;

	return asprintf(&p, "%s/%s", r->dir, rel) < 0 ? NULL : p;
}

void run_phase_end(struct run *r, enum run_phase ph, uint64_t start)
{
	r->ms[ph] += now_mono_ms() - start;
}

bool run_failed(const struct run *r)
{
	return r->status != NULL;
}

/* Signals for the child before exec: nothing blocked, nothing ignored. */
void run_child_signals(void)
{
	signals_reset();
}

int run_open_log(struct run *r, const char *rel, mode_t mode, uid_t uid, gid_t gid)
{
	int fd, err;

	if ((err = rundir_write(r->dfd, rel, "", 0, mode, uid, gid)) < 0)
		return err;
	fd = openat(r->dfd, rel, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

void run_log_tail(struct run *r, const char *rel, char *out, size_t n)
{
	struct buf b;
	char *p = run_path(r, rel);

	out[0] = '\0';
	buf_init(&b, 0);
	if (p && fd_read_file(p, 1 << 20, &b) == 0 && b.len) {
		const char *start = b.len > n - 1 ? b.data + b.len - (n - 1) : b.data;

		snprintf(out, n, "%s", start);
		for (char *q = out; *q; q++)
			if (*q == '\n' && q[1])
				*q = ' ';
	}
	buf_free(&b);
	free(p);
}

/* ---- mockd ---- */

static noreturn void mockd_exec(struct run *r, int ready_w, int log_fd)
{
	char sock[PATH_MAX], cfg[PATH_MAX], journal[PATH_MAX], uid[16], muid[16], rgid[16];
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	char *argv[] = { "proctor",        "mockd", "--config",      cfg,    "--socket",  sock,
			 "--socket-group", rgid,    "--socket-mode", "0660", "--journal", journal,
			 "--ready-fd",     "3",     "--allow-uid",   uid,    "--user",    muid,
			 "--group",        muid,    "--groups",      rgid,   NULL };
	char *env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", NULL };

	run_child_signals();
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	snprintf(sock, sizeof(sock), "%s/sock/mock.sock", r->dir);
	snprintf(cfg, sizeof(cfg), "%s/private/mock-config.json", r->dir);
	snprintf(journal, sizeof(journal), "%s/logs/calls.jsonl", r->dir);
	snprintf(uid, sizeof(uid), "%u", (unsigned)r->uid);
	snprintf(muid, sizeof(muid), "%u", (unsigned)r->muid);
	snprintf(rgid, sizeof(rgid), "%u", (unsigned)r->rgid);
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(log_fd, 1) < 0 || dup2(log_fd, 2) < 0 || dup2(ready_w, 3) < 0 ||
	    spawn_close_fds_except((const int[]){ 3 }, 1) < 0)
		_exit(127);
	execve(r->self, argv, env);
	_exit(127);
}

static int wait_ready(int fd, unsigned ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;
	int n;

	do
		n = poll(&p, 1, (int)ms);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -ETIMEDOUT;
	return read(fd, &c, 1) == 1 ? 0 : -EPIPE;
}

int run_start_mockd(struct run *r)
{
	int ready[2], log_fd, err, st = 0;
	char tail[600], how[64];

	if (!r->t.nmocks)
		return 0;
	if ((log_fd = run_open_log(r, "logs/mockd.log", 0640, 0, 0)) < 0 || pipe2(ready, O_CLOEXEC) < 0) {
		run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "mockd: %s", strerror(log_fd < 0 ? -log_fd : errno));
		return -EIO;
	}
	if ((r->mockd = fork()) == 0)
		mockd_exec(r, ready[1], log_fd);
	close(ready[1]);
	close(log_fd);
	err = r->mockd < 0 ? -errno : wait_ready(ready[0], RUN_READY_MS);
	close(ready[0]);
	if (r->mockd > 0)
		r->mockd_pidfd = (int)syscall(SYS_pidfd_open, r->mockd, 0);
	if (err == 0)
		return 0;
	if (err == -ETIMEDOUT)
		snprintf(how, sizeof(how), "timed out after %u ms", RUN_READY_MS);
	else
		snprintf(how, sizeof(how), "it exited");
	if (r->mockd > 0) {
		/* The pipe closed without the byte: mockd is exiting. Its own status is reported only
		 * when it ended by itself, within a moment; otherwise it is killed here. */
		bool own = false;

		for (int i = 0; err != -ETIMEDOUT && i < 100 && !own; i++) {
			pid_t p = waitpid(r->mockd, &st, WNOHANG);

			own = p == r->mockd;
			if (!own)
				sleep_ms(1);
		}
		if (!own) {
			kill(r->mockd, SIGKILL);
			waitpid(r->mockd, &st, 0);
			if (err != -ETIMEDOUT)
				snprintf(how, sizeof(how), "it closed its readiness pipe and was killed");
		} else if (WIFEXITED(st)) {
			snprintf(how, sizeof(how), "it exited with status %d", WEXITSTATUS(st));
		} else if (WIFSIGNALED(st)) {
			snprintf(how, sizeof(how), "it was killed by signal %d", WTERMSIG(st));
		}
		r->mockd_status = st;
		r->mockd = 0;
	}
	run_log_tail(r, "logs/mockd.log", tail, sizeof(tail));
	run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "mockd did not become ready (%s): %s", how,
		 tail[0] ? tail : "no output");
	return err;
}

/* ---- the worker ---- */

static int add_rule(struct drop_opts *o, char *path, enum landlock_kind kind)
{
	if (o->nll == DROP_MAX_LANDLOCK_PATHS)
		return -E2BIG;
	o->ll[o->nll++] = (struct landlock_path){ .path = path, .kind = kind, .fd = -1 };
	return 0;
}

/* The agent's Landlock ruleset (doc/TASK.md, "The agent's view"). Paths are owned by `keep`. */
static int worker_rules(struct run *r, struct drop_opts *o, struct strv *keep)
{
	static const struct {
		const char *rel;
		enum landlock_kind kind;
	} mine[] = {
		{ "workspace", LANDLOCK_RW }, { "home", LANDLOCK_RW },      { "tmp", LANDLOCK_RW },
		{ "bin", LANDLOCK_EXEC },     { "bundles", LANDLOCK_EXEC }, { "agent", LANDLOCK_EXEC },
	};
	struct stat st;
	int err = 0;

#define KEEP(s) (strv_push(keep, (s)) < 0 ? NULL : keep->v[keep->n - 1])
	for (size_t i = 0; i < sizeof(mine) / sizeof(mine[0]) && err == 0; i++) {
		char *p = run_path(r, mine[i].rel);

		err = p && KEEP(p) ? add_rule(o, keep->v[keep->n - 1], mine[i].kind) : -ENOMEM;
		free(p);
	}
	for (size_t i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]) && err == 0; i++)
		if (stat(system_dirs[i], &st) == 0)
			err = add_rule(o, (char *)system_dirs[i], LANDLOCK_EXEC);
	if (err == 0)
		err = add_rule(o, r->self, LANDLOCK_EXEC);
	if (err == 0)
		err = add_rule(o, r->shim, LANDLOCK_EXEC);
	for (size_t i = 0; i < r->t.ro_paths.n && err == 0; i++)
		err = add_rule(o, r->t.ro_paths.v[i], LANDLOCK_EXEC);
	if (err == 0)
		err = add_rule(o, "/proc", LANDLOCK_RO);
	if (err == 0)
		err = add_rule(o, "/sys", LANDLOCK_RO);
	if (err == 0)
		err = add_rule(o, "/dev", LANDLOCK_RO);
	for (size_t i = 0; i < sizeof(dev_files) / sizeof(dev_files[0]) && err == 0; i++)
		if (stat(dev_files[i], &st) == 0)
			err = add_rule(o, (char *)dev_files[i], LANDLOCK_RW);
	if (err == 0 && r->t.guard_harness >= 0) {
		char *g = run_path(r, "guard"), *log = run_path(r, "logs/guard-denials.jsonl");

		err = g && log && KEEP(g) ? add_rule(o, keep->v[keep->n - 1], LANDLOCK_RO) : -ENOMEM;
		if (err == 0)
			err = KEEP(log) ? add_rule(o, keep->v[keep->n - 1], LANDLOCK_RW) : -ENOMEM;
		free(g);
		free(log);
	}
#undef KEEP
	return err;
}

/* In a new mount namespace (with the pid namespace), the worker mounts a /proc of its own: the
 * agent then sees its own processes only, not mockd, the orchestrator or the host's. Propagation
 * is made private first, so nothing of this reaches the host's mounts; the namespace and its
 * mounts end with its last process. */
static int private_proc(void)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return -errno;
	return 0;
}

/* The worker's process, still root: its own session (no controlling terminal), its own /proc
 * where it has a mount namespace, the drop (with Landlock: its paths are opened here, after the
 * mount, so /proc's rule is for the /proc the agent sees) proven, then exec of `proctor worker`
 * with the channel on fd 3. */
static noreturn void worker_exec(struct run *r, struct drop_opts *o, int sock, int log_fd, bool own_proc)
{
	char hex[2 * FRAME_NONCE_LEN + 1], nonce_env[64];
	char *argv[] = { "proctor", "worker", "--fd", "3", NULL };
	char *env[] = { nonce_env, "PATH=/usr/bin:/bin", NULL };
	const char *step = "setsid";
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC), err = 0;

	if (setsid() < 0 || devnull < 0)
		goto fail;
	step = "mount a private /proc";
	if (own_proc && (err = private_proc()) < 0)
		goto fail;
	step = "drop";
	if ((err = drop_prepare(o, &step)) < 0 || (err = drop_apply(o, &step)) < 0)
		goto fail;
	step = "set up fds";
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || dup2(devnull, 0) < 0 || dup2(log_fd, 1) < 0 ||
	    dup2(log_fd, 2) < 0 || dup2(sock, 3) < 0 || spawn_close_fds_except((const int[]){ 3 }, 1) < 0)
		goto fail;
	nonce_format(r->nonce, hex);
	snprintf(nonce_env, sizeof(nonce_env), "%s=%s", WORKER_NONCE_ENV, hex);
	step = "exec";
	execve(r->self, argv, env);
fail:
	dprintf(log_fd, "proctor worker: %s: %s\n", step, strerror(err ? -err : errno));
	_exit(127);
}

/* Our child: with a pid namespace, it unshares and forks the worker (pid 1 there) and stays to
 * wait for it; without one it is the worker. Either way it tells us the worker's pid, and it
 * does not reap the worker before we say we hold a pidfd on it: a pid we signal as root must
 * never be one the kernel has handed to somebody else. */
static noreturn void holder_main(struct run *r, struct drop_opts *o, int sock, int log_fd, int report)
{
	int msg[3] = { 0, (int)getpid(), 0 }, st = 0;
	bool own_proc = true;
	char go;
	pid_t w, got = -1;

	run_child_signals();
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* SysV IPC objects die with the namespace too: none outlives the run or reaches another. */
	if (unshare(CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC) < 0) {
		msg[2] = errno;
		own_proc = false;
		if (unshare(CLONE_NEWPID) < 0) {
			msg[0] = errno;
			(void)!write(report, msg, sizeof(msg));
			worker_exec(r, o, sock, log_fd, false);
		}
	}
	if ((w = fork()) == 0)
		worker_exec(r, o, sock, log_fd, own_proc);
	msg[1] = (int)w;
	if (w < 0)
		msg[0] = errno;
	(void)!write(report, msg, sizeof(msg));
	while (read(report, &go, 1) < 0 && errno == EINTR)
		;
	syscall(SYS_close_range, 0U, ~0U, 0U);
	while (w > 0 && (got = waitpid(w, &st, 0)) < 0 && errno == EINTR)
		;
	_exit(got == w && WIFEXITED(st) ? WEXITSTATUS(st) : 127);
}

static int read_holder(int fd, int msg[3])
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, (int)RUN_HELLO_MS) <= 0)
		return -ETIMEDOUT;
	return read(fd, msg, 3 * sizeof(int)) == 3 * sizeof(int) ? 0 : -EPIPE;
}

/* The kernel has no Landlock (gVisor has none, nor a kernel before 5.13 or booted without it):
 * refused, a missing layer (exit 4), unless --allow-no-landlock accepts running without it. Either
 * way the decision is the landlock layer's entry in result.json. */
static int no_landlock(struct run *r, struct drop_opts *o)
{
	if (!r->o->allow_no_landlock) {
		run_layer(r, "landlock", "absent",
			  "refused: this kernel has no Landlock (--allow-no-landlock accepts that)");
		run_fail(r, "isolation_failed", RUN_EXIT_INVALID,
			 "the agent's sandbox: this kernel has no Landlock (a gVisor sandbox has none, nor a kernel "
			 "before 5.13 or booted without it); refusing to run the agent without it. "
			 "--allow-no-landlock runs it anyway, with writes outside the workspace stopped only by "
			 "file permissions and the guard");
		return -EOPNOTSUPP;
	}
	o->nll = 0; /* the paths stay owned by the caller's `keep` */
	o->landlock_scope = false;
	r->no_landlock = true;
	run_layer(r, "landlock", "absent",
		  "accepted by --allow-no-landlock: this kernel has no Landlock, so only file permissions, the "
		  "agent's own uid and the guard keep its writes inside the workspace");
	return 0;
}

int run_spawn_worker(struct run *r)
{
	struct drop_opts o = { .uid = r->uid, .gid = r->gid, .landlock_scope = landlock_abi() >= 6 };
	struct strv keep = { 0 };
	const char *step = NULL;
	int sv[2] = { -1, -1 }, rep[2] = { -1, -1 }, log_fd, err, msg[3] = { 0, 0, 0 };

	if (r->t.nmocks)
		o.groups[o.ngroups++] = r->rgid;
	/* Checked here for a clear message; the worker opens the paths itself after its mount. */
	if ((err = worker_rules(r, &o, &keep)) < 0) {
		run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "the agent's sandbox: Landlock rules: %s",
			 strerror(-err));
		goto out;
	}
	if (!landlock_abi() && no_landlock(r, &o) < 0) {
		err = -EOPNOTSUPP;
		goto out;
	}
	if ((err = drop_load(&step)) < 0) {
		run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "the agent's drop: %s: %s", step, strerror(-err));
		goto out;
	}
	for (size_t i = 0; i < o.nll; i++) {
		struct stat st;

		if (stat(o.ll[i].path, &st) < 0) {
			err = -errno;
			run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "the agent's sandbox: %s: %s", o.ll[i].path,
				 strerror(-err));
			goto out;
		}
	}
	if (getrandom(r->nonce, sizeof(r->nonce), 0) != sizeof(r->nonce) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, rep) < 0 ||
	    (log_fd = run_open_log(r, "logs/worker.log", 0640, 0, 0)) < 0) {
		run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "worker channel: %s", strerror(errno));
		err = -EIO;
		goto out;
	}
	if ((r->holder = fork()) == 0)
		holder_main(r, &o, sv[1], log_fd, rep[1]);
	close(log_fd);
	close(rep[1]);
	rep[1] = -1;
	err = r->holder < 0 ? -errno : read_holder(rep[0], msg);
	if (err == 0 && msg[1] <= 0)
		err = -msg[0];
	if (err < 0) {
		run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "the worker could not be started: %s", strerror(-err));
		goto out;
	}
	r->worker = msg[1];
	/* Held before the holder may reap the worker (it waits for our byte). */
	r->worker_pidfd = (int)syscall(SYS_pidfd_open, r->worker, 0);
	(void)!write(rep[0], "g", 1);
	if (r->worker_pidfd < 0) {
		err = -errno;
		run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "pidfd_open(worker): %s", strerror(-err));
		goto out;
	}
	r->pidns = msg[0] == 0;
	r->pidns_err = msg[0];
	r->own_proc = msg[0] == 0 && msg[2] == 0;
	r->own_proc_err = msg[2];
	r->sock = sv[0];
	sv[0] = -1;
out:
	for (size_t i = 0; i < o.nll; i++)
		if (o.ll[i].fd >= 0)
			close(o.ll[i].fd);
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	if (rep[0] >= 0)
		close(rep[0]);
	if (rep[1] >= 0)
		close(rep[1]);
	strv_free(&keep);
	return err;
}

/* ---- the channel ---- */

int run_send(struct run *r, const char *method, json_t *params)
{
	json_t *req = json_pack("{s:i,s:s,s:o}", "id", ++r->next_id, "method", method, "params", params);
	int err = req ? frame_send(r->sock, r->nonce, req) : -ENOMEM;

	json_decref(req);
	return err;
}

/* The bytes of a stdout frame become its record: one object, '{' first and '}' last, in
 * ASCII (what the worker's encoder writes) with no line break, so no reader of JSON lines can
 * split it (not even at U+2028 or NEL). */
static bool record_bytes_ok(const char *body, size_t n)
{
	if (n < 2 || body[0] != '{' || body[n - 1] != '}')
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)body[i];

		if (c >= 0x80 || c == '\n' || c == '\r')
			return false;
	}
	return true;
}

/* An event's frame, checked before anything of it is written: exactly the members
 * doc/WORKER.md names, of their types, and for stdout the record's bytes. */
static bool event_ok(json_t *ev, const char *body, size_t n)
{
	const char *k = json_string_value(json_object_get(ev, "stream"));
	json_t *text = json_object_get(ev, "text"), *js = json_object_get(ev, "event"),
	       *cut = json_object_get(ev, "truncated");

	if (!k || !json_is_integer(json_object_get(ev, "turn")))
		return false;
	if (!strcmp(k, "stderr"))
		return json_object_size(ev) == 3 && json_is_string(text);
	if (strcmp(k, "stdout") != 0 || json_object_size(ev) != 4 || !json_is_boolean(cut))
		return false;
	/* the line as text, or (never cut) as the object it was: exactly one */
	if (text ? !json_is_string(text) : !json_is_object(js) || json_is_true(cut))
		return false;
	return record_bytes_ok(body, n);
}

/* Write the queued event lines. A batch the disk takes only in part keeps its whole lines and
 * cuts the partial one off again (the file is O_APPEND: the next write lands at the new end),
 * so the next line does not run on from it; the lines not
 * kept are counted lost. If the cut fails, nothing more is appended (every later event is
 * lost, and counted). */
static void events_flush(struct run *r)
{
	struct buf *o = &r->events_out;
	size_t done = 0, keep;

	if (!o->len)
		return;
	while (done < o->len) {
		ssize_t w = write(r->events_fd, o->data + done, o->len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	keep = done;
	if (done < o->len) {
		unsigned long long kept = 0;
		const char *p = o->data, *nl;

		while ((nl = memchr(p, '\n', (size_t)(o->data + done - p))) != NULL) {
			kept++;
			p = nl + 1;
		}
		keep = (size_t)(p - o->data);
		r->events_lost += r->events_out_lines - kept;
		if (keep < done && ftruncate(r->events_fd, (off_t)(r->events_bytes + keep)) < 0)
			r->events_broken = true;
	}
	r->events_bytes += keep;
	buf_reset(o);
	r->events_out_lines = 0;
}

/* A checked event frame (event_ok). A stdout line's record is {"seq","ts"} followed by the
 * frame's own members, copied as the worker encoded them: parsing proved them exactly those
 * members, so re-encoding would only cost time. */
static void write_event(struct run *r, json_t *ev, const char *body, size_t n)
{
	struct buf *o = &r->events_out;
	size_t start = o->len;
	char head[32 + TIME_RFC3339_MS_SIZE];
	int64_t now;
	int hn;

	if (!strcmp(json_string_value(json_object_get(ev, "stream")), "stderr")) {
		json_t *text = json_object_get(ev, "text");
		size_t len = json_string_length(text);

		if (r->stderr_bytes + len <= RUN_MAX_STDERR_BYTES)
			fd_write_all(r->stderr_fd, json_string_value(text), len);
		r->stderr_bytes += len;
		return;
	}
	r->events++;
	if ((now = now_epoch_ms()) != r->ts_ms || !r->ts[0]) {
		r->ts_ms = now;
		time_rfc3339_ms(now, r->ts);
	}
	hn = snprintf(head, sizeof(head), "{\"seq\":%llu,\"ts\":\"%s\",", r->events, r->ts);
	/* An event not in events.jsonl (over the cap, or a full disk) is counted, never silent. */
	if (r->events_broken || hn < 0 || (size_t)hn >= sizeof(head) || buf_append(o, head, (size_t)hn) < 0 ||
	    buf_append(o, body + 1, n - 1) < 0 || buf_putc(o, '\n') < 0 ||
	    r->events_bytes + o->len > RUN_MAX_EVENTS_BYTES) {
		o->len = start;
		r->events_lost++;
		return;
	}
	r->events_out_lines++;
	if (o->len >= RUN_EVENTS_BATCH_BYTES)
		events_flush(r);
}

/* A frame from the worker (parsed f, its bytes body[0..n)): an event or the response to
 * request `want` (0: none expected). Anything else is a protocol violation. 1 when the
 * awaited response arrived (*ret owned). */
static int handle_frame(struct run *r, json_t *f, const char *body, size_t n, int want, json_t **ret)
{
	json_t *id = json_object_get(f, "id");

	if (json_object_get(f, "stream")) {
		if (!event_ok(f, body, n))
			return -EPROTO;
		write_event(r, f, body, n);
		return 0;
	}
	/* one response per request: a second one with the same id answers nothing */
	if (!want || *ret || !json_is_integer(id) || json_integer_value(id) != want ||
	    !json_is_boolean(json_object_get(f, "ok")))
		return -EPROTO;
	*ret = json_incref(f);
	return 1;
}

/* Read what the worker sent; handle every whole frame. 1 when the awaited response is in
 * *ret; 0 otherwise; -EPIPE when the worker is gone; -EPROTO on a bad frame. */
int run_pump(struct run *r, int want, json_t **ret)
{
	ssize_t n = frame_fill(r->sock, &r->in);
	size_t off = 0;
	int got = 0;

	if (n == 0 || n == -ECONNRESET)
		return -EPIPE;
	if (n < 0)
		return n == -EAGAIN ? 0 : (int)n;
	for (;;) {
		const char *why = NULL;
		size_t used = 0;
		json_t *f = NULL;
		int d = frame_decode(r->nonce, r->in.data + off, r->in.len - off, &used, &f, &why);

		if (d == 0)
			break;
		if (d < 0) {
			snprintf(r->proto_why, sizeof(r->proto_why), "the worker sent a bad frame: %s", why);
			got = -EPROTO;
			break;
		}
		d = handle_frame(r, f, r->in.data + off + FRAME_HEADER_LEN, used - FRAME_HEADER_LEN, want, ret);
		off += used;
		json_decref(f);
		if (d < 0) {
			snprintf(r->proto_why, sizeof(r->proto_why), "the worker sent an unexpected frame");
			got = -EPROTO;
			break;
		}
		got |= d;
	}
	/* the events before a bad frame are kept too; a response before it is not handed back */
	events_flush(r);
	buf_consume(&r->in, off);
	if (got < 0 && ret && *ret) {
		json_decref(*ret);
		*ret = NULL;
	}
	return got;
}

/* Send a request and wait for its response (events keep flowing meanwhile). */
int run_call(struct run *r, const char *method, json_t *params, unsigned ms, json_t **ret)
{
	uint64_t end = now_mono_ms() + ms;
	int err = run_send(r, method, params), want = r->next_id;

	*ret = NULL;
	while (err == 0) {
		struct pollfd p = { .fd = r->sock, .events = POLLIN };
		uint64_t now = now_mono_ms();
		int n;

		if (now >= end)
			return -ETIMEDOUT;
		n = poll(&p, 1, (int)(end - now));
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0 && (err = run_pump(r, want, ret)) == 1)
			return 0;
	}
	return err;
}

void run_worker_lost(struct run *r, int err, const char *during)
{
	char tail[600];

	if (err == -EPROTO) {
		run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "%s during %s", r->proto_why, during);
		return;
	}
	run_log_tail(r, "logs/worker.log", tail, sizeof(tail));
	run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "the worker %s during %s%s%s",
		 err == -ETIMEDOUT ? "did not answer" : "exited", during, tail[0] ? ": " : "", tail);
	r->worker_gone = err != -ETIMEDOUT;
}
