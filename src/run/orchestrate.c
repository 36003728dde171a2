/* SPDX-License-Identifier: MIT */
/* orchestrate.c: the sequence of `proctor run` (ARCHITECTURE.md section 8): validate, make the
 * run directory, take an identity slot, stage, build bundles, start mockd, arm the guard, start
 * the worker and check its identity, run the agent, tear down, write result.json. Every step
 * after validation records its failure and falls through to teardown: teardown always runs.
 * Root never follows a path the agent can change: the run directory is root's, the agent's
 * directories are only opened with O_NOFOLLOW beneath it, and only after the agent is gone. */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "../bundle/build.h"
#include "../bundle/stage.h"
#include "../guard/guard.h"
#include "../lib/fd.h"
#include "../lib/json.h"
#include "../lib/util.h"
#include "../mock/fixture.h"
#include "../mock/service.h"
#include "../priv/drop.h"
#include "../priv/identity.h"
#include "../priv/reap.h"
#include "rundir.h"
#include "worker.h"

static void say(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct run *r, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!r->o->log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	r->o->log(line);
}

/* ---- validate and stage ---- */

static int find_binaries(struct run *r)
{
	ssize_t n = readlink("/proc/self/exe", r->self, sizeof(r->self) - 1);
	char *slash;

	if (n <= 0)
		return -errno;
	r->self[n] = '\0';
	snprintf(r->shim, sizeof(r->shim), "%s", r->self);
	if ((slash = strrchr(r->shim, '/')))
		snprintf(slash + 1, sizeof(r->shim) - (size_t)(slash + 1 - r->shim), "proctor-shim");
	return access(r->shim, X_OK) < 0 ? -errno : 0;
}

static char *default_dir(const struct run *r)
{
	char stamp[32], *p;
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	if (mkdir("runs", 0755) < 0 && errno != EEXIST)
		return NULL;
	return asprintf(&p, "runs/%s-%s-%d", r->t.id ? r->t.id : "invalid", stamp, (int)getpid()) < 0 ? NULL : p;
}

static int make_rundir(struct run *r)
{
	char *rel = r->o->out ? strdup(r->o->out) : default_dir(r);
	int err;

	if (!rel)
		return -ENOMEM;
	err = rundir_create(rel, &r->dfd);
	if (err == 0 && !(r->dir = realpath(rel, NULL)))
		err = -errno;
	if (err < 0)
		diag_error(&r->d, "%s: %s", rel, err == -EEXIST ? "exists and is not empty" : strerror(-err));
	free(rel);
	return err;
}

/* Copy the task file as given: the record of what ran. */
static void save_task(struct run *r)
{
	if (rundir_copy_file(r->o->task_file, r->dfd, "task.json", 0600, 0, 0) < 0)
		json_array_append_new(r->teardown_errors, json_string("task.json could not be copied into the run"));
}

static int take_slot(struct run *r)
{
	const struct task *t = &r->t;
	struct reap_result rr;
	int err = rundir_take_slot(t->agent_uid, t->slots, &r->slot, &r->slot_fd);

	if (err < 0) {
		run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "no identity slot: %s",
			 err == -EBUSY ? "every slot is taken by another run (identity.slots)" : strerror(-err));
		return err;
	}
	r->slot_taken = true;
	r->uid = t->agent_uid + r->slot;
	r->gid = t->agent_gid + r->slot;
	r->muid = t->mockd_uid + r->slot;
	r->rgid = t->rpc_gid + r->slot;
	/* The lock is ours: anything still running with these uids is left from a dead run. */
	if (reap_uid(r->uid, 100, RUN_REAP_MS, &rr) < 0 || reap_uid(r->muid, 100, RUN_REAP_MS, &rr) < 0) {
		run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "processes of uid %u or %u from an earlier run survive",
			 (unsigned)r->uid, (unsigned)r->muid);
		return -EBUSY;
	}
	return 0;
}

static int stage_dirs(struct run *r)
{
	const struct { const char *name; mode_t mode; bool agent; } dirs[] = {
		{ "private", 0700, false }, { "private/fixtures", 0700, false }, { "sock", 0750, false },
		{ "bin", 0755, false }, { "workspace", 0700, true }, { "home", 0700, true }, { "tmp", 0700, true },
		{ "bundles", 0755, false }, { "agent", 0755, false }, { "guard", 0755, false }, { "logs", 0755, false },
	};
	int err;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		err = rundir_mkdir(r->dfd, dirs[i].name, dirs[i].mode, dirs[i].agent ? r->uid : 0,
				   !strcmp(dirs[i].name, "sock") ? r->rgid : dirs[i].agent ? r->gid : 0);
		if (err < 0) {
			run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "%s/%s: %s", r->dir, dirs[i].name, strerror(-err));
			return err;
		}
	}
	return 0;
}

