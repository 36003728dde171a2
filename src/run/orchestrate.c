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
#include <grp.h>
#include <poll.h>
#include <pwd.h>
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

/* The agent must be able to reach its workspace: every directory above the run must let
 * others search it (the agent's uid is never their owner). Said before anything is staged. */
static int check_reachable(struct run *r)
{
	char path[PATH_MAX], *slash;
	struct stat st;

	snprintf(path, sizeof(path), "%s", r->dir);
	while ((slash = strrchr(path, '/')) && slash != path) {
		*slash = '\0';
		if (stat(path, &st) == 0 && !(st.st_mode & S_IXOTH)) {
			run_fail(r, "config_error", RUN_EXIT_INVALID,
				 "%s (mode %04o) does not let other users search it, so the agent could not reach its "
				 "workspace in %s: run elsewhere (--out) or chmod o+x it",
				 path, (unsigned)(st.st_mode & 07777), r->dir);
			return -EACCES;
		}
	}
	return 0;
}

/* Copy the task file as given: the record of what ran. */
static void save_task(struct run *r)
{
	if (rundir_copy_file(r->o->task_file, r->dfd, "task.json", 0600, 0, 0) < 0)
		json_array_append_new(r->teardown_errors, json_string("task.json could not be copied into the run"));
}

/* The run kills every process of its uids at its start and end: ids that belong to an account
 * of this host would take that account's processes with them. Refused before anything runs. */
static int check_ids_free(struct run *r)
{
	const struct task *t = &r->t;
	const struct {
		const char *field;
		unsigned base;
		bool group;
	} ids[] = {
		{ "identity.agent_uid", t->agent_uid, false }, { "identity.mockd_uid", t->mockd_uid, false },
		{ "identity.agent_gid", t->agent_gid, true },  { "identity.mockd_uid", t->mockd_uid, true },
		{ "identity.rpc_gid", t->rpc_gid, true },
	};

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		for (unsigned k = 0; k < t->slots; k++) {
			unsigned id = ids[i].base + k;
			const char *name = NULL;

			if (ids[i].group) {
				struct group *g = getgrgid((gid_t)id);

				name = g ? g->gr_name : NULL;
			} else {
				struct passwd *p = getpwuid((uid_t)id);

				name = p ? p->pw_name : NULL;
			}
			if (!name)
				continue;
			run_fail(
				r, "config_error", RUN_EXIT_INVALID,
				"%s: %s %u (slot %u) belongs to %s '%s' of this host; a run kills every process of "
				"its uids and must own its groups: choose ids no account has (proctor doctor checks them)",
				ids[i].field, ids[i].group ? "gid" : "uid", id, k, ids[i].group ? "group" : "user",
				name);
			return -EEXIST;
		}
	return 0;
}

static int take_slot(struct run *r)
{
	const struct task *t = &r->t;
	struct reap_result rr;
	const unsigned ids[RUN_SLOT_IDS] = { t->agent_uid, t->agent_gid, t->mockd_uid, t->rpc_gid };
	int err = rundir_take_slot(ids, t->slots, &r->stop, &r->slot, r->slot_fds);

	if (err == -EINTR)
		return err; /* the signal is still there for run_steps to take */
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

/* RUN/.reserve: RUN_RESERVE_BYTES of disk taken before the agent can take any; after teardown
 * result.json is written over it and takes its place (run_write_result), so the space is the
 * record's before anything else could take it. A filesystem without that much free fails the
 * run before it starts. */
static int take_reserve(struct run *r)
{
	int fd = openat(r->dfd, ".reserve", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600), err;

	if (fd < 0)
		err = errno;
	else
		err = posix_fallocate(fd, 0, RUN_RESERVE_BYTES); /* writes zeros where fallocate is missing */
	if (fd >= 0)
		close(fd);
	if (err) {
		run_fail(r, "isolation_failed", RUN_EXIT_INFRA,
			 "%s/.reserve: cannot set %u MiB aside for the record: %s", r->dir, RUN_RESERVE_BYTES >> 20,
			 strerror(err));
		return -err;
	}
	return 0;
}

static void give_back_reserve(struct run *r)
{
	if (r->dfd >= 0)
		unlinkat(r->dfd, ".reserve", 0);
}

/* Prompt "file": every turn's prompt written now, before the agent can fill the filesystem,
 * root's and unreadable (0400) until its turn opens it (turn_params: a chmod needs no space);
 * a later turn's prompt, a simulated user's reply, stays hidden until then. */
static int stage_prompts(struct run *r)
{
	char rel[64];
	int err;

	if (!r->desc_ok || r->desc.prompt != AGENT_PROMPT_FILE)
		return 0;
	for (size_t turn = 0; turn <= r->t.turns.n; turn++) {
		const char *prompt = turn ? r->t.turns.v[turn - 1] : r->t.prompt ? r->t.prompt : "";

		snprintf(rel, sizeof(rel), "agent/prompt-%zu.txt", turn);
		if ((err = rundir_write(r->dfd, rel, prompt, strlen(prompt), 0400, 0, 0)) < 0) {
			run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "%s/%s: %s", r->dir, rel, strerror(-err));
			return err;
		}
	}
	return 0;
}

