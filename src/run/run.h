/* SPDX-License-Identifier: MIT */
/* run.h: `proctor run` as a library: one task, start to finish (ARCHITECTURE.md section 8).
 * orchestrate.c owns the sequence and the processes, result.c what is recorded about them
 * (doc/RESULT.md). Nothing here prints: progress lines go to `log` when it is set. */
#ifndef PROCTOR_RUN_RUN_H
#define PROCTOR_RUN_RUN_H

#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../agent/descriptor.h"
#include "../bundle/manifest.h"
#include "../lib/buf.h"
#include "../lib/diag.h"
#include "../lib/util.h"
#include "frame.h"
#include "task.h"

#define RUN_EXIT_FINAL 0
#define RUN_EXIT_INFRA 3
#define RUN_EXIT_INVALID 4

#define RUN_READY_MS 10000u     /* mockd's readiness byte */
#define RUN_HELLO_MS 10000u     /* the worker's hello */
#define RUN_STOP_MS 3000u       /* the worker's answer to stop */
#define RUN_STOP_GRACE_MS 1000u /* TERM to KILL for the agent's group */
#define RUN_REAP_MS 3000u       /* the uid sweep's deadline */
#define RUN_MAX_EVENTS_BYTES (512ull << 20)
#define RUN_MAX_STDERR_BYTES (16ull << 20)
/* Event lines are written in batches: one write per read of the channel, or sooner once a batch
 * passes this much. */
#define RUN_EVENTS_BATCH_BYTES (256u << 10)
#define RUN_MAX_DENIAL_LOG_BYTES (16u << 20)
#define RUN_MAX_JOURNAL_BYTES (256u << 20)
/* Disk set aside when the run starts (RUN/.reserve, root's); after teardown result.json is
 * written over it and takes its name, so an agent that fills the filesystem cannot keep
 * result.json from being written. */
#define RUN_RESERVE_BYTES (8u << 20)
/* Allocated ahead for events.jsonl (beyond its end: FALLOC_FL_KEEP_SIZE), so the events of an
 * agent that fills the filesystem are still recorded up to this much. */
#define RUN_EVENTS_PREALLOC_BYTES (4u << 20)

enum run_phase { PH_VALIDATE, PH_STAGE, PH_BUNDLES, PH_MOCKD, PH_GUARD, PH_WORKER, PH_AGENT, PH_TEARDOWN, PH_N };

/* The suite a task came from (proctor run --suite), recorded in result.json as "suite". */
struct run_suite_ref {
	const char *path;       /* as given */
	unsigned long index;    /* 0-based */
	const char *index_from; /* "--index", "JOB_COMPLETION_INDEX" or "SLURM_ARRAY_TASK_ID" */
	size_t tasks;           /* how many the suite has */
	const char *id;         /* the task's id as the suite read it (OUT/<id>/), valid or the task
				 * would not run: result.json's task_id even when the task fails to load */
};

struct run_opts {
	const char *task_file;
	const struct run_suite_ref *suite; /* NULL: a single task */
	const char *agents_dir;            /* --agents: searched last (doc/AGENTS.md) */
	const char *out;                   /* NULL: runs/<id>-<UTC time> */
	bool allow_no_landlock;            /* --allow-no-landlock: run where the kernel has none */
	void (*log)(const char *line);
};