/* private/mock-config.json: the task's entries, each fixture copied to private/fixtures/. */
static int stage_mocks(struct run *r)
{
	json_t *cfg = json_pack("{s:i,s:[]}", "version", 1, "tools"), *tools = json_object_get(cfg, "tools");
	struct buf b;
	int err = 0;

	buf_init(&b, 0);
	for (size_t i = 0; i < r->t.nmocks && err == 0; i++) {
		char name[160], rel[200];
		json_t *e = json_deep_copy(r->t.mocks[i].entry);

		snprintf(name, sizeof(name), "%zu-%s.json", i, r->t.mocks[i].tool);
		snprintf(rel, sizeof(rel), "private/fixtures/%s", name);
		json_object_set_new(e, "fixture", json_sprintf("fixtures/%s", name));
		json_array_append_new(tools, e);
		if ((err = rundir_copy_file(r->t.mocks[i].fixture, r->dfd, rel, 0600, 0, 0)) < 0)
			diag_error(&r->d, "%s: mocks[%zu].fixture: %s: %s", r->t.file, i, r->t.mocks[i].fixture,
				   strerror(-err));
	}
	if (err == 0 && (err = json_dump_buf(cfg, JSON_INDENT(2), &b)) == 0)
		err = rundir_write(r->dfd, "private/mock-config.json", b.data, b.len, 0600, 0, 0);
	buf_free(&b);
	json_decref(cfg);
	return err;
}

/* mockd's own loader over the staged config: its errors are the task's (config_error), named
 * by the task's fixture paths rather than the staged copies. */
static int check_mocks(struct run *r)
{
	struct mock_config *cfg = NULL;
	struct mock_service *svc = NULL;
	struct diag d;
	char *path = run_path(r, "private/mock-config.json");
	int err;

	diag_init(&d);
	err = path ? mock_config_load(path, &d, &cfg) : -ENOMEM;
	if (err == 0)
		err = mock_service_load(cfg, r->self, &d, &svc);
	for (size_t i = 0; i < d.n; i++) {
		if (d.msgs[i].level != DIAG_ERROR)
			continue;
		diag_error(&r->d, "%s: mocks: %s", r->t.file, d.msgs[i].text);
	}
	if (err < 0 && d.n == 0)
		diag_error(&r->d, "%s: mocks: %s", r->t.file, strerror(-err));
	for (size_t i = 0; err < 0 && i < r->t.nmocks; i++)
		diag_error(&r->d, "%s: mocks[%zu] (%s) was staged as %s/private/fixtures/%zu-%s.json", r->t.file, i,
			   r->t.mocks[i].fixture, r->dir, i, r->t.mocks[i].tool);
	mock_service_free(svc);
	diag_free(&d);
	free(path);
	return err;
}

static int stage_bin(struct run *r)
{
	for (size_t i = 0; i < r->t.nmocks; i++) {
		char rel[128];

		snprintf(rel, sizeof(rel), "bin/%s", r->t.mocks[i].tool);
		if (symlinkat(r->shim, r->dfd, rel) < 0)
			return -errno;
	}
	return fchmodat(r->dfd, "bin", 0555, 0) < 0 ? -errno : 0;
}

static int stage_agent(struct run *r)
{
	const char *base;
	char rel[PATH_MAX];
	int err;

	if (r->t.agent_script) {
		base = strrchr(r->t.agent_script, '/') + 1;
		snprintf(rel, sizeof(rel), "agent/%s", base);
		if ((err = rundir_copy_file(r->t.agent_script, r->dfd, rel, 0555, 0, 0)) < 0) {
			diag_error(&r->d, "%s: agent.command[0]: %s: %s", r->t.file, r->t.agent_script, strerror(-err));
			return err;
		}
	}
	return fchmodat(r->dfd, "agent", 0555, 0) < 0 ? -errno : 0;
}

static int stage(struct run *r)
{
	int err, ws;

	if ((err = stage_dirs(r)) < 0)
		return err;
	if (r->t.workspace_from) {
		ws = openat(r->dfd, "workspace", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		err = ws < 0 ? -errno : rundir_copy_tree(r->t.workspace_from, ws, r->uid, r->gid, &r->d);
		if (ws >= 0)
			close(ws);
		if (err < 0) {
			run_fail(r, "config_error", RUN_EXIT_INVALID, "workspace.from could not be copied");
			return err;
		}
	}
	if ((err = stage_mocks(r)) < 0 || (r->t.nmocks && (err = check_mocks(r)) < 0) || (err = stage_agent(r)) < 0) {
		run_fail(r, "config_error", RUN_EXIT_INVALID, "the task's mocks or agent could not be staged");
		return err;
	}
	if ((err = stage_bin(r)) < 0) {
		run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "bin/: %s", strerror(-err));
		return err;
	}
	return 0;
}