static int stage_dirs(struct run *r)
{
	const struct {
		const char *name;
		mode_t mode;
		bool agent;
	} dirs[] = {
		{ "private", 0700, false },  { "private/fixtures", 0700, false },
		{ "sock", 0750, false },     { "bin", 0755, false },
		{ "workspace", 0700, true }, { "home", 0700, true },
		{ "tmp", 0700, true },       { "bundles", 0755, false },
		{ "agent", 0755, false },    { "guard", 0755, false },
		{ "logs", 0755, false },
	};
	int err;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		err = rundir_mkdir(r->dfd, dirs[i].name, dirs[i].mode, dirs[i].agent ? r->uid : 0,
				   !strcmp(dirs[i].name, "sock") ? r->rgid :
				   dirs[i].agent                 ? r->gid :
								   0);
		if (err < 0) {
			run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "%s/%s: %s", r->dir, dirs[i].name,
				 strerror(-err));
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

	if ((err = take_reserve(r)) < 0 || (err = stage_dirs(r)) < 0)
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
	return stage_prompts(r);
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
			run_fail(r, "config_error", RUN_EXIT_INVALID,
				 "agent.plugins[%zu].path: %s: the bundle was refused", i, r->t.plugins.v[i]);
			free(dest);
			return err;
		}
		r->manifests[r->nmanifests++] = m;
		json_array_append_new(r->bundles,
				      json_pack("{s:s,s:s,s:s,s:I,s:n}", "source", r->t.plugins.v[i], "path", dest,
						"digest", m->digest, "files", (json_int_t)m->nfiles, "verified_after"));
		free(dest);
	}
	return 0;
}

/* The descriptor's plugin_links: for each staged bundle that has the path "to" names, a link at
 * "at" (beneath home/, tmp/ or the workspace) pointing into the bundle. The directories on the
 * way are made agent-owned and never followed (rundir_mkpath); the link is root's and its
 * target, the bundle, stays root's and read-only: the agent may remove the link, not change
 * what it points to. */