struct run {
	const struct run_opts *o;
	struct task t;
	bool task_ok;
	struct agent_descriptor desc;
	bool desc_ok;
	struct diag d; /* task and staging errors, for the user */
	char *dir;     /* absolute */
	int dfd;
	char self[PATH_MAX], shim[PATH_MAX];
	unsigned slot;
	int slot_fds[4]; /* the slot's id locks (RUN_SLOT_IDS) */
	bool slot_taken;
	uid_t uid, muid;
	gid_t gid, rgid;
	int64_t started_ms;
	uint64_t t0, ms[PH_N];
	/* the outcome: the first failure wins, teardown_failed overrides */
	const char *status;
	char reason[1024];
	char proto_why[256]; /* what was wrong with a frame */
	int exit_code;
	/* mockd */
	pid_t mockd;
	int mockd_pidfd;
	int mockd_status; /* -1 while running */
	/* the worker: holder is our child (root, waits for a worker in a pid namespace) */
	pid_t holder, worker;
	int worker_pidfd; /* signals go through it: the worker's pid is not our child's */
	bool pidns, own_proc;
	bool no_landlock; /* the kernel has none and --allow-no-landlock accepted that */
	int pidns_err, own_proc_err;
	int sock;
	int sigfd;     /* TERM, INT and HUP, blocked and read here: they stop the run */
	sigset_t stop; /* those signals */
	unsigned char nonce[FRAME_NONCE_LEN];
	struct buf in;
	int next_id;
	bool worker_gone, stop_sent;
	json_t *hello;  /* the worker's hello result */
	size_t nprobes; /* paths the worker was asked to fail to open */
	bool guard_disarmed;
	/* the agent's view, as absolute paths */
	char *ws_path, *home_path, *tmp_path, *guard_settings, *guard_marker;
	struct strv plugin_dirs;
	/* the agent */
	json_t *agent_argv;
	json_t *turns; /* one record per turn */
	char *session_id;
	bool last_turn_timed_out;
	pid_t agent_pid;
	bool agent_started, agent_exited, timed_out;
	json_t *agent_exit_code, *agent_signal;
	unsigned long long events, events_bytes, events_lost, stderr_bytes;
	bool events_broken;    /* a partial line could not be cut off: nothing more is appended */
	struct buf events_out; /* lines not yet written: what one read of the channel brought */
	unsigned long long events_out_lines;
	int64_t ts_ms; /* the last event's time, and its text (formatted once per millisecond) */
	char ts[TIME_RFC3339_MS_SIZE];
	int events_fd, stderr_fd;
	long left_behind;
	/* records */
	json_t *isolation, *bundles, *teardown_errors;
	struct manifest *manifests[TASK_MAX_PLUGINS];
	size_t nmanifests;
	struct reap_summary {
		long survivors[16];
		size_t nsurvivors;
		bool ran;
	} reap;
	bool socket_removed;
	char marker_sha[65];
};

/* Run the task; returns proctor run's exit code (0, 3 or 4). *ret_diag (owned: diag_free) holds
 * the task's and staging's errors for the user; *ret_dir (owned, or NULL) names the run
 * directory when one was made. */
int run_task(const struct run_opts *o, struct diag *ret_diag, char **ret_dir);

/* spawn.c: the processes and the channel (internal to src/run). */
char *run_path(const struct run *r, const char *rel);
void run_phase_end(struct run *r, enum run_phase ph, uint64_t start);
bool run_failed(const struct run *r);
void run_child_signals(void);
int run_open_log(struct run *r, const char *rel, mode_t mode, uid_t uid, gid_t gid);
void run_log_tail(struct run *r, const char *rel, char *out, size_t n);
int run_start_mockd(struct run *r);
int run_spawn_worker(struct run *r);
int run_send(struct run *r, const char *method, json_t *params);
/* Read what the worker sent and handle every whole frame: 1 when the response to request
 * `want` is in *ret; 0 otherwise; -EPIPE when the worker is gone; -EPROTO on a bad frame. */
int run_pump(struct run *r, int want, json_t **ret);
/* Send a request and wait up to `ms` for its response (events keep flowing meanwhile). */
int run_call(struct run *r, const char *method, json_t *params, unsigned ms, json_t **ret);
void run_worker_lost(struct run *r, int err, const char *during);

/* result.c */
void run_layer(struct run *r, const char *name, const char *state, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The first failure decides the status (teardown_failed aside). */
void run_fail(struct run *r, const char *status, int exit_code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
json_t *run_result_json(struct run *r);
int run_write_result(struct run *r);

#endif