static int build_bundles(struct run *r)
{
	for (size_t i = 0; i < r->t.plugins.n; i++) {
		char rel[64], *dest;
		struct manifest *m = NULL;
		int err;

		snprintf(rel, sizeof(rel), "bundles/plugin-%zu", i);
		if (!(dest = run_path(r, rel)))
			return -ENOMEM;
		err = bundle_build(r->t.plugins.v[i], dest, NULL, &r->d, &m);
		if (err < 0) {
			run_fail(r, "config_error", RUN_EXIT_INVALID, "agent.plugins[%zu].path: %s: the bundle was refused",
				 i, r->t.plugins.v[i]);
			free(dest);
			return err;
		}
		r->manifests[r->nmanifests++] = m;
		json_array_append_new(r->bundles, json_pack("{s:s,s:s,s:s,s:I,s:n}", "source", r->t.plugins.v[i], "path",
							    dest, "digest", m->digest, "files",
							    (json_int_t)m->nfiles, "verified_after"));
		free(dest);
	}
	return 0;
}

/* ---- the guard ---- */

static int arm_guard(struct run *r)
{
	char *marker, *settings, *ws, *denials;
	json_t *cfg = NULL;
	struct buf b;
	int err = -ENOMEM, fd;

	if (r->t.guard_harness < 0) {
		run_layer(r, "guard", "absent", "the task sets guard: false");
		return 0;
	}
	marker = run_path(r, "guard/marker.json");
	settings = run_path(r, "guard/settings.json");
	ws = run_path(r, "workspace");
	denials = run_path(r, "logs/guard-denials.jsonl");
	buf_init(&b, 0);
	if (marker && settings && ws && denials) {
		/* Agent-writable (the hook runs as the agent), so it is counted but never trusted. */
		fd = run_open_log(r, "logs/guard-denials.jsonl", 0600, r->uid, r->gid);
		err = fd < 0 ? fd : 0;
		if (fd >= 0)
			close(fd);
		if (err == 0)
			err = guard_marker_write(marker, ws, r->t.timeout_s + 3600, denials);
		if (err == 0 && !(cfg = guard_hook_config((enum harness)r->t.guard_harness, r->self, marker)))
			err = -ENOMEM;
		if (err == 0 && (err = json_dump_buf(cfg, JSON_INDENT(2), &b)) == 0)
			err = rundir_write(r->dfd, "guard/settings.json", b.data, b.len, 0644, 0, 0);
		if (err == 0)
			err = rundir_hash_file(r->dfd, "guard/marker.json", r->marker_sha, NULL);
	}
	if (err < 0)
		run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "guard: %s", strerror(-err));
	else
		run_layer(r, "guard", "enforced",
			  "%s hook; marker and settings root-owned in guard/, outside the workspace; the kernel (Landlock) "
			  "enforces the same write boundary",
			  harness_name((enum harness)r->t.guard_harness));
	json_decref(cfg);
	buf_free(&b);
	free(marker);
	free(settings);
	free(ws);
	free(denials);
	return err;
}

/* ---- the worker's identity, checked by the worker and again from outside ---- */

static int proc_identity(pid_t pid, struct identity *id)
{
	char path[64];
	const char *field;
	struct buf b;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	buf_init(&b, 0);
	err = fd_read_file(path, IDENTITY_STATUS_MAX_BYTES, &b);
	if (err == 0)
		err = identity_parse(b.data ? b.data : "", b.len, id, &field);
	buf_free(&b);
	return err;
}

/* Session id and controlling terminal from /proc/PID/stat. */
static int proc_session(pid_t pid, int *ret_sid, int *ret_tty)
{
	char path[64];
	const char *p;
	struct buf b;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	buf_init(&b, 0);
	err = fd_read_file(path, 4096, &b);
	if (err == 0 && (!(p = strrchr(b.data ? b.data : "", ')')) ||
			 sscanf(p + 1, " %*c %*d %*d %d %d", ret_sid, ret_tty) != 2))
		err = -EINVAL;
	buf_free(&b);
	return err;
}

static void expect_for(const struct run *r, struct identity_expect *e)
{
	*e = (struct identity_expect){ .uid = true, .gid = true, .groups = true, .no_caps = true, .nnp = true,
				       .want_uid = r->uid, .want_gid = r->gid };
	if (r->t.nmocks)
		e->want_groups[e->nwant_groups++] = r->rgid;
}