static int link_one(struct run *r, size_t i, size_t k, const struct agent_vars *v)
{
	char *at = NULL, *to = NULL, inside[PATH_MAX];
	const char *why, *rel;
	struct stat st;
	int err;

	if ((err = agent_expand(r->desc.link_at.v[k], v, &at, &why)) < 0 ||
	    (err = agent_expand(r->desc.link_to.v[k], v, &to, &why)) < 0)
		goto out;
	snprintf(inside, sizeof(inside), "bundles/%s%s", v->plugin_bundle, to + strlen(v->plugin_dir));
	if (fstatat(r->dfd, inside, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		err = errno == ENOENT ? 0 : -errno; /* this plugin has no such path: no link */
		goto out;
	}
	err = -EINVAL;
	if (strncmp(at, r->dir, strlen(r->dir)) || at[strlen(r->dir)] != '/')
		goto out;
	rel = at + strlen(r->dir) + 1;
	if (strncmp(rel, "home/", 5) && strncmp(rel, "tmp/", 4) && strncmp(rel, "workspace/", 10))
		goto out;
	err = rundir_symlink(r->dfd, rel, to, r->uid, r->gid);
	if (err == 0)
		say(r, "linked %s -> %s", at, to);
out:
	if (err < 0)
		run_fail(r, "config_error", RUN_EXIT_INVALID, "%s: plugin_links[%zu]: agent.plugins[%zu]: %s: %s",
			 r->desc.file, k, i, at ? at : r->desc.link_at.v[k], strerror(-err));
	free(at);
	free(to);
	return err;
}

static int link_plugins(struct run *r)
{
	struct agent_vars v = { .workspace = r->ws_path, .home = r->home_path, .tmp = r->tmp_path };
	int err = 0;

	for (size_t i = 0; i < r->plugin_dirs.n && err == 0; i++) {
		char bundle[32];

		snprintf(bundle, sizeof(bundle), "plugin-%zu", i);
		v.plugin_dir = r->plugin_dirs.v[i];
		v.plugin_bundle = bundle;
		for (size_t k = 0; k < r->desc.link_at.n && err == 0; k++)
			err = link_one(r, i, k, &v);
	}
	return err;
}

/* ---- the guard ---- */

static int arm_guard(struct run *r)
{
	char *marker, *settings, *ws, *tmp, *home, *denials;
	json_t *cfg = NULL;
	struct buf b;
	int err = -ENOMEM, fd;

	if (r->t.guard_harness < 0) {
		run_layer(r, "guard", "absent", "guard: false in the task, or an agent without hooks");
		return 0;
	}
	marker = run_path(r, "guard/marker.json");
	settings = run_path(r, "guard/settings.json");
	ws = run_path(r, "workspace");
	tmp = run_path(r, "tmp");
	home = run_path(r, "home");
	denials = run_path(r, "logs/guard-denials.jsonl");
	buf_init(&b, 0);
	if (marker && settings && ws && tmp && home && denials) {
		/* Agent-writable (the hook runs as the agent), so it is counted but never trusted. */
		fd = run_open_log(r, "logs/guard-denials.jsonl", 0600, r->uid, r->gid);
		err = fd < 0 ? fd : 0;
		if (fd >= 0)
			close(fd);
		if (err == 0)
			err = guard_marker_write_roots(marker, (const char *const[]){ ws, tmp, home }, 3,
						       r->t.timeout_s + 3600, denials);
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
			  "%s hook; marker and settings root-owned in guard/, outside the workspace; %s",
			  harness_name((enum harness)r->t.guard_harness),
			  landlock_abi() ?
				  "the kernel (Landlock) enforces the same write boundary" :
				  "no Landlock in this kernel: the hook and file permissions are the boundary");
	json_decref(cfg);
	buf_free(&b);
	free(marker);
	free(settings);
	free(ws);
	free(tmp);
	free(home);
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
	p = err == 0 && b.data ? strrchr(b.data, ')') : NULL;
	/* NOLINTNEXTLINE(cert-err34-c): numbers the kernel formats, after the last ')' */
	if (err == 0 && (!p || sscanf(p + 1, " %*c %*d %*d %d %d", ret_sid, ret_tty) != 2))
		err = -EINVAL;
	buf_free(&b);
	return err;
}

static void expect_for(const struct run *r, struct identity_expect *e)
{
	*e = (struct identity_expect){ .uid = true,
				       .gid = true,
				       .groups = true,
				       .no_caps = true,
				       .nnp = true,
				       .want_uid = r->uid,
				       .want_gid = r->gid };
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

static void record_probes(struct run *r, json_t *probes, size_t asked)
{
	size_t i, refused = 0;
	json_t *p;

	/* Every path asked about must have an answer: a short list proves nothing. */
	if (json_array_size(probes) != asked) {
		run_layer(r, "fixtures_private", "failed", "the worker answered %zu of %zu probes",
			  json_array_size(probes), asked);
		return;
	}
	json_array_foreach(probes, i, p) {
		if (!json_is_string(json_object_get(p, "error"))) {
			run_layer(r, "fixtures_private", "failed", "the agent's uid could open %s",
				  json_string_value(json_object_get(p, "path")));
			return;
		}
		refused++;
	}
	run_layer(
		r, "fixtures_private", "enforced",
		"%zu paths (the staged fixtures, mock config, journal, the task's private and fixture files, the task "
		"file) refused to the agent's uid, checked by opening them from inside",
		refused);
}

static void record_identity(struct run *r, json_t *res, const struct identity *outside)
{
	json_t *ll = json_object_get(json_object_get(res, "identity"), "landlock");
	int abi = (int)json_integer_value(json_object_get(ll, "abi")), sid = -1, tty = -1;

	run_layer(r, "uid", "enforced",
		  "uid %u and gid %u in all four slots, checked by the worker and from /proc/%d/status",
		  (unsigned)r->uid, (unsigned)r->gid, (int)r->worker);
	if (r->t.nmocks)
		run_layer(r, "groups", "enforced", "exactly {%u}, the mock socket's group", (unsigned)r->rgid);
	else
		run_layer(r, "groups", "enforced", "none");
	run_layer(r, "capabilities", "enforced", "all five sets empty (bounding %016llx)",
		  (unsigned long long)outside->cap_bnd);
	run_layer(r, "no_new_privs", "enforced", "NoNewPrivs 1");
	if (r->no_landlock && !json_is_true(json_object_get(ll, "enforced")))
		; /* "absent", accepted by --allow-no-landlock: recorded when the worker was spawned */
	else if (json_is_true(json_object_get(ll, "enforced")))
		run_layer(
			r, "landlock", "enforced",
			"ABI %d: read-write workspace/ home/ tmp/; read and execute the system directories, bin/, bundles/, "
			"agent/ and ro_paths; everything else refused (proven: opening / fails)",
			abi);
	else
		run_layer(r, "landlock", "failed", "the worker reports Landlock is not in effect");
	if (r->no_landlock)
		run_layer(r, "landlock_scope", "absent", "no Landlock in this kernel");
	else if (abi >= 6)
		run_layer(r, "landlock_scope", "enforced",
			  "signals and abstract Unix sockets scoped to the agent (ABI %d)", abi);
	else
		run_layer(r, "landlock_scope", "absent",
			  "Landlock ABI %d has no scoping (6 needed); the run's own uids "
			  "still keep other runs out of reach",
			  abi);
	if (r->pidns)
		run_layer(r, "pid_namespace", "enforced",
			  "the worker is pid 1 of its own pid namespace: killing it ends every "
			  "agent process");
	else
		run_layer(r, "pid_namespace", "absent", "unshare(CLONE_NEWPID): %s; teardown sweeps by uid",
			  strerror(r->pidns_err));
	if (r->own_proc)
		run_layer(r, "private_proc", "enforced",
			  "a mount namespace with its own /proc: the agent sees its own "
			  "processes only");
	else
		run_layer(r, "private_proc", "absent",
			  "no mount namespace (%s): the agent can list the host's processes",
			  strerror(r->own_proc_err ? r->own_proc_err : r->pidns_err));
	if (proc_session(r->worker, &sid, &tty) == 0 && sid == (int)r->worker && tty == 0 &&
	    json_integer_value(json_object_get(res, "tty_nr")) == 0)
		run_layer(r, "no_tty", "enforced",
			  "the worker leads its own session with no controlling terminal; the "
			  "agent's stdin is a pipe, stdout and stderr pipes to the worker");
	else
		run_layer(r, "no_tty", "failed", "session %d, tty %d", sid, tty);
	if (json_integer_value(json_object_get(res, "dumpable")) == 0)
		run_layer(r, "non_dumpable", "enforced", "the worker cannot be traced or read by the agent's uid");
	else
		run_layer(r, "non_dumpable", "failed", "the worker is dumpable");
	record_probes(r, json_object_get(res, "probes"), r->nprobes);
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
	json_t *groups = json_array(), *params, *resp = NULL, *res, *probes;
	char *report = NULL;
	int err;

	expect_for(r, &e);
	for (size_t i = 0; i < e.nwant_groups; i++)
		json_array_append_new(groups, json_integer(e.want_groups[i]));
	probes = probe_paths(r);
	r->nprobes = json_array_size(probes);
	params = json_pack("{s:{s:i,s:i,s:o,s:b},s:o}", "expect", "uid", (int)r->uid, "gid", (int)r->gid, "groups",
			   groups, "landlock", !r->no_landlock, "probe_unreadable", probes);
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
	if (proc_identity(r->worker, &outside) < 0 || identity_check(&outside, &e, &report) > 0) {
		run_fail(r, "isolation_failed", RUN_EXIT_INFRA,
			 "/proc/%d/status does not show the expected identity: %s", (int)r->worker,
			 report ? report : "unreadable");
		free(report);
		return -EPERM;
	}
	free(report);
	record_identity(r, r->hello, &outside);
	if (layer_failed(r)) {
		run_fail(r, "isolation_failed", RUN_EXIT_INFRA,
			 "a required isolation layer is not in effect (see isolation)");
		return -EPERM;
	}
	return 0;
}

static void check_mockd(struct run *r)
{
	struct identity id;
	struct identity_expect e = { .uid = true,
				     .gid = true,
				     .groups = true,
				     .no_caps = true,
				     .nnp = true,
				     .want_uid = r->muid,
				     .want_gid = r->muid,
				     .nwant_groups = 1 };
	char *report = NULL;

	if (!r->t.nmocks) {
		run_layer(r, "mockd_identity", "absent", "the task has no mocks");
		return;
	}
	e.want_groups[0] = r->rgid;
	if (proc_identity(r->mockd, &id) < 0 || identity_check(&id, &e, &report))
		run_layer(r, "mockd_identity", "failed", "/proc/%d/status: %s", (int)r->mockd,
			  report ? report : "unreadable");
	else
		run_layer(r, "mockd_identity", "enforced",
			  "mockd runs as uid %u, groups {%u}, no capabilities, NoNewPrivs; "
			  "it loaded the fixtures as root and cannot read them again",
			  (unsigned)r->muid, (unsigned)r->rgid);
	free(report);
	if (layer_failed(r))
		run_fail(r, "isolation_failed", RUN_EXIT_INFRA,
			 "mockd is not running as its own unprivileged identity");
}

/* ---- the agent ---- */

/* Put NAME=VALUE (`kv`, taken) into `env`, replacing an earlier entry of the same name: a later
 * source wins, and no name is in the agent's environment twice (getenv(3) would return the
 * first, execve passes both). */
static void env_put(json_t *env, json_t *kv)
{
	const char *s = json_string_value(kv), *eq = s ? strchr(s, '=') : NULL;
	size_t i, n;
	json_t *e;

	if (!eq) {
		json_decref(kv);
		return;
	}
	n = (size_t)(eq - s) + 1;
	json_array_foreach(env, i, e) {
		if (!strncmp(json_string_value(e), s, n)) {
			json_array_set_new(env, i, kv);
			return;
		}
	}
	json_array_append_new(env, kv);
}

static void env_add(json_t *env, const char *k, const char *v)
{
	env_put(env, json_sprintf("%s=%s", k, v));
}

static void env_pass_from_caller(json_t *env, const struct strv *names)
{
	for (size_t i = 0; i < names->n; i++) {
		const char *val = getenv(names->v[i]);

		if (val)
			env_add(env, names->v[i], val);
	}
}

static json_t *agent_env(struct run *r, const struct agent_vars *v)
{
	json_t *env = json_array();
	const char *user_path = "/usr/local/bin:/usr/bin:/bin";
	char *p, turn[16];

	for (size_t i = 0; i < r->t.env.n; i++)
		if (!strncmp(r->t.env.v[i], "PATH=", 5))
			user_path = r->t.env.v[i] + 5;
	env_add(env, "HOME", v->home);
	env_add(env, "TMPDIR", v->tmp);
	env_add(env, "PWD", v->workspace);
	env_add(env, "PROCTOR_WORKSPACE", v->workspace);
	if ((p = run_path(r, "bin"))) {
		json_array_append_new(env, json_sprintf("PATH=%s:%s", p, user_path));
		free(p);
	}
	env_add(env, "PROCTOR_PROMPT", v->prompt);
	snprintf(turn, sizeof(turn), "%d", v->turn);
	env_add(env, "PROCTOR_TURN", turn);
	if (v->session_id)
		env_add(env, "PROCTOR_SESSION_ID", v->session_id);
	if (r->t.nmocks && (p = run_path(r, "sock/mock.sock"))) {
		env_add(env, "PROCTOR_MOCK_SOCKET", p);
		free(p);
	}
	if (v->guard_settings)
		env_add(env, "PROCTOR_GUARD_SETTINGS", v->guard_settings);
	if (r->t.plugins.n) {
		struct buf b;

		buf_init(&b, 0);
		for (size_t i = 0; i < r->plugin_dirs.n; i++)
			buf_printf(&b, "%s%s", i ? ":" : "", r->plugin_dirs.v[i]);
		env_add(env, "PROCTOR_PLUGIN_DIRS", b.data);
		buf_free(&b);
	}
	/* Then, each replacing an earlier value of the same name: the descriptor's pass-through and
	 * env, then the task's pass-through and env, so the task wins (doc/AGENTS.md). Neither may
	 * name what proctor sets above (refused when the descriptor and the task are loaded). */
	env_pass_from_caller(env, &r->desc.env_pass);
	for (size_t i = 0; i < r->desc.env.n; i++) {
		char *val = NULL;
		const char *why;

		if (agent_expand(r->desc.env.v[i], v, &val, &why) == 0)
			env_put(env, json_string(val));
		free(val);
	}
	env_pass_from_caller(env, &r->t.env_pass);
	for (size_t i = 0; i < r->t.env.n; i++)
		if (strncmp(r->t.env.v[i], "PATH=", 5) != 0)
			env_put(env, json_string(r->t.env.v[i]));
	return env;
}

static int wait_child(pid_t pid, unsigned ms, int *ret_status)
{
	uint64_t end = now_mono_ms() + ms;
	pid_t p;

	while ((p = waitpid(pid, ret_status, WNOHANG)) == 0 && now_mono_ms() < end)
		sleep_ms(2);
	return p == pid ? 0 : -ETIMEDOUT;
}

/* Wait for the response to request `want` while events flow, until `deadline`, a signal to
 * stop, mockd's death or the worker's. 0 with *ret; -ETIMEDOUT at the deadline (no status set);
 * otherwise the run has failed (status set). */
static int await_response(struct run *r, int want, int sigfd, uint64_t deadline, json_t **ret)
{
	*ret = NULL;
	for (;;) {
		struct pollfd p[3] = { { .fd = r->sock, .events = POLLIN },
				       { .fd = sigfd, .events = POLLIN },
				       { .fd = r->mockd_pidfd, .events = POLLIN } };
		uint64_t now = now_mono_ms();
		int n, err;

		if (now >= deadline)
			return -ETIMEDOUT;
		n = poll(p, 3, (int)(deadline - now));
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0 && p[0].revents && (err = run_pump(r, want, ret)) != 0) {
			if (err == 1)
				return 0;
			run_worker_lost(r, err, "the agent's turn");
			return err;
		}
		if (p[1].revents) {
			struct signalfd_siginfo si;

			if (read(sigfd, &si, sizeof(si)) == sizeof(si)) {
				run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "interrupted by signal %u",
					 si.ssi_signo);
				return -EINTR;
			}
		}
		if (p[2].revents) {
			char tail[600];

			waitpid(r->mockd, &r->mockd_status, 0);
			r->mockd = 0;
			run_log_tail(r, "logs/mockd.log", tail, sizeof(tail));
			run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "mockd %s %d during the run: %s",
				 WIFEXITED(r->mockd_status) ? "exited with status" : "was killed by signal",
				 WIFEXITED(r->mockd_status) ? WEXITSTATUS(r->mockd_status) : WTERMSIG(r->mockd_status),
				 tail[0] ? tail : "no output");
			return -EPIPE;
		}
	}
}

static int start_session(struct run *r)
{
	json_t *resp = NULL, *params;
	char *cwd = run_path(r, "workspace");
	int err;

	params = json_pack("{s:s,s:O}", "cwd", cwd ? cwd : "/", "events", r->desc.events_json);
	free(cwd);
	if ((err = run_call(r, "start", params, RUN_HELLO_MS, &resp)) < 0) {
		run_worker_lost(r, err, "start");
		return err;
	}
	if (!json_is_true(json_object_get(resp, "ok"))) {
		run_fail(r, "config_error", RUN_EXIT_INVALID, "the agent's events rules: %s",
			 json_string_value(json_object_get(json_object_get(resp, "error"), "message")));
		err = -EINVAL;
	}
	json_decref(resp);
	return err;
}

static void vars_for(struct run *r, struct agent_vars *v, int turn, const char *prompt)
{
	*v = (struct agent_vars){ .prompt = prompt,
				  .session_id = r->session_id,
				  .workspace = r->ws_path,
				  .home = r->home_path,
				  .tmp = r->tmp_path,
				  .exe = r->self,
				  .plugin_dirs = &r->plugin_dirs,
				  .task_command = &r->t.argv,
				  .task_args = &r->t.args,
				  .turn = turn };
	if (r->t.guard_harness >= 0) {
		v->guard_settings = r->guard_settings;
		v->guard_marker = r->guard_marker;
	}
}