static json_t *probe_paths(struct run *r)
{
	json_t *a = json_array();
	char rel[200], *p = NULL;

	for (size_t i = 0; i < r->t.nmocks; i++) {
		snprintf(rel, sizeof(rel), "private/fixtures/%zu-%s.json", i, r->t.mocks[i].tool);
		if ((p = run_path(r, rel)))
			json_array_append_new(a, json_string(p));
		free(p);
	}
	if (r->t.nmocks && (p = run_path(r, "private/mock-config.json")))
		json_array_append_new(a, json_string(p));
	free(p);
	if (r->t.nmocks && (p = run_path(r, "logs/calls.jsonl")))
		json_array_append_new(a, json_string(p));
	free(p);
	for (size_t i = 0; i < r->t.private_paths.n; i++)
		json_array_append_new(a, json_string(r->t.private_paths.v[i]));
	for (size_t i = 0; i < r->t.nmocks; i++)
		json_array_append_new(a, json_string(r->t.mocks[i].fixture));
	json_array_append_new(a, json_string(r->t.file));
	return a;
}

static void record_probes(struct run *r, json_t *probes)
{
	size_t i, refused = 0;
	json_t *p;

	json_array_foreach(probes, i, p) {
		if (!json_is_string(json_object_get(p, "error"))) {
			run_layer(r, "fixtures_private", "failed", "the agent's uid could open %s",
				  json_string_value(json_object_get(p, "path")));
			return;
		}
		refused++;
	}
	run_layer(r, "fixtures_private", "enforced",
		  "%zu paths (the staged fixtures, mock config, journal, the task's private and fixture files, the task "
		  "file) refused to the agent's uid, checked by opening them from inside",
		  refused);
}

static void record_identity(struct run *r, json_t *res, const struct identity *outside)
{
	json_t *ll = json_object_get(json_object_get(res, "identity"), "landlock");
	int abi = (int)json_integer_value(json_object_get(ll, "abi")), sid = -1, tty = -1;

	run_layer(r, "uid", "enforced", "uid %u and gid %u in all four slots, checked by the worker and from /proc/%d/status",
		  (unsigned)r->uid, (unsigned)r->gid, (int)r->worker);
	if (r->t.nmocks)
		run_layer(r, "groups", "enforced", "exactly {%u}, the mock socket's group", (unsigned)r->rgid);
	else
		run_layer(r, "groups", "enforced", "none");
	run_layer(r, "capabilities", "enforced", "all five sets empty (bounding %016llx)",
		  (unsigned long long)outside->cap_bnd);
	run_layer(r, "no_new_privs", "enforced", "NoNewPrivs 1");
	if (json_is_true(json_object_get(ll, "enforced")))
		run_layer(r, "landlock", "enforced",
			  "ABI %d: read-write workspace/ home/ tmp/; read and execute the system directories, bin/, bundles/, "
			  "agent/ and ro_paths; everything else refused (proven: opening / fails)",
			  abi);
	else
		run_layer(r, "landlock", "failed", "the worker reports Landlock is not in effect");
	if (abi >= 6)
		run_layer(r, "landlock_scope", "enforced", "signals and abstract Unix sockets scoped to the agent (ABI %d)", abi);
	else
		run_layer(r, "landlock_scope", "absent", "Landlock ABI %d has no scoping (6 needed); the run's own uids "
							 "still keep other runs out of reach",
			  abi);
	if (r->pidns)
		run_layer(r, "pid_namespace", "enforced", "the worker is pid 1 of its own pid namespace: killing it ends every "
							  "agent process");
	else
		run_layer(r, "pid_namespace", "absent", "unshare(CLONE_NEWPID): %s; teardown sweeps by uid",
			  strerror(r->pidns_err));
	if (proc_session(r->worker, &sid, &tty) == 0 && sid == (int)r->worker && tty == 0 &&
	    json_integer_value(json_object_get(res, "tty_nr")) == 0)
		run_layer(r, "no_tty", "enforced", "the worker leads its own session with no controlling terminal; the "
						   "agent's stdin is a pipe, stdout and stderr pipes to the worker");
	else
		run_layer(r, "no_tty", "failed", "session %d, tty %d", sid, tty);
	if (json_integer_value(json_object_get(res, "dumpable")) == 0)
		run_layer(r, "non_dumpable", "enforced", "the worker cannot be traced or read by the agent's uid");
	else
		run_layer(r, "non_dumpable", "failed", "the worker is dumpable");
	record_probes(r, json_object_get(res, "probes"));
}