static json_t *turn_params(struct run *r, int turn, const char *prompt, uint64_t timeout_ms)
{
	struct agent_vars v;
	struct strv argv = { 0 };
	json_t *a, *params;
	const char *why = "";
	char rel[64], *file = NULL;
	int err;

	vars_for(r, &v, turn, prompt);
	/* Prompt "file": staged by stage_prompts() in agent/, which is root's (the agent can neither
	 * plant a link at the name nor change the text); readable from its turn on. */
	if (r->desc.prompt == AGENT_PROMPT_FILE) {
		snprintf(rel, sizeof(rel), "agent/prompt-%d.txt", turn);
		err = fchmodat(r->dfd, rel, 0444, 0) < 0 ? -errno : 0;
		if (err < 0 || !(file = run_path(r, rel))) {
			run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "%s/%s: %s", r->dir, rel,
				 strerror(err < 0 ? -err : ENOMEM));
			return NULL;
		}
		v.prompt_file = file;
	}
	if (agent_argv(&r->desc, &v, &argv, &why) < 0) {
		free(file);
		run_fail(r, "agent_failed", RUN_EXIT_FINAL, "turn %d: the agent's argv cannot be built: %s", turn, why);
		return NULL;
	}
	/* A task-shipped script runs from agent/, where it was staged. */
	if (r->t.agent_script && argv.n && !strcmp(argv.v[0], r->t.argv.v[0])) {
		free(argv.v[0]);
		argv.v[0] = NULL;
		if (asprintf(&argv.v[0], "%s/agent/%s", r->dir, strrchr(r->t.agent_script, '/') + 1) < 0)
			argv.v[0] = strdup("");
	}
	a = json_array();
	for (size_t i = 0; i < argv.n; i++)
		json_array_append_new(a, json_string(argv.v[i]));
	if (!r->agent_argv)
		r->agent_argv = json_incref(a);
	params = json_pack("{s:i,s:o,s:o,s:s?,s:I}", "turn", turn, "argv", a, "env", agent_env(r, &v), "stdin",
			   r->desc.prompt == AGENT_PROMPT_STDIN ? prompt : NULL, "timeout_ms", (json_int_t)timeout_ms);
	strv_free(&argv);
	free(file);
	return params;
}

/* What one turn's answer says, recorded in result.json's "turns"; 1 to go on with the next turn,
 * 0 to stop (the status is set when the session cannot go on). */