static bool layer_failed(const struct run *r)
{
	const char *k;
	json_t *v;

	json_object_foreach(r->isolation, k, v)
		if (!strcmp(json_string_value(json_object_get(v, "state")), "failed"))
			return true;
	return false;
}

static int hello(struct run *r)
{
	struct identity_expect e;
	struct identity outside;
	json_t *groups = json_array(), *params, *resp = NULL, *res;
	char *report = NULL;
	size_t bad;
	int err;

	expect_for(r, &e);
	for (size_t i = 0; i < e.nwant_groups; i++)
		json_array_append_new(groups, json_integer(e.want_groups[i]));
	params = json_pack("{s:{s:i,s:i,s:o},s:o}", "expect", "uid", (int)r->uid, "gid", (int)r->gid, "groups", groups,
			   "probe_unreadable", probe_paths(r));
	if ((err = run_call(r, "hello", params, RUN_HELLO_MS, &resp)) < 0) {
		run_worker_lost(r, err, "hello");
		return err;
	}
	res = json_object_get(resp, "result");
	if (!json_is_true(json_object_get(resp, "ok"))) {
		run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "the worker refused its identity: %s",
			 json_string_value(json_object_get(json_object_get(resp, "error"), "message")));
		json_decref(resp);
		return -EPERM;
	}
	r->hello = json_incref(res);
	json_decref(resp);
	if (proc_identity(r->worker, &outside) < 0 || (bad = identity_check(&outside, &e, &report))) {
		run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "/proc/%d/status does not show the expected identity: %s",
			 (int)r->worker, report ? report : "unreadable");
		free(report);
		return -EPERM;
	}
	free(report);
	record_identity(r, r->hello, &outside);
	if (layer_failed(r)) {
		run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "a required isolation layer is not in effect (see isolation)");
		return -EPERM;
	}
	return 0;
}

static void check_mockd(struct run *r)
{
	struct identity id;
	struct identity_expect e = { .uid = true, .gid = true, .groups = true, .no_caps = true, .nnp = true,
				     .want_uid = r->muid, .want_gid = r->muid, .nwant_groups = 1 };
	char *report = NULL;

	if (!r->t.nmocks) {
		run_layer(r, "mockd_identity", "absent", "the task has no mocks");
		return;
	}
	e.want_groups[0] = r->rgid;
	if (proc_identity(r->mockd, &id) < 0 || identity_check(&id, &e, &report))
		run_layer(r, "mockd_identity", "failed", "/proc/%d/status: %s", (int)r->mockd, report ? report : "unreadable");
	else
		run_layer(r, "mockd_identity", "enforced", "mockd runs as uid %u, groups {%u}, no capabilities, NoNewPrivs; "
							   "it loaded the fixtures as root and cannot read them again",
			  (unsigned)r->muid, (unsigned)r->rgid);
	free(report);
	if (layer_failed(r))
		run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "mockd is not running as its own unprivileged identity");
}

/* ---- the agent ---- */

static void env_add(json_t *env, const char *k, const char *v)
{
	json_array_append_new(env, json_sprintf("%s=%s", k, v));
}

static json_t *agent_env(struct run *r)
{
	json_t *env = json_array();
	const char *user_path = "/usr/local/bin:/usr/bin:/bin";
	char *p;

	for (size_t i = 0; i < r->t.env.n; i++)
		if (!strncmp(r->t.env.v[i], "PATH=", 5))
			user_path = r->t.env.v[i] + 5;
#define RUNP(rel, key)                                   \
	do {                                             \
		if ((p = run_path(r, rel))) {            \
			env_add(env, key, p);            \
			free(p);                         \
		}                                        \
	} while (0)
	RUNP("home", "HOME");
	RUNP("tmp", "TMPDIR");
	RUNP("workspace", "PWD");
	RUNP("workspace", "PROCTOR_WORKSPACE");
	if ((p = run_path(r, "bin"))) {
		json_array_append_new(env, json_sprintf("PATH=%s:%s", p, user_path));
		free(p);
	}
	env_add(env, "PROCTOR_PROMPT", r->t.prompt);
	if (r->t.nmocks)
		RUNP("sock/mock.sock", "PROCTOR_MOCK_SOCKET");
	if (r->t.guard_harness >= 0)
		RUNP("guard/settings.json", "PROCTOR_GUARD_SETTINGS");
#undef RUNP
	if (r->t.plugins.n) {
		struct buf b;

		buf_init(&b, 0);
		for (size_t i = 0; i < r->t.plugins.n; i++)
			buf_printf(&b, "%s%s/bundles/plugin-%zu", i ? ":" : "", r->dir, i);
		env_add(env, "PROCTOR_PLUGIN_DIRS", b.data);
		buf_free(&b);
	}
	for (size_t i = 0; i < r->t.env.n; i++)
		if (strncmp(r->t.env.v[i], "PATH=", 5) != 0)
			json_array_append_new(env, json_string(r->t.env.v[i]));
	for (size_t i = 0; i < r->t.env_pass.n; i++) {
		const char *v = getenv(r->t.env_pass.v[i]);

		if (v)
			env_add(env, r->t.env_pass.v[i], v);
	}
	return env;
}