static int turn_record(struct run *r, int turn, json_t *resp, uint64_t started)
{
	bool ok = json_is_true(json_object_get(resp, "ok"));
	json_t *res = json_object_get(resp, ok ? "result" : "error"), *rec = json_deep_copy(res);
	const char *type = json_string_value(json_object_get(res, "type"));
	const char *status = ok ? json_string_value(json_object_get(res, "status")) : type;
	const char *sid = json_string_value(json_object_get(res, "session_id"));

	json_object_set_new(rec, "turn", json_integer(turn));
	json_object_set_new(rec, "status", json_string(status ? status : "unknown"));
	json_object_set_new(rec, "duration_ms", json_integer((json_int_t)(now_mono_ms() - started)));
	json_object_del(rec, "type");
	/* Every key of doc/RESULT.md in every turn: null or false where it does not apply. */
	if (!json_object_get(rec, "message"))
		json_object_set_new(rec, "message", json_null());
	json_object_set_new(rec, "discarded", json_false());
	json_array_append_new(r->turns, rec);
	json_decref(r->agent_exit_code);
	json_decref(r->agent_signal);
	r->agent_exit_code = json_incref(json_object_get(res, "exit_code"));
	r->agent_signal = json_incref(json_object_get(res, "signal"));
	if (ok && sid) {
		free(r->session_id);
		r->session_id = strdup(sid);
	}
	if (ok && status && !strcmp(status, "completed"))
		return 1;
	if (type && !strcmp(type, "turn_timeout")) {
		json_t *dresp = NULL;

		/* Discarded: nothing of it carries over, except a session it started when there was none
		 * yet (the agent's transcript exists; the next turn resumes it). */
		if (!r->session_id && json_is_string(json_object_get(res, "session_id")))
			r->session_id = strdup(json_string_value(json_object_get(res, "session_id")));
		json_object_set_new(rec, "discarded", json_true());
		if (run_call(r, "discard_pending_turn", json_pack("{s:i}", "turn", turn), RUN_STOP_MS, &dresp) < 0)
			run_worker_lost(r, -ETIMEDOUT, "discard_pending_turn");
		json_decref(dresp);
		r->last_turn_timed_out = true;
		return 1;
	}
	if (type && !strcmp(type, "config_error")) {
		run_fail(r, "config_error", RUN_EXIT_INVALID, "turn %d: %s", turn,
			 json_string_value(json_object_get(res, "message")));
		return 0;
	}
	if (type)
		run_fail(r, "agent_failed", RUN_EXIT_FINAL, "%s%s%s",
			 json_string_value(json_object_get(res, "message")),
			 json_is_string(json_object_get(res, "error")) ? ": " : "",
			 json_is_string(json_object_get(res, "error")) ?
				 json_string_value(json_object_get(res, "error")) :
				 "");
	else if (r->desc.events.framing == EVENTS_JSON_LINES)
		run_fail(r, "agent_failed", RUN_EXIT_FINAL, "turn %d ended failed, as the agent reported%s%s", turn,
			 json_is_string(json_object_get(res, "error")) ? ": " : "",
			 json_is_string(json_object_get(res, "error")) ?
				 json_string_value(json_object_get(res, "error")) :
				 "");
	else
		run_fail(r, "agent_failed", RUN_EXIT_FINAL, "turn %d failed: %s %lld%s%s", turn,
			 json_is_integer(r->agent_exit_code) ? "exit status" : "signal",
			 json_is_integer(r->agent_exit_code) ? json_integer_value(r->agent_exit_code) :
							       json_integer_value(r->agent_signal),
			 json_is_string(json_object_get(res, "error")) ? ": " : "",
			 json_is_string(json_object_get(res, "error")) ?
				 json_string_value(json_object_get(res, "error")) :
				 "");
	return 0;
}

/* Every turn in order, within the task's time; a timed-out turn is discarded and the session
 * goes on with the next one. */