static int start_agent(struct run *r)
{
	json_t *argv = json_array(), *resp = NULL, *params;
	char *cwd = run_path(r, "workspace");
	int err;

	for (size_t i = 0; i < r->t.argv.n; i++) {
		if (i == 0 && r->t.agent_script)
			json_array_append_new(argv, json_sprintf("%s/agent/%s", r->dir, strrchr(r->t.agent_script, '/') + 1));
		else
			json_array_append_new(argv, json_string(r->t.argv.v[i]));
	}
	r->agent_argv = json_incref(argv);
	params = json_pack("{s:o,s:o,s:s,s:s}", "argv", argv, "env", agent_env(r), "cwd", cwd ? cwd : "/", "stdin",
			   r->t.prompt);
	free(cwd);
	if ((err = run_call(r, "start", params, RUN_HELLO_MS, &resp)) < 0) {
		run_worker_lost(r, err, "start");
		return err;
	}
	if (!json_is_true(json_object_get(resp, "ok"))) {
		run_fail(r, "config_error", RUN_EXIT_INVALID, "agent.command: %s",
			 json_string_value(json_object_get(json_object_get(resp, "error"), "message")));
		json_decref(resp);
		return -EINVAL;
	}
	r->agent_pid = (pid_t)json_integer_value(json_object_get(json_object_get(resp, "result"), "pid"));
	r->agent_started = true;
	json_decref(resp);
	return 0;
}

static int wait_child(pid_t pid, unsigned ms, int *ret_status)
{
	uint64_t end = now_mono_ms() + ms;
	pid_t p;

	while ((p = waitpid(pid, ret_status, WNOHANG)) == 0 && now_mono_ms() < end) {
		struct timespec ts = { 0, 2 * 1000000L };

		nanosleep(&ts, NULL);
	}
	return p == pid ? 0 : -ETIMEDOUT;
}

/* Until the agent exits, the deadline passes, mockd dies, the worker misbehaves or we are told
 * to stop. */
static void watch_agent(struct run *r, int sigfd)
{
	uint64_t deadline = now_mono_ms() + (uint64_t)r->t.timeout_s * 1000;

	while (!r->agent_exited && !run_failed(r)) {
		struct pollfd p[3] = { { .fd = r->sock, .events = POLLIN }, { .fd = sigfd, .events = POLLIN },
				       { .fd = r->mockd_pidfd, .events = POLLIN } };
		uint64_t now = now_mono_ms();
		json_t *none = NULL;
		int n, err;

		if (now >= deadline) {
			r->timed_out = true;
			run_fail(r, "timeout", RUN_EXIT_FINAL, "the agent ran past limits.timeout_s (%u s)", r->t.timeout_s);
			break;
		}
		n = poll(p, 3, (int)(deadline - now));
		if (n < 0 && errno != EINTR)
			break;
		if (n > 0 && p[0].revents && (err = run_pump(r, 0, &none)) < 0)
			run_worker_lost(r, err, "the agent's run");
		if (p[1].revents) {
			struct signalfd_siginfo si;

			if (read(sigfd, &si, sizeof(si)) == sizeof(si))
				run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "interrupted by signal %u", si.ssi_signo);
		}
		if (p[2].revents && !run_failed(r)) {
			char tail[600];

			waitpid(r->mockd, &r->mockd_status, 0);
			r->mockd = 0;
			run_log_tail(r, "logs/mockd.log", tail, sizeof(tail));
			run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "mockd %s %d during the run: %s",
				 WIFEXITED(r->mockd_status) ? "exited with status" : "was killed by signal",
				 WIFEXITED(r->mockd_status) ? WEXITSTATUS(r->mockd_status) : WTERMSIG(r->mockd_status),
				 tail[0] ? tail : "no output");
		}
	}
	if (r->agent_exited) {
		size_t n = reap_count_uid(r->uid);

		r->left_behind = n > 0 ? (long)n - 1 : 0; /* less the worker */
	}
}

/* ---- teardown: always runs; nothing on its path can be signalled by the agent ---- */