static void run_turns(struct run *r, int sigfd)
{
	uint64_t deadline = now_mono_ms() + (uint64_t)r->t.timeout_s * 1000;
	size_t nturns = 1 + r->t.turns.n;

	if (start_session(r) < 0)
		return;
	r->agent_started = true;
	for (size_t turn = 0; turn < nturns && !run_failed(r); turn++) {
		const char *prompt = turn ? r->t.turns.v[turn - 1] : r->t.prompt;
		uint64_t now = now_mono_ms(), left = deadline > now ? deadline - now : 0, tmo = left;
		json_t *params, *resp = NULL;
		int err, want;

		if (r->t.turn_timeout_s && (uint64_t)r->t.turn_timeout_s * 1000 < tmo)
			tmo = (uint64_t)r->t.turn_timeout_s * 1000;
		if (!left || !(params = turn_params(r, (int)turn, prompt, tmo)))
			break;
		r->last_turn_timed_out = false;
		if ((err = run_send(r, "communicate", params)) < 0) {
			run_worker_lost(r, err, "communicate");
			break;
		}
		want = r->next_id;
		/* The worker enforces the turn's limit; ours is the backstop, past its kill grace. */
		err = await_response(r, want, sigfd, now + tmo + WORKER_KILL_GRACE_MS + 4000, &resp);
		if (err == -ETIMEDOUT) {
			r->timed_out = true;
			run_fail(r, "timeout", RUN_EXIT_FINAL, "turn %zu did not end within its time limit", turn);
		}
		if (err < 0)
			break;
		err = turn_record(r, (int)turn, resp, now);
		json_decref(resp);
		if (!err)
			break;
	}
	if (!run_failed(r) && (r->last_turn_timed_out || now_mono_ms() >= deadline)) {
		r->timed_out = true;
		run_fail(r, "timeout", RUN_EXIT_FINAL, "the agent ran past %s (%u s)",
			 r->last_turn_timed_out && r->t.turn_timeout_s ? "limits.turn_timeout_s" : "limits.timeout_s",
			 r->last_turn_timed_out && r->t.turn_timeout_s ? r->t.turn_timeout_s : r->t.timeout_s);
	}
	if (!run_failed(r)) {
		r->status = "completed";
		r->exit_code = RUN_EXIT_FINAL;
	}
	r->agent_exited = true;
	{
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
	if (r->worker_pidfd >= 0) {
		syscall(SYS_pidfd_send_signal, r->worker_pidfd, SIGKILL, NULL, 0);
		close(r->worker_pidfd);
		r->worker_pidfd = -1;
	}
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
	if (r->marker_sha[0] &&
	    (rundir_hash_file(r->dfd, "guard/marker.json", sum, NULL) < 0 || strcmp(sum, r->marker_sha))) {
		teardown_error(r, "the guard's marker changed during the run");
		r->guard_disarmed = true;
	}
	for (size_t i = 0; i < r->nmanifests; i++) {
		json_t *b = json_array_get(r->bundles, i);
		struct bundle_drift drift;
		struct diag d;

		diag_init(&d);
		json_object_set_new(b, "verified_after",
				    json_boolean(bundle_verify(json_string_value(json_object_get(b, "path")),
							       r->manifests[i], &d, &drift) == 0));
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

static bool uses(const struct strv *argv, const char *el)
{
	for (size_t i = 0; i < argv->n; i++)
		if (!strcmp(argv->v[i], el))
			return true;
	return false;
}

/* agent.kind names a descriptor: find it, and check the task against it. */
static int resolve_agent(struct run *r)
{
	struct strv dirs = { 0 };
	bool wants_cmd;
	int err;

	if ((err = agent_search_dirs(r->self, r->o->agents_dir, &dirs)) < 0)
		return err;
	err = agent_find(&dirs, r->t.agent_kind, &r->d, &r->desc);
	if (err == -ENOENT) {
		struct buf b;

		buf_init(&b, 0);
		for (size_t i = 0; i < dirs.n; i++)
			buf_printf(&b, "%s%s", i ? ", " : "", dirs.v[i]);
		diag_error(&r->d, "%s: agent.kind: no agent descriptor '%s' (searched %s; see proctor agents list)",
			   r->t.file, r->t.agent_kind, b.data ? b.data : "nothing");
		buf_free(&b);
	}
	strv_free(&dirs);
	if (err < 0)
		return err;
	r->desc_ok = true;
	wants_cmd = uses(&r->desc.argv, "{task_command}") || uses(&r->desc.argv_resume, "{task_command}");
	if (wants_cmd && !r->t.argv.n)
		diag_error(&r->d, "%s: agent.command: required by the '%s' agent (%s)", r->t.file, r->desc.name,
			   r->desc.file);
	if (!wants_cmd && r->t.argv.n)
		diag_error(&r->d,
			   "%s: agent.command: the '%s' agent runs its own program; give extra arguments in agent.args",
			   r->t.file, r->desc.name);
	if (r->t.args.n && !uses(&r->desc.argv, "{task_args}"))
		diag_error(&r->d, "%s: agent.args: the '%s' agent takes no extra arguments", r->t.file, r->desc.name);
	if (r->t.guard_harness == TASK_GUARD_DEFAULT)
		r->t.guard_harness = r->desc.guard_harness;
	else if (r->t.guard_harness >= 0 && r->desc.guard_harness >= 0 && r->t.guard_harness != r->desc.guard_harness)
		diag_error(&r->d, "%s: guard.harness: the '%s' agent speaks %s hooks", r->t.file, r->desc.name,
			   harness_name((enum harness)r->desc.guard_harness));
	return r->d.errors ? -EINVAL : 0;
}

/* The agent's paths, and the directories its descriptor wants made (beneath home/, tmp/ or the
 * workspace only, owned by the agent). */
static int agent_paths(struct run *r)
{
	struct agent_vars v = { 0 };

	r->ws_path = run_path(r, "workspace");
	r->home_path = run_path(r, "home");
	r->tmp_path = run_path(r, "tmp");
	if (r->t.guard_harness >= 0) {
		r->guard_settings = run_path(r, "guard/settings.json");
		r->guard_marker = run_path(r, "guard/marker.json");
	}
	for (size_t i = 0; i < r->t.plugins.n; i++) {
		char rel[64], *p;

		snprintf(rel, sizeof(rel), "bundles/plugin-%zu", i);
		if (!(p = run_path(r, rel)) || strv_push(&r->plugin_dirs, p) < 0) {
			free(p);
			return -ENOMEM;
		}
		free(p);
	}
	if (!r->ws_path || !r->home_path || !r->tmp_path)
		return -ENOMEM;
	v.workspace = r->ws_path;
	v.home = r->home_path;
	v.tmp = r->tmp_path;
	for (size_t i = 0; i < r->desc.dirs.n; i++) {
		char *dir = NULL, *rel;
		const char *why;
		int err = agent_expand(r->desc.dirs.v[i], &v, &dir, &why);

		if (err == 0 &&
		    (strstr(dir, "/..") || strncmp(dir, r->dir, strlen(r->dir)) || dir[strlen(r->dir)] != '/'))
			err = -EINVAL;
		/* cppcheck-suppress nullPointerArithmeticRedundantCheck ; agent_expand() set dir (err == 0) */
		rel = err == 0 ? dir + strlen(r->dir) + 1 : NULL;
		if (err == 0 && strncmp(rel, "home/", 5) && strncmp(rel, "tmp/", 4) && strncmp(rel, "workspace/", 10))
			err = -EINVAL;
		/* never through a link: the workspace holds the task's links as they were staged */
		if (err == 0)
			err = rundir_mkpath(r->dfd, rel, r->uid, r->gid, NULL);
		if (err < 0) {
			run_fail(r, "config_error", RUN_EXIT_INVALID,
				 "%s: dirs[%zu]: %s must lie beneath home/, tmp/ or the "
				 "workspace",
				 r->desc.file, i, dir ? dir : "?");
			free(dir);
			return err;
		}
		free(dir);
	}
	return 0;
}

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
	if ((err = resolve_agent(r)) < 0)
		return err;
	return task_check_paths(&r->t, &r->d);
}

static int open_logs(struct run *r)
{
	if ((r->events_fd = run_open_log(r, "logs/events.jsonl", 0640, 0, 0)) < 0 ||
	    (r->stderr_fd = run_open_log(r, "logs/agent-stderr.log", 0640, 0, 0)) < 0) {
		run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "logs/: cannot create the event logs");
		return -EIO;
	}
	/* Best effort (a filesystem without fallocate has none): events that do not fit are counted
	 * in events_lost either way. */
	(void)fallocate(r->events_fd, FALLOC_FL_KEEP_SIZE, 0, RUN_EVENTS_PREALLOC_BYTES);
	return 0;
}

/* Everything between staging and teardown, in order; stops at the first failure. */
/* A stop signal that came while a step ran: the run ends after that step (and teardown), not
 * after all of staging. The agent's turns watch the signal themselves (await_response). */
static bool interrupted(struct run *r)
{
	struct signalfd_siginfo si;

	if (r->sigfd < 0 || read(r->sigfd, &si, sizeof(si)) != sizeof(si))
		return false;
	run_fail(r, "isolation_failed", RUN_EXIT_INFRA, "interrupted by signal %u", si.ssi_signo);
	return true;
}

static void run_steps(struct run *r, int sigfd)
{
	uint64_t t;

	t = now_mono_ms();
	if (check_ids_free(r) < 0 || take_slot(r) < 0 || interrupted(r) || stage(r) < 0 || open_logs(r) < 0 ||
	    agent_paths(r) < 0 || interrupted(r)) {
		interrupted(r); /* a wait for a slot cut short by one */
		run_phase_end(r, PH_STAGE, t);
		return;
	}
	run_phase_end(r, PH_STAGE, t);
	say(r, "staged %s (agent uid %u, slot %u)", r->dir, (unsigned)r->uid, r->slot);
	t = now_mono_ms();
	if (build_bundles(r) < 0 || link_plugins(r) < 0 || interrupted(r)) {
		run_phase_end(r, PH_BUNDLES, t);
		return;
	}
	run_phase_end(r, PH_BUNDLES, t);
	t = now_mono_ms();
	if (run_start_mockd(r) < 0) {
		run_phase_end(r, PH_MOCKD, t);
		return;
	}
	check_mockd(r);
	run_phase_end(r, PH_MOCKD, t);
	t = now_mono_ms();
	if (run_failed(r) || interrupted(r) || arm_guard(r) < 0) {
		run_phase_end(r, PH_GUARD, t);
		return;
	}
	run_phase_end(r, PH_GUARD, t);
	t = now_mono_ms();
	if (run_spawn_worker(r) < 0 || hello(r) < 0 || interrupted(r)) {
		run_phase_end(r, PH_WORKER, t);
		return;
	}
	run_phase_end(r, PH_WORKER, t);
	say(r, "the cage holds (%s%s); starting the agent", r->pidns ? "pid namespace, " : "",
	    r->no_landlock ? "no Landlock: accepted by --allow-no-landlock" : "Landlock");
	t = now_mono_ms();
	run_turns(r, sigfd);
	run_phase_end(r, PH_AGENT, t);
}

static void run_free(struct run *r)
{
	task_free(&r->t);
	if (r->desc_ok)
		agent_descriptor_free(&r->desc);
	free(r->ws_path);
	free(r->home_path);
	free(r->tmp_path);
	free(r->guard_settings);
	free(r->guard_marker);
	strv_free(&r->plugin_dirs);
	free(r->session_id);
	json_decref(r->turns);
	diag_free(&r->d);
	buf_free(&r->in);
	buf_free(&r->events_out);
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
	for (int i = 0; i < RUN_SLOT_IDS; i++)
		if (r->slot_fds[i] >= 0)
			close(r->slot_fds[i]); /* releases the slot */
	if (r->dfd >= 0)
		close(r->dfd);
}

int run_task(const struct run_opts *o, struct diag *ret_diag, char **ret_dir)
{
	struct run r = { .o = o,
			 .dfd = -1,
			 .slot_fds = { -1, -1, -1, -1 },
			 .mockd_pidfd = -1,
			 .mockd_status = -1,
			 .sock = -1,
			 .worker_pidfd = -1,
			 .events_fd = -1,
			 .stderr_fd = -1,
			 .left_behind = -1 };
	sigset_t stop, old;
	int sigfd, code, subreaper = 0;
	uint64_t t;

	r.t0 = t = now_mono_ms();
	r.started_ms = now_epoch_ms();
	diag_init(&r.d);
	buf_init(&r.in, FRAME_HEADER_LEN + FRAME_MAX_BODY);
	r.isolation = json_object();
	r.bundles = json_array();
	r.teardown_errors = json_array();
	r.turns = json_array();
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigprocmask(SIG_BLOCK, &stop, &old);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN); /* a file past an inherited RLIMIT_FSIZE: a short write, not death */
	sigfd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
	r.sigfd = sigfd;
	r.stop = stop;
	if (validate(&r) < 0)
		run_fail(&r, "config_error", RUN_EXIT_INVALID, "the task is invalid (%zu errors)", r.d.errors);
	run_phase_end(&r, PH_VALIDATE, t);
	if (make_rundir(&r) < 0) {
		code = RUN_EXIT_INVALID;
		goto out;
	}
	save_task(&r);
	/* The agent's orphans (without a pid namespace: a daemon it double-forked) become our
	 * children rather than the host init's, so the sweep's kills leave no zombie behind. */
	prctl(PR_GET_CHILD_SUBREAPER, &subreaper);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (!run_failed(&r) && check_reachable(&r) == 0)
		run_steps(&r, sigfd);
	teardown(&r);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	prctl(PR_SET_CHILD_SUBREAPER, subreaper);
	/* result.json takes the reserve's place (its blocks); whatever is left of it goes */
	if (run_write_result(&r) < 0 && r.exit_code == RUN_EXIT_FINAL) {
		diag_error(&r.d, "%s/result.json could not be written", r.dir);
		r.exit_code = RUN_EXIT_INFRA;
	}
	give_back_reserve(&r);
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