static void teardown_error(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void teardown_error(struct run *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_array_append_new(r->teardown_errors, json_string(msg));
}

static void stop_worker(struct run *r)
{
	json_t *resp = NULL;
	int st, err;

	if (r->sock >= 0 && !r->worker_gone) {
		err = run_call(r, "stop", json_pack("{s:i}", "grace_ms", RUN_STOP_GRACE_MS), RUN_STOP_MS, &resp);
		if (err < 0 && r->agent_started)
			teardown_error(r, "the worker did not confirm stop (%s); killed", strerror(-err));
		json_decref(resp);
	}
	/* Root kills the worker (pid 1 of its namespace: the kernel ends the rest). */
	if (r->worker > 0)
		kill(r->worker, SIGKILL);
	if (r->holder > 0 && wait_child(r->holder, 2000, &st) < 0) {
		kill(r->holder, SIGKILL);
		waitpid(r->holder, &st, 0);
	}
	r->holder = r->worker = 0;
}

static void sweep(struct run *r, uid_t uid)
{
	struct reap_result rr;

	r->reap.ran = true;
	if (reap_uid(uid, 100, RUN_REAP_MS, &rr) == 0)
		return;
	for (size_t i = 0; i < rr.nsurvivors && r->reap.nsurvivors < 16; i++)
		r->reap.survivors[r->reap.nsurvivors++] = rr.survivors[i];
	teardown_error(r, "%zu processes of uid %u survived the sweep", rr.nsurvivors, (unsigned)uid);
}

static void stop_mockd(struct run *r)
{
	if (r->mockd > 0) {
		kill(r->mockd, SIGTERM);
		if (wait_child(r->mockd, 2000, &r->mockd_status) < 0) {
			kill(r->mockd, SIGKILL);
			waitpid(r->mockd, &r->mockd_status, 0);
			teardown_error(r, "mockd ignored SIGTERM; killed");
		}
		r->mockd = 0;
	}
	if (r->mockd_pidfd >= 0)
		close(r->mockd_pidfd);
	r->mockd_pidfd = -1;
}

static void check_after(struct run *r)
{
	char sum[65];

	if (faccessat(r->dfd, "sock/mock.sock", F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
	    unlinkat(r->dfd, "sock/mock.sock", 0) < 0)
		teardown_error(r, "sock/mock.sock could not be removed: %s", strerror(errno));
	r->socket_removed = faccessat(r->dfd, "sock/mock.sock", F_OK, AT_SYMLINK_NOFOLLOW) < 0;
	if (r->marker_sha[0] && (rundir_hash_file(r->dfd, "guard/marker.json", sum, NULL) < 0 || strcmp(sum, r->marker_sha)))
		teardown_error(r, "the guard's marker changed during the run");
	for (size_t i = 0; i < r->nmanifests; i++) {
		json_t *b = json_array_get(r->bundles, i);
		struct bundle_drift drift;
		struct diag d;

		diag_init(&d);
		json_object_set_new(b, "verified_after",
				    json_boolean(bundle_verify(json_string_value(json_object_get(b, "path")), r->manifests[i],
							       &d, &drift) == 0));
		diag_free(&d);
	}
}

static void teardown(struct run *r)
{
	uint64_t start = now_mono_ms();

	if (r->slot_taken) {
		stop_worker(r);
		sweep(r, r->uid);
		stop_mockd(r);
		sweep(r, r->muid); /* a passthrough's daemon */
		check_after(r);
	}
	if (r->reap.nsurvivors)
		run_fail(r, "teardown_failed", RUN_EXIT_INFRA, "%zu processes survived teardown", r->reap.nsurvivors);
	if (r->sock >= 0)
		close(r->sock);
	r->sock = -1;
	run_phase_end(r, PH_TEARDOWN, start);
}

/* ---- the sequence ---- */

static int validate(struct run *r)
{
	int err = find_binaries(r);

	if (err < 0) {
		diag_error(&r->d, "%s: %s (proctor-shim must be installed beside proctor)", r->shim, strerror(-err));
		return err;
	}
	if ((err = task_load(r->o->task_file, &r->d, &r->t)) < 0)
		return err;
	r->task_ok = true;
	return task_check_paths(&r->t, &r->d);
}

static int open_logs(struct run *r)
{
	if ((r->events_fd = run_open_log(r, "logs/events.jsonl", 0640, 0, 0)) < 0 ||
	    (r->stderr_fd = run_open_log(r, "logs/agent-stderr.log", 0640, 0, 0)) < 0) {
		run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "logs/: cannot create the event logs");
		return -EIO;
	}
	return 0;
}

/* Everything between staging and teardown, in order; stops at the first failure. */
static void run_steps(struct run *r, int sigfd)
{
	uint64_t t;

	t = now_mono_ms();
	if (take_slot(r) < 0 || stage(r) < 0 || open_logs(r) < 0)
		return run_phase_end(r, PH_STAGE, t);
	run_phase_end(r, PH_STAGE, t);
	say(r, "staged %s (agent uid %u, slot %u)", r->dir, (unsigned)r->uid, r->slot);
	t = now_mono_ms();
	if (build_bundles(r) < 0)
		return run_phase_end(r, PH_BUNDLES, t);
	run_phase_end(r, PH_BUNDLES, t);
	t = now_mono_ms();
	if (run_start_mockd(r) < 0)
		return run_phase_end(r, PH_MOCKD, t);
	check_mockd(r);
	run_phase_end(r, PH_MOCKD, t);
	t = now_mono_ms();
	if (run_failed(r) || arm_guard(r) < 0)
		return run_phase_end(r, PH_GUARD, t);
	run_phase_end(r, PH_GUARD, t);
	t = now_mono_ms();
	if (run_spawn_worker(r) < 0 || hello(r) < 0)
		return run_phase_end(r, PH_WORKER, t);
	run_phase_end(r, PH_WORKER, t);
	say(r, "the cage holds (%s); starting the agent", r->pidns ? "pid namespace, Landlock" : "Landlock");
	t = now_mono_ms();
	if (start_agent(r) == 0)
		watch_agent(r, sigfd);
	run_phase_end(r, PH_AGENT, t);
	if (r->agent_exited && !run_failed(r)) {
		if (json_is_integer(r->agent_exit_code) && json_integer_value(r->agent_exit_code) == 0)
			r->status = "completed", r->exit_code = RUN_EXIT_FINAL;
		else
			run_fail(r, "agent_failed", RUN_EXIT_FINAL, "the agent exited with %s %lld",
				 json_is_integer(r->agent_exit_code) ? "status" : "signal",
				 json_is_integer(r->agent_exit_code) ? json_integer_value(r->agent_exit_code)
								     : json_integer_value(r->agent_signal));
	}
}

static void run_free(struct run *r)
{
	task_free(&r->t);
	diag_free(&r->d);
	buf_free(&r->in);
	json_decref(r->hello);
	json_decref(r->agent_argv);
	json_decref(r->agent_exit_code);
	json_decref(r->agent_signal);
	json_decref(r->isolation);
	json_decref(r->bundles);
	json_decref(r->teardown_errors);
	for (size_t i = 0; i < r->nmanifests; i++)
		manifest_free(r->manifests[i]);
	if (r->events_fd >= 0)
		close(r->events_fd);
	if (r->stderr_fd >= 0)
		close(r->stderr_fd);
	if (r->slot_fd >= 0)
		close(r->slot_fd); /* releases the slot */
	if (r->dfd >= 0)
		close(r->dfd);
}

int run_task(const struct run_opts *o, struct diag *ret_diag, char **ret_dir)
{
	struct run r = { .o = o, .dfd = -1, .slot_fd = -1, .mockd_pidfd = -1, .mockd_status = -1, .sock = -1,
			 .events_fd = -1, .stderr_fd = -1, .left_behind = -1 };
	sigset_t stop, old;
	int sigfd, code;
	uint64_t t;

	r.t0 = t = now_mono_ms();
	r.started_ms = now_epoch_ms();
	diag_init(&r.d);
	buf_init(&r.in, FRAME_HEADER_LEN + FRAME_MAX_BODY);
	r.isolation = json_object();
	r.bundles = json_array();
	r.teardown_errors = json_array();
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigprocmask(SIG_BLOCK, &stop, &old);
	signal(SIGPIPE, SIG_IGN);
	sigfd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
	if (validate(&r) < 0)
		run_fail(&r, "config_error", RUN_EXIT_INVALID, "the task is invalid (%zu errors)", r.d.errors);
	run_phase_end(&r, PH_VALIDATE, t);
	if (make_rundir(&r) < 0) {
		code = RUN_EXIT_INVALID;
		goto out;
	}
	save_task(&r);
	if (!run_failed(&r))
		run_steps(&r, sigfd);
	teardown(&r);
	if (run_write_result(&r) < 0 && r.exit_code == RUN_EXIT_FINAL) {
		diag_error(&r.d, "%s/result.json could not be written", r.dir);
		r.exit_code = RUN_EXIT_INFRA;
	}
	if (r.exit_code != RUN_EXIT_FINAL && r.status)
		diag_error(&r.d, "%s: %s", r.status, r.reason);
	code = r.exit_code;
out:
	*ret_dir = r.dir;
	r.dir = NULL;
	*ret_diag = r.d;
	diag_init(&r.d);
	run_free(&r);
	if (sigfd >= 0)
		close(sigfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return code;
}
